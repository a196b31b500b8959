package errormon_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch/cloudwatchfake"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The monitor through its real adapters, each against its fake: the
// Convex source (HTTP, deploy key, long poll) against convexfake, the
// CloudWatch source (the AWS SDK's client and paginator) against
// cloudwatchfake, and GitHub through github.ForTenants and the REST client
// (go-github) against githubfake. The store is SQLite and the outbox,
// issues and missions are wired as main wires them.

const (
	adapterKey   = "prod:happy-otter-123|eyJ2MiI6ImFkYXB0ZXJzLXNlY3JldC1kZXBsb3kta2V5In0="
	adapterToken = "ghs_adapterstest0123456789abcdef"
	adapterRepo  = "acme/app"
	logGroup     = "/aws/lambda/checkout"
	keyEnvVar    = "VP_DEPLOY_KEY_APP"
)

// realEnv is the monitor with its real adapters in front of fakes.
type realEnv struct {
	st       store.Store
	mon      *errormon.Service
	issues   *issue.Service
	missions *mission.Service
	outbox   *outbox.Outbox
	convex   *convexfake.Server
	cw       *cloudwatchfake.Server
	cwAPI    *cwClient
	gh       *githubfake.Server
	logs     *lockedBuffer
	clock    *clock
}

type realOpts struct {
	convex convexfake.Options
	cw     cloudwatchfake.Options
	// keys are the deploy keys by env var name (default: keyEnvVar's).
	keys keyMap
	mon  func(*errormon.Options)
	// ghTransport wraps the transport to the fake GitHub (to lose an
	// answer, say).
	ghTransport func(http.RoundTripper) http.RoundTripper
}

func newRealEnv(t testing.TB, ro realOpts) *realEnv {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	e := &realEnv{st: st, logs: &lockedBuffer{}, clock: &clock{}}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ro.convex.Key = adapterKey
	e.convex = convexfake.New(t, ro.convex)
	if ro.keys == nil {
		ro.keys = keyMap{keyEnvVar: {Key: adapterKey}}
	}
	// These tests' keys are the fake Convex's: bound to its URL.
	for name, k := range ro.keys {
		if k.URL == "" {
			k.URL = e.convex.URL()
			ro.keys[name] = k
		}
	}
	e.cw = cloudwatchfake.New(t, ro.cw)
	e.cw.CreateLogGroup(logGroup)
	e.cwAPI = &cwClient{api: e.cw.Client()}
	e.gh = githubfake.New(t)
	e.gh.AllowToken(adapterToken)
	e.gh.AddRepo(adapterRepo)
	var hc *http.Client
	if ro.ghTransport != nil {
		hc = &http.Client{Transport: ro.ghTransport(http.DefaultTransport), Timeout: 10 * time.Second}
	}
	client, err := github.New(github.Options{BaseURL: e.gh.URL(), HTTPClient: hc,
		Limiter: github.NewLimiter(github.LimiterOptions{Store: st, Spacing: -1})}) // pacing is the limiter's tests' subject
	if err != nil {
		t.Fatal(err)
	}
	gh := github.ForTenants{Client: client, Credentials: staticCreds{Token: adapterToken}}

	// The fake Convex listens on http://127.0.0.1: allowed as an operator
	// would allow a local deployment.
	loopback := loopbackPolicy(t)
	a := apptest.New(t, apptest.Options{Ports: app.Ports{Store: st, Logger: log, Egress: loopback, GitHub: gh,
		ErrorSources: map[string]source.Source{
			errormon.SourceConvex:     convex.New(convex.Options{Egress: loopback}),
			errormon.SourceCloudWatch: cloudwatch.New(cloudwatch.Options{Client: e.cwAPI, Interval: time.Millisecond}),
		},
		DeployKeys: ro.keys, LogGroups: errormon.StaticLogGroups{Tenants: map[string][]string{tenant: {logGroup}}},
		TuneErrors: func(o *errormon.Options) {
			o.Now = e.clock.Now // the monitor's clock only
			if ro.mon != nil {
				ro.mon(o)
			}
		}}})
	e.mon, e.issues, e.missions, e.outbox = a.Errors, a.Issues, a.Missions, a.Outbox
	return e
}

type staticCreds github.Credentials

func (c staticCreds) Credentials(context.Context, string) (github.Credentials, error) {
	return github.Credentials(c), nil
}

// lockedBuffer is the logs' sink, read while handlers may still write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// clock is the monitor's clock: the real time plus a shift that a test
// moves forward (past a backoff).
type clock struct {
	mu    sync.Mutex
	shift time.Duration
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return time.Now().Add(c.shift) }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); defer c.mu.Unlock(); c.shift += d }

// cwClient is the SDK's client with a hook before each request (numbered
// from 1): to script a throttle in the middle of a scan, or hold one.
type cwClient struct {
	api cloudwatch.FilterLogEventsAPI

	mu     sync.Mutex
	calls  int
	before func(call int)
}

func (c *cwClient) FilterLogEvents(ctx context.Context, in *cloudwatchlogs.FilterLogEventsInput, optFns ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.FilterLogEventsOutput, error) {
	c.mu.Lock()
	c.calls++
	n, before := c.calls, c.before
	c.mu.Unlock()
	if before != nil {
		before(n)
	}
	return c.api.FilterLogEvents(ctx, in, optFns...)
}

func (c *cwClient) setBefore(f func(int)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.before = f
}

func (e *realEnv) addConvex(t testing.TB, name, keyVar string) {
	t.Helper()
	if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: name, DeploymentURL: e.convex.URL(),
		DeployKeyEnvVar: keyVar, GitHubRepo: adapterRepo, Orchestrator: "sigma"}); err != nil {
		t.Fatal(err)
	}
}

func (e *realEnv) addCloudWatch(t testing.TB, name string) {
	t.Helper()
	if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: name, Source: errormon.SourceCloudWatch,
		LogGroups: []string{logGroup}, GitHubRepo: adapterRepo, Orchestrator: "sigma"}); err != nil {
		t.Fatal(err)
	}
}

func (e *realEnv) scan(t testing.TB, name string) int {
	t.Helper()
	n, err := e.mon.Scan(ctx(), tenant, name)
	if err != nil {
		t.Fatalf("scan of %s: %v", name, err)
	}
	return n
}

// drain runs the outbox until nothing is due, and checks that nothing was
// dead-lettered.
func (e *realEnv) drain(t testing.TB) {
	t.Helper()
	for range 20 {
		n, err := e.outbox.Drain(ctx())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			dead, err := e.outbox.DeadLetters(ctx(), outbox.DeadQuery{})
			if err != nil {
				t.Fatal(err)
			}
			if len(dead) != 0 {
				t.Fatalf("dead letters: %+v", dead)
			}
			return
		}
	}
	t.Fatal("the outbox does not drain")
}

// groupsOf lists a deployment's groups through list_errors, by function.
func (e *realEnv) groupsOf(t testing.TB, dep string) map[string]errormon.Group {
	t.Helper()
	out := map[string]errormon.Group{}
	for cursor := ""; ; {
		page, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{Deployment: dep, Params: listing.Params{Cursor: cursor, Fields: "full"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			g := it.(errormon.Group)
			if _, dup := out[g.Function]; dup {
				t.Fatalf("deployment %s has two groups for %s: %+v", dep, g.Function, g)
			}
			out[g.Function] = g
		}
		if cursor = page.NextCursor; cursor == "" {
			return out
		}
	}
}

func (e *realEnv) status(t testing.TB, dep string) errormon.DeploymentStatus {
	t.Helper()
	list, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{Deployment: dep})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Deployments) != 1 {
		t.Fatalf("list_errors shows %d deployments for %s", len(list.Deployments), dep)
	}
	return list.Deployments[0]
}

func marker(g errormon.Group) string { return "<!-- vantagepeers:error:" + g.ID + " -->" }

// checkFiled checks that the fake GitHub holds exactly one [Auto] issue per
// group, carrying its marker, its title, both labels and its count as
// filed (count[function]), linked from the group; and that each issue's
// protocol started: one Investigating comment, a mission of 14 tasks.
func (e *realEnv) checkFiled(t testing.TB, groups map[string]errormon.Group, count map[string]int64) {
	t.Helper()
	issues := e.gh.Issues(adapterRepo)
	for fn, g := range groups {
		var found []githubfake.FakeIssue
		for _, is := range issues {
			if strings.Contains(is.Body, marker(g)) {
				found = append(found, is)
			}
		}
		if len(found) != 1 {
			t.Errorf("%s: %d issues carry the marker of group %s, want 1", fn, len(found), g.ID)
			continue
		}
		is := found[0]
		if !strings.HasPrefix(is.Title, "[Auto] ") || is.Title != errormon.Title(g) || !slices.Equal(is.Labels, []string{"bug", "auto-detected"}) ||
			is.State != "open" || is.User != githubfake.Login {
			t.Errorf("%s: issue %d %q labels %v state %s by %s; want %q with bug, auto-detected", fn, is.Number, is.Title, is.Labels, is.State, is.User, errormon.Title(g))
		}
		if want := fmt.Sprintf("| occurrences | %d |", count[fn]); !strings.Contains(is.Body, want) || !strings.Contains(is.Body, "| function | `"+g.Function+"` |") {
			t.Errorf("%s: issue %d's body lacks %q:\n%s", fn, is.Number, want, is.Body)
		}
		if g.IssueNumber != is.Number || g.IssueRepo != adapterRepo || g.Status != errormon.StatusOngoing || !strings.HasSuffix(g.IssueURL, fmt.Sprintf("/issues/%d", is.Number)) {
			t.Errorf("%s: group %+v not linked to issue %d", fn, g, is.Number)
		}
		investigating := 0
		for _, c := range e.gh.Comments(adapterRepo, is.Number) {
			if strings.HasPrefix(c.Body, "Investigating") {
				investigating++
			}
		}
		if investigating != 1 {
			t.Errorf("%s: issue %d has %d Investigating comments, want 1", fn, is.Number, investigating)
		}
		i, err := e.issues.GetIssue(ctx(), admin(tenant), issue.IssueRef{Repo: adapterRepo, IssueNumber: is.Number})
		if err != nil || i.MissionID == "" || i.Orchestrator != "sigma" {
			t.Errorf("%s: issue %d in VantagePeers: %+v, %v; want its IRP started for sigma", fn, is.Number, i, err)
			continue
		}
		if m, err := e.missions.GetMission(ctx(), admin(tenant), mission.MissionRef{MissionID: i.MissionID}); err != nil || len(m.Tasks) != 14 {
			t.Errorf("%s: mission %s has %d tasks (%v), want 14", fn, i.MissionID, len(m.Tasks), err)
		}
	}
	auto := 0
	for _, is := range issues {
		if strings.HasPrefix(is.Title, "[Auto] ") {
			auto++
		}
	}
	if auto != len(groups) {
		t.Errorf("the fake GitHub holds %d [Auto] issues for %d groups", auto, len(groups))
	}
}

func (e *realEnv) checkCounts(t testing.TB, dep string, want map[string]int64) map[string]errormon.Group {
	t.Helper()
	groups := e.groupsOf(t, dep)
	got := map[string]int64{}
	for fn, g := range groups {
		got[fn] = g.Count
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: counts by function %v, want %v", dep, got, want)
	}
	return groups
}

// Convex's side: three causes whose ids, numbers and line numbers vary
// with each occurrence.

var convexFunctions = []string{"messages:send", "orders:get", "ai:run"}

func convexFailure(c, k int, at time.Time) convexfake.Entry {
	e := convexfake.Entry{Identifier: convexFunctions[c], ExecutionID: fmt.Sprintf("exec-%d-%d-%d", c, k, at.UnixNano()),
		RequestID: fmt.Sprintf("req-%08x", c*100000+k), Time: at}
	switch c {
	case 0:
		e.Error = fmt.Sprintf("Uncaught TypeError: Cannot read properties of undefined (reading 'body')\n    at handler (../convex/messages.ts:%d:22)\n    at async invokeFunction (../convex/_generated/server.js:%d:3)", 14+k%5, 100+k)
	case 1:
		e.UdfType = "Query"
		e.Error = fmt.Sprintf("Uncaught Error: Order %d not found for user 3f0c1a2b-%04d-2222-3333-444455556666\n    at getOrder (../convex/orders.ts:%d:9)", 1000+7*k, k, 30+k%3)
	default:
		e.UdfType = "Action"
		e.Error = fmt.Sprintf("Uncaught Error: Request to https://api.example.com/v1/items/%d timed out after %dms\n    at fetchItem (../convex/ai.ts:%d:15)", k, 1500+k, 40+k%4)
	}
	return e
}

// convexBatch logs counts[c] occurrences of each cause c, interleaved
// with successes and Progress entries (which are not errors), from start.
func convexBatch(counts []int, from int, start time.Time) []convexfake.Entry {
	var es []convexfake.Entry
	at := start
	next := func() time.Time { at = at.Add(time.Millisecond); return at }
	for k := 0; k < slices.Max(counts); k++ {
		for c, n := range counts {
			if k < n {
				es = append(es, convexFailure(c, from+k, next()))
			}
		}
		if k%4 == 0 {
			es = append(es,
				convexfake.Entry{Identifier: "messages:list", UdfType: "Query", ExecutionID: fmt.Sprintf("ok-%d-%d", from, k), Time: next()},
				convexfake.Entry{Kind: "Progress", Identifier: "ai:run", UdfType: "Action", ExecutionID: fmt.Sprintf("act-%d-%d", from, k),
					LogLines: []string{"[ERROR] Uncaught Error: not a failure, a log line"}, Time: next()})
		}
	}
	return es
}

func TestOneIssuePerCauseAgainstFakeConvexAndFakeGitHub(t *testing.T) {
	e := newRealEnv(t, realOpts{convex: convexfake.Options{Hold: 300 * time.Millisecond}})
	e.addConvex(t, "app", keyEnvVar)
	e.convex.Append(convexBatch([]int{40, 25, 12}, 0, time.Now().Add(-10*time.Minute))...)
	if n := e.scan(t, "app"); n != 77 {
		t.Fatalf("scanned %d events, want the 77 failed completions", n)
	}
	e.drain(t)
	filed := map[string]int64{"messages:send": 40, "orders:get": 25, "ai:run": 12}
	groups := e.checkCounts(t, "app", filed)
	e.checkFiled(t, groups, filed)
	for fn, g := range groups {
		if g.Type == "" || g.Stack == "" || !strings.Contains(g.Raw, `"executionId"`) {
			t.Errorf("%s: group %+v lacks its type, stack or raw record", fn, g)
		}
	}

	// A failing answer whose body echoes the key (as a proxy might): the
	// failure is visible, the key is in no error text.
	e.convex.Script(convexfake.Answer{Status: 502, Body: `{"message":"upstream refused Authorization: Convex ` + adapterKey + `"}`})
	_, err := e.mon.Scan(ctx(), tenant, "app")
	if !vp.IsKind(err, vp.KindUnavailable) {
		t.Fatalf("scan through a 502: %v, want unavailable", err)
	}
	st := e.status(t, "app")
	if st.Status != "failing" || !strings.Contains(st.LastError, "502") {
		t.Fatalf("after a 502: %+v", st)
	}
	for _, text := range []string{err.Error(), st.LastError} {
		if strings.Contains(text, adapterKey) || strings.Contains(text, "eyJ2") {
			t.Fatalf("the deploy key is in an error text: %s", text)
		}
	}

	// A second batch of the same causes: counted, no new issue.
	e.convex.Append(convexBatch([]int{5, 5, 5}, 1000, time.Now().Add(-time.Minute))...)
	if n := e.scan(t, "app"); n != 15 {
		t.Fatalf("second scan read %d events, want 15", n)
	}
	e.drain(t)
	groups = e.checkCounts(t, "app", map[string]int64{"messages:send": 45, "orders:get": 30, "ai:run": 17})
	e.checkFiled(t, groups, filed) // the bodies say the count they were filed with
	if st := e.status(t, "app"); st.Status != "ok" || st.EventsScanned != 92 || st.LastError != "" {
		t.Fatalf("after the second scan: %+v", st)
	}
	for _, r := range e.convex.Requests() {
		if !r.Authorized {
			t.Fatalf("a request to the fake Convex was not authorized: %+v", r)
		}
	}
	logs := e.logs.String()
	if !strings.Contains(logs, "a source failed") {
		t.Fatal("the 502 was not logged")
	}
	for _, secret := range []string{adapterKey, "eyJ2", adapterToken} {
		if strings.Contains(logs, secret) {
			t.Fatalf("a secret (%.8s…) is in the logs", secret)
		}
	}
}

func TestLongPollEndsWithinTheScanBudgetAgainstFakeConvex(t *testing.T) {
	const budget = 3 * time.Second
	e := newRealEnv(t, realOpts{convex: convexfake.Options{Hold: convexfake.DefaultHold}, // a minute, as Convex holds it
		mon: func(o *errormon.Options) { o.ScanBudget = budget }})
	e.addConvex(t, "app", keyEnvVar)
	began := time.Now()
	n, err := e.mon.Scan(ctx(), tenant, "app")
	took := time.Since(began)
	if err != nil || n != 0 {
		t.Fatalf("a scan of a quiet deployment: %d events, %v", n, err)
	}
	if took >= budget || took < budget/3 {
		t.Fatalf("the scan took %v: want the long poll held, and cut within the budget of %v", took, budget)
	}
	t.Logf("the held long poll was cut after %v", took.Round(time.Millisecond))
	if st := e.status(t, "app"); st.Status != "ok" || st.LastError != "" || st.Failures != 0 {
		t.Fatalf("after a quiet scan: %+v", st)
	}
	if reqs := e.convex.Requests(); len(reqs) != 1 || !reqs[0].Authorized {
		t.Fatalf("requests %+v, want one authorized long poll", reqs)
	}

	// An error logged while a scan waits ends the wait at once.
	go func() {
		time.Sleep(300 * time.Millisecond)
		e.convex.Append(convexFailure(0, 1, time.Now()))
	}()
	began = time.Now()
	if n := e.scan(t, "app"); n != 1 {
		t.Fatalf("the woken scan read %d events, want 1", n)
	}
	if took := time.Since(began); took >= budget-time.Second {
		t.Fatalf("the woken scan took %v", took)
	}
	e.drain(t)
	e.checkFiled(t, e.checkCounts(t, "app", map[string]int64{"messages:send": 1}), map[string]int64{"messages:send": 1})
}

// CloudWatch's side: Lambda's Node.js error lines for three causes, and
// lines that match the filter pattern without being errors.

var cwFunctions = []string{"POST /pay", "checkout", "GET /cart/<int>"}

func cwFailure(c, k int) string {
	req := fmt.Sprintf("3f0c1a2b-%04d-2222-3333-4444%08d", k%10000, c)
	switch c {
	case 0:
		return fmt.Sprintf(`{"level":"ERROR","msg":"charge failed","err":"card %d declined","route":"POST /pay","requestId":"%s"}`, 4000+k, req)
	case 1:
		return "2024-05-01T12:00:00.000Z\t" + req + "\tERROR\tInvoke Error \t" +
			fmt.Sprintf(`{"errorType":"TypeError","errorMessage":"Cannot read properties of undefined (reading 'id')","stack":["TypeError: Cannot read properties of undefined (reading 'id')","    at Runtime.handler (file:///var/task/index.mjs:%d:22)"]}`, 3+k%4)
	default:
		return fmt.Sprintf(`{"level":"ERROR","msg":"cart %d not found","route":"GET /cart/%d","requestId":"%s"}`, 100+k, 100+k, req)
	}
}

func (e *realEnv) putCloudWatch(counts []int, start time.Time) {
	at := start
	for k := 0; k < slices.Max(counts); k++ {
		for c, n := range counts {
			if k < n {
				at = at.Add(time.Millisecond)
				e.cw.Put(logGroup, cloudwatchfake.Event{Timestamp: at, Message: cwFailure(c, k)})
			}
		}
		if k%3 == 0 {
			at = at.Add(time.Millisecond)
			e.cw.Put(logGroup,
				cloudwatchfake.Event{Timestamp: at, Message: fmt.Sprintf(`{"level":"INFO","msg":"retry %d of ERROR budget"}`, k)},
				cloudwatchfake.Event{Timestamp: at, Message: "REPORT RequestId: 3f0c1a2b-1111-2222-3333-444455556666 Duration: 12.3 ms ERROR"})
		}
	}
}

func TestPagesAndThrottlingCountEachEventOnceAgainstFakeCloudWatchLogsAndFakeGitHub(t *testing.T) {
	counts := []int{20, 14, 9}
	want := map[string]int64{cwFunctions[0]: 20, "checkout": 14, cwFunctions[2]: 9}
	for _, tc := range []struct {
		name      string
		throttles int
	}{
		{"one throttle: the scan goes on", 1},
		{"two throttles: a rate-limited failure, backed off", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newRealEnv(t, realOpts{cw: cloudwatchfake.Options{PageSize: 7, EmptyPages: 2}})
			e.addCloudWatch(t, "checkout")
			e.putCloudWatch(counts, time.Now().Add(-10*time.Minute))
			// Requests 1, 2 and 4, 5 are empty pages with a token, 3 a page
			// of events; the sixth, the second page of events, is throttled.
			e.cwAPI.setBefore(func(n int) {
				if n == 6 {
					e.cw.Throttle(tc.throttles)
				}
			})
			n, err := e.mon.Scan(ctx(), tenant, "checkout")
			st := e.status(t, "checkout")
			switch tc.throttles {
			case 1:
				if err != nil || n != 43 || st.Status != "ok" {
					t.Fatalf("scan through one throttle: %d events, %v, %+v; want all 43", n, err, st)
				}
			case 2:
				if d, ok := vp.RetryAfter(err); !ok || d != cloudwatch.ThrottleRetryAfter {
					t.Fatalf("scan through two throttles: %v; want rate limited", err)
				}
				if n == 0 || n >= 43 {
					t.Fatalf("the throttled scan read %d events: want what it read before the throttle kept", n)
				}
				wait := time.UnixMilli(st.NextScanAt).Sub(e.clock.Now())
				if st.Status != "failing" || !strings.Contains(st.LastError, "ThrottlingException") || wait < 2*time.Minute {
					t.Fatalf("after the throttle: %+v (next scan in %v); want failing, backed off", st, wait)
				}
				// Backed off: the next pass leaves it alone...
				calls := len(e.cw.Requests())
				if k, err := e.mon.ScanAll(ctx(), tenant); err != nil || k != 0 || len(e.cw.Requests()) != calls {
					t.Fatalf("a pass during the backoff read %d events (%v) in %d requests", k, err, len(e.cw.Requests())-calls)
				}
				// ...and the one after the backoff reads the rest.
				e.clock.Add(wait + time.Second)
				k, err := e.mon.ScanAll(ctx(), tenant)
				if err != nil || n+k != 43 {
					t.Fatalf("the scan after the backoff read %d events (%v); with the first %d, want 43", k, err, n)
				}
			}
			// Once more over the same window (the overlap): nothing new.
			if k := e.scan(t, "checkout"); k != 0 {
				t.Fatalf("a rescan read %d events again", k)
			}
			e.drain(t)
			e.checkFiled(t, e.checkCounts(t, "checkout", want), want)
			if st := e.status(t, "checkout"); st.Status != "ok" || st.EventsScanned != 43 {
				t.Fatalf("at the end: %+v", st)
			}
			empty, full, throttled := 0, 0, 0
			for _, r := range e.cw.Requests() {
				switch {
				case r.Code == "ThrottlingException":
					throttled++
				case r.Status == 200 && r.Events == 0:
					empty++
				case r.Status == 200:
					full++
				}
			}
			if throttled != tc.throttles || empty < 2*full || full < 43/7 {
				t.Fatalf("%d empty pages, %d pages of events, %d throttled: the scan did not go through the pages as planned", empty, full, throttled)
			}
		})
	}
}

func TestConcurrentScansCountEachEventOnceAgainstFakeConvexAndFakeCloudWatchLogs(t *testing.T) {
	// Inclusive: the fake Convex also answers the entry at the cursor, as
	// an overlapping server would; CloudWatch's scans overlap by design.
	e := newRealEnv(t, realOpts{convex: convexfake.Options{Hold: 300 * time.Millisecond, Inclusive: true}, cw: cloudwatchfake.Options{PageSize: 5}})
	e.addConvex(t, "app", keyEnvVar)
	e.addCloudWatch(t, "checkout")
	e.convex.Append(convexBatch([]int{10, 10, 10}, 0, time.Now().Add(-5*time.Minute))...)
	e.putCloudWatch([]int{10, 10, 10}, time.Now().Add(-5*time.Minute))
	// The first request of each source is slow, so that the scans overlap.
	e.convex.Script(convexfake.Answer{Delay: 500 * time.Millisecond})
	e.cwAPI.setBefore(func(n int) {
		if n == 1 {
			time.Sleep(500 * time.Millisecond)
		}
	})
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		read = map[string][]int{}
	)
	for range 2 {
		for _, dep := range []string{"app", "checkout"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := e.mon.Scan(ctx(), tenant, dep)
				if err != nil {
					t.Errorf("scan of %s: %v", dep, err)
				}
				mu.Lock()
				read[dep] = append(read[dep], n)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	for dep, ns := range read {
		slices.Sort(ns)
		if fmt.Sprint(ns) != "[0 30]" {
			t.Fatalf("%s: the concurrent scans read %v events, want one of them all 30 and the other none (the lease)", dep, ns)
		}
	}
	// The same window again, after the first scans: nothing is new.
	for _, dep := range []string{"app", "checkout"} {
		if n := e.scan(t, dep); n != 0 {
			t.Fatalf("%s: a rescan of the same window read %d events", dep, n)
		}
	}
	e.drain(t)
	convexWant := map[string]int64{"messages:send": 10, "orders:get": 10, "ai:run": 10}
	cwWant := map[string]int64{cwFunctions[0]: 10, "checkout": 10, cwFunctions[2]: 10}
	groups := e.checkCounts(t, "app", convexWant)
	counts := map[string]int64{}
	for fn, g := range e.checkCounts(t, "checkout", cwWant) {
		groups["cloudwatch "+fn], counts["cloudwatch "+fn] = g, 10
	}
	for fn := range convexWant {
		counts[fn] = 10
	}
	e.checkFiled(t, groups, counts)
}

func TestMissingOrRefusedDeployKeyIsVisibleAgainstFakeConvex(t *testing.T) {
	e := newRealEnv(t, realOpts{convex: convexfake.Options{Hold: 300 * time.Millisecond}})
	e.addConvex(t, "nokey", "VP_DEPLOY_KEY_MISSING")
	if _, err := e.mon.ScanAll(ctx(), tenant); err != nil {
		t.Fatalf("a deployment without a key made the job fail (only its tenant can fix it: a status, not an alarm): %v", err)
	}
	st := e.status(t, "nokey")
	if st.Status != errormon.StatusNeedsKey || !strings.Contains(st.LastError, "VP_DEPLOY_KEY_MISSING") || st.NextScanAt == 0 {
		t.Fatalf("list_errors shows %+v; want needs a key, naming VP_DEPLOY_KEY_MISSING, looked at again later", st)
	}
	if reqs := e.convex.Requests(); len(reqs) != 0 {
		t.Fatalf("a scan without a key sent %d requests", len(reqs))
	}

	// A key the deployment refuses: failing too, and the key is in no text.
	const wrong = "prod:happy-otter-123|wrong-key-0123456789"
	e2 := newRealEnv(t, realOpts{convex: convexfake.Options{Hold: 300 * time.Millisecond}, keys: keyMap{keyEnvVar: {Key: wrong}}})
	e2.addConvex(t, "app", keyEnvVar)
	_, err := e2.mon.Scan(ctx(), tenant, "app")
	wantKind(t, err, vp.KindUnauthorized, "deployKeyEnvVar")
	st = e2.status(t, "app")
	if st.Status != "failing" || !strings.Contains(st.LastError, "refused its deploy key") {
		t.Fatalf("list_errors shows %+v; want failing, the key refused", st)
	}
	for _, text := range []string{err.Error(), st.LastError, e2.logs.String()} {
		if strings.Contains(text, wrong) {
			t.Fatalf("the refused key is in %q", text)
		}
	}
}
