package errormon_test

import (
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/ghmd/ghmdtest"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// fixedClock is the monitor's clock, set by the test: the half hour keeps
// "a minute ago" in the current hour; today's, since the store expires
// records by the real time.
type fixedClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFixedClock() *fixedClock {
	return &fixedClock{t: time.Now().UTC().Truncate(time.Hour).Add(30 * time.Minute)}
}

func (c *fixedClock) Now() time.Time                { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fixedClock) Add(d time.Duration)           { c.mu.Lock(); defer c.mu.Unlock(); c.t = c.t.Add(d) }
func (c *fixedClock) ago(d time.Duration) time.Time { return c.Now().Add(-d) }

// at is occurrence k of cause c at t.
func at(c, k int, t time.Time) source.Event {
	e := cause(c, k)
	e.Time = t
	return e
}

func (e *env) addTriaged(t testing.TB, name string, minOcc, window int, deployedAt int64) {
	t.Helper()
	if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: name, DeploymentURL: "https://happy-otter-123.convex.cloud",
		DeployKeyEnvVar: "VP_DEPLOY_KEY_APP", GitHubRepo: "acme/app", Orchestrator: "sigma",
		MinOccurrences: minOcc, WindowMinutes: window, DeployedAt: deployedAt}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) status(t testing.TB, name string) errormon.DeploymentStatus {
	t.Helper()
	list, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{Deployment: name})
	if err != nil || len(list.Deployments) != 1 {
		t.Fatalf("list_errors %s: %+v, %v", name, list.Deployments, err)
	}
	return list.Deployments[0]
}

// TestThresholdAndWindow: a group is filed once it occurred minOccurrences
// times within windowMinutes (by the events' own times), across scans;
// below it, it is listed as pending and nothing is filed.
func TestThresholdAndWindow(t *testing.T) {
	for _, tc := range []struct {
		name        string
		minOcc, win int
		scans       [][]time.Duration // per scan, each occurrence's age
		wantFiled   []bool            // after each scan
	}{
		{"default files at once", 0, 0, [][]time.Duration{{time.Minute}}, []bool{true}},
		{"one files at once", 1, 5, [][]time.Duration{{time.Minute}}, []bool{true}},
		{"two of three, then the third", 3, 10, [][]time.Duration{{3 * time.Minute, 2 * time.Minute}, {time.Minute}}, []bool{false, true}},
		{"three in one scan", 3, 10, [][]time.Duration{{9 * time.Minute, 5 * time.Minute, time.Minute}}, []bool{true}},
		{"three spread wider than the window", 3, 10, [][]time.Duration{{25 * time.Minute, 13 * time.Minute, time.Minute}}, []bool{false}},
		{"a fourth closes a window", 3, 10, [][]time.Duration{{25 * time.Minute, 9 * time.Minute, 4 * time.Minute}, {time.Minute}}, []bool{false, true}},
		{"one per scan", 3, 10, [][]time.Duration{{3 * time.Minute}, {2 * time.Minute}, {time.Minute}}, []bool{false, false, true}},
		{"late events land where they belong", 2, 5, [][]time.Duration{{time.Minute}, {40 * time.Minute}, {90 * time.Minute}}, []bool{false, false, false}},
		{"a late event inside the window", 2, 5, [][]time.Duration{{time.Minute}, {3 * time.Minute}}, []bool{false, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFixedClock()
			e := newEnv(t, func(o *errormon.Options) { o.Now = clk.Now })
			e.addTriaged(t, "app", tc.minOcc, tc.win, 0)
			k := 0
			for s, ages := range tc.scans {
				for _, age := range ages {
					e.src.add(at(1, k, clk.ago(age)))
					k++
				}
				e.scan(t, "app")
				e.drain(t)
				issues, _ := e.gh.snapshot()
				gs := e.groups(t)
				if len(gs) != 1 || gs[0].Count != int64(k) {
					t.Fatalf("scan %d: groups %+v; want one counting %d", s, gs, k)
				}
				if filed := len(issues) == 1; filed != tc.wantFiled[s] || filed != (gs[0].IssueNumber > 0) {
					t.Fatalf("scan %d: %d issues, group %s #%d; want filed %v", s, len(issues), gs[0].Status, gs[0].IssueNumber, tc.wantFiled[s])
				}
				if !tc.wantFiled[s] && gs[0].Status != errormon.StatusPending {
					t.Fatalf("scan %d: a group below its threshold is %s, want pending", s, gs[0].Status)
				}
			}
		})
	}
}

func TestTriageSettingsNameTheFieldAndTheLimit(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		min, win int
		dep      int64
		kind     vp.Kind
		field    string
		limit    string
	}{
		{-1, 0, 0, vp.KindInvalid, "minOccurrences", "1000"},
		{errormon.MaxMinOccurrences + 1, 0, 0, vp.KindTooLarge, "minOccurrences", "1000"},
		{0, -5, 0, vp.KindInvalid, "windowMinutes", "10080"},
		{0, errormon.MaxWindowMinutes + 1, 0, vp.KindTooLarge, "windowMinutes", "10080"},
		{0, 0, time.Now().Add(time.Hour).UnixMilli(), vp.KindInvalid, "deployedAt", "past"},
	} {
		_, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "app", DeploymentURL: "https://x.convex.cloud",
			DeployKeyEnvVar: "VP_DEPLOY_KEY_APP", GitHubRepo: "acme/app", Orchestrator: "sigma", MinOccurrences: tc.min, WindowMinutes: tc.win, DeployedAt: tc.dep})
		wantKind(t, err, tc.kind, tc.field)
		if err != nil && !strings.Contains(err.Error(), tc.limit) {
			t.Errorf("%s: %v does not state the limit %s", tc.field, err, tc.limit)
		}
	}
	e.addTriaged(t, "app", 5, 30, 0)
	if st := e.status(t, "app"); st.MinOccurrences != 5 || st.WindowMinutes != 30 {
		t.Fatalf("status %+v; want minOccurrences 5, windowMinutes 30", st)
	}
	e.addTriaged(t, "app", 0, 0, 0) // an update back to the defaults
	if st := e.status(t, "app"); st.MinOccurrences != 1 || st.WindowMinutes != errormon.DefaultWindowMinutes {
		t.Fatalf("status %+v; want the defaults", st)
	}
}

// TestListPendingGroups seeds N groups below the threshold and lists N.
func TestListPendingGroups(t *testing.T) {
	e := newEnv(t)
	e.addTriaged(t, "app", 10, 60, 0)
	const n = 17
	for c := range n {
		e.src.add(cause(c, 1), cause(c, 2))
	}
	e.scan(t, "app")
	e.drain(t)
	if issues, _ := e.gh.snapshot(); len(issues) != 0 {
		t.Fatalf("%d issues filed below the threshold", len(issues))
	}
	lim := 4
	got := 0
	for cursor := ""; ; {
		page, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{Status: errormon.StatusPending, Params: listing.Params{Cursor: cursor, Limit: &lim}})
		if err != nil {
			t.Fatal(err)
		}
		got += len(page.Items)
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if got != n {
		t.Fatalf("listed %d pending groups, want %d", got, n)
	}
}

// closeIssue closes the group's issue in VantagePeers and on GitHub and
// returns when (the issue service's clock: the real one).
func (e *env) closeIssue(t testing.TB, number int) time.Time {
	t.Helper()
	if _, err := e.issues.UpdateStatus(ctx(), admin(tenant), issue.StatusInput{IssueRef: issue.IssueRef{Repo: "acme/app", IssueNumber: number}, Status: "closed"}); err != nil {
		t.Fatal(err)
	}
	e.gh.mu.Lock()
	for k := range e.gh.issues {
		if e.gh.issues[k].Number == number {
			e.gh.issues[k].Open = false
		}
	}
	e.gh.mu.Unlock()
	i, err := e.issues.GetIssue(ctx(), admin(tenant), issue.IssueRef{Repo: "acme/app", IssueNumber: number})
	if err != nil || i.ClosedAt == nil {
		t.Fatalf("closed issue: %+v, %v", i, err)
	}
	return time.UnixMilli(*i.ClosedAt)
}

func (e *env) regressionComments(number int) int {
	_, comments := e.gh.snapshot()
	n := 0
	for _, c := range comments[number] {
		if strings.HasPrefix(c, "Regression:") {
			n++
		}
	}
	return n
}

// TestLateEventsNeverReopenAFixedIssue: events ingested after the issue
// was closed but timestamped before it count, and reopen nothing; an
// event after it reopens the issue once; closed again, the late events of
// the first reopening do not flap it open.
func TestLateEventsNeverReopenAFixedIssue(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	e.src.add(at(1, 0, time.Now().Add(-time.Hour)))
	e.scan(t, "app")
	e.drain(t)
	g := e.groups(t)[0]
	closed := e.closeIssue(t, g.IssueNumber)
	e.src.add(at(1, 1, closed.Add(-10*time.Minute)), at(1, 2, closed.Add(-time.Millisecond)))
	e.scan(t, "app")
	e.drain(t)
	issues, _ := e.gh.snapshot()
	if issues[0].Open || e.gh.reopens != 0 || e.regressionComments(g.IssueNumber) != 0 {
		t.Fatalf("late events reopened the issue: open %v, reopens %d", issues[0].Open, e.gh.reopens)
	}
	if g := e.groups(t)[0]; g.Status != errormon.StatusResolved || g.Count != 3 || g.Regressions != 0 || g.ResolvedAt != closed.UnixMilli() {
		t.Fatalf("group after late events: %+v", g)
	}
	// After the fix: reopened once, however many occurrences.
	after := time.Now().Add(time.Second)
	e.src.add(at(1, 3, after), at(1, 4, after.Add(time.Second)))
	e.scan(t, "app")
	e.drain(t)
	if issues, _ := e.gh.snapshot(); !issues[0].Open || e.gh.reopens != 1 || e.regressionComments(g.IssueNumber) != 1 {
		t.Fatalf("an occurrence after the fix: open %v, reopens %d, comments %d; want reopened once", issues[0].Open, e.gh.reopens, e.regressionComments(g.IssueNumber))
	}
	// Closed again; events from between the two closings arrive late.
	time.Sleep(5 * time.Millisecond)
	closed2 := e.closeIssue(t, g.IssueNumber)
	e.src.add(at(1, 5, closed2.Add(-2*time.Millisecond)), at(1, 6, closed.Add(time.Millisecond)))
	e.scan(t, "app")
	e.drain(t)
	if issues, _ := e.gh.snapshot(); issues[0].Open || e.gh.reopens != 1 || e.regressionComments(g.IssueNumber) != 1 {
		t.Fatalf("late events flapped the issue: open %v, reopens %d", issues[0].Open, e.gh.reopens)
	}
	if g := e.groups(t)[0]; g.Count != 7 || g.Regressions != 1 {
		t.Fatalf("group: count %d regressions %d; want 7, 1", g.Count, g.Regressions)
	}
}

// TestRegressionCountsFromTheDeployTold: with a deploy time after the fix,
// occurrences between the fix and the deploy (the old code still running)
// reopen nothing; one after the deploy does.
func TestRegressionCountsFromTheDeployTold(t *testing.T) {
	clk := &clock{shift: time.Hour} // the monitor runs an hour ahead of the issue service
	e := newEnv(t, func(o *errormon.Options) { o.Now = clk.Now })
	e.addDeployment(t, "app")
	e.src.add(at(1, 0, time.Now().Add(-time.Hour)))
	e.scan(t, "app")
	e.drain(t)
	g := e.groups(t)[0]
	if _, err := e.issues.UpdateStatus(ctx(), admin(tenant), issue.StatusInput{IssueRef: issue.IssueRef{Repo: "acme/app", IssueNumber: g.IssueNumber}, Status: "fixed"}); err != nil {
		t.Fatal(err)
	}
	fixed := time.Now()
	deployed := fixed.Add(30 * time.Minute)
	e.addTriaged(t, "app", 0, 0, deployed.UnixMilli())
	e.src.add(at(1, 1, fixed.Add(10*time.Minute)))
	e.scan(t, "app")
	e.drain(t)
	if e.gh.reopens != 0 || e.regressionComments(g.IssueNumber) != 0 {
		t.Fatalf("an occurrence before the deploy reopened the issue (%d reopens)", e.gh.reopens)
	}
	if st := e.status(t, "app"); st.DeployedAt != deployed.UnixMilli() {
		t.Fatalf("status deployedAt %d, want %d", st.DeployedAt, deployed.UnixMilli())
	}
	e.src.add(at(1, 2, deployed.Add(time.Minute)))
	e.scan(t, "app")
	e.drain(t)
	if e.regressionComments(g.IssueNumber) != 1 {
		t.Fatalf("%d regression comments after an occurrence past the deploy, want 1", e.regressionComments(g.IssueNumber))
	}
	if i, _ := e.issues.GetIssue(ctx(), admin(tenant), issue.IssueRef{Repo: "acme/app", IssueNumber: g.IssueNumber}); i.Status != issue.StatusInProgress {
		t.Fatalf("the fixed issue is %s after the regression, want in_progress", i.Status)
	}
}

// TestHeldBackCountsAreVisible: what the hourly cap did not file is
// counted per hour in list_errors and in the hour's summary comment.
func TestHeldBackCountsAreVisible(t *testing.T) {
	clk := newFixedClock()
	e := newEnv(t, func(o *errormon.Options) { o.IssuesPerHour = 2; o.Now = clk.Now })
	e.addDeployment(t, "app")
	for c := range 6 {
		for k := range c + 1 {
			e.src.add(at(c, k, clk.ago(time.Minute)))
		}
	}
	e.scan(t, "app")
	e.drain(t)
	var groups, events int64
	for _, g := range e.groups(t) {
		if g.Summarised {
			groups++
			events += g.Count
		}
	}
	if groups != 4 {
		t.Fatalf("%d groups summarised, want 4", groups)
	}
	hour := clk.Now().Truncate(time.Hour).UnixMilli()
	st := e.status(t, "app")
	if len(st.HeldBack) != 1 || st.HeldBack[0].Hour != hour || int64(st.HeldBack[0].Groups) != groups || st.HeldBack[0].Events != events {
		t.Fatalf("heldBack %+v; want hour %d: %d groups, %d events", st.HeldBack, hour, groups, events)
	}
	issues, comments := e.gh.snapshot()
	var summary []string
	for _, is := range issues {
		if strings.Contains(is.Title, "More new errors") {
			summary = comments[is.Number]
		}
	}
	want := "Held back by the cap in this hour, so far: 4 errors, " + itoa(events) + " occurrences"
	if len(summary) != 1 || !strings.Contains(summary[0], want) {
		t.Fatalf("summary comments %q; want one saying %q ", summary, want)
	}
	// One more occurrence of every cause: the held-back groups' (whichever
	// the cap chose, by group id) count in the same hour, the filed ones' not.
	for c := range 6 {
		e.src.add(at(c, 50, clk.ago(time.Minute)))
	}
	e.scan(t, "app")
	if st := e.status(t, "app"); st.HeldBack[0].Events != events+4 || int64(st.HeldBack[0].Groups) != groups {
		t.Fatalf("heldBack %+v after 4 more held-back occurrences; want %d events", st.HeldBack, events+4)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// escalationComments counts the escalation comments on an issue.
func (e *env) escalationComments(number int) []string {
	_, comments := e.gh.snapshot()
	var out []string
	for _, c := range comments[number] {
		if strings.HasPrefix(c, "Escalating:") {
			out = append(out, c)
		}
	}
	return out
}

// TestEscalationFiresOnceAtTheJump: a known group at about one an hour
// that jumps to 10× its trailing median escalates once (one inert comment
// through the outbox, the flag in list_errors); a group with no history
// that fires once or a few times does not.
func TestEscalationFiresOnceAtTheJump(t *testing.T) {
	clk := newFixedClock()
	e := newEnv(t, func(o *errormon.Options) { o.Now = clk.Now })
	e.addTriaged(t, "app @octocat [x](https://evil.example)", 0, 0, 0)
	const dep = "app @octocat [x](https://evil.example)"
	for h := 1; h <= 24; h++ {
		e.src.add(at(1, h, clk.ago(time.Duration(h)*time.Hour)))
	}
	e.src.add(at(2, 0, clk.ago(20*time.Hour)))
	e.scan(t, dep)
	e.drain(t)
	byCause := func() map[string]errormon.Group {
		out := map[string]errormon.Group{}
		for _, g := range e.groups(t) {
			out[g.Function] = g
		}
		return out
	}
	steady, quiet := byCause()["tasks:handler1"], byCause()["tasks:handler2"]
	if steady.IssueNumber == 0 || quiet.IssueNumber == 0 {
		t.Fatalf("groups not filed: %+v %+v", steady, quiet)
	}
	// Nine this hour: under the minimum count; the quiet one fires once
	// (0→1), then nine times.
	for k := range 9 {
		e.src.add(at(1, 100+k, clk.ago(time.Minute)))
	}
	e.src.add(at(2, 1, clk.ago(time.Minute)))
	e.scan(t, dep)
	for k := range 8 {
		e.src.add(at(2, 10+k, clk.ago(time.Minute)))
	}
	e.scan(t, dep)
	e.drain(t)
	if n := len(e.escalationComments(steady.IssueNumber)) + len(e.escalationComments(quiet.IssueNumber)); n != 0 {
		t.Fatalf("%d escalations below the jump", n)
	}
	// The jump: 12 this hour against a median of 1.
	for k := range 3 {
		e.src.add(at(1, 200+k, clk.ago(time.Minute)))
	}
	e.scan(t, dep)
	e.drain(t)
	cs := e.escalationComments(steady.IssueNumber)
	if len(cs) != 1 || !strings.Contains(cs[0], "12 times") {
		t.Fatalf("escalation comments %q; want one at 12 occurrences", cs)
	}
	if p := ghmdtest.Problems(cs[0], "octocat"); len(p) > 0 {
		t.Fatalf("the escalation comment has live Markdown: %v\n%s", p, cs[0])
	}
	g := byCause()["tasks:handler1"]
	if !g.Escalated || byCause()["tasks:handler2"].Escalated {
		t.Fatalf("list_errors flags: steady %v, quiet %v; want true, false", g.Escalated, byCause()["tasks:handler2"].Escalated)
	}
	// A rerun of its job (a crash before the job's removal) posts nothing.
	job := outbox.Job{ID: "j", Tenant: tenant, Topic: errormon.TopicEscalation, Attempt: 2, EnqueuedAt: time.Now(),
		Payload: []byte(`{"groupId":"` + g.ID + `","escalation":` + itoa(g.Escalation.Hour) + `}`)}
	if err := e.mon.EscalationJob(ctx(), job); err != nil {
		t.Fatal(err)
	}
	// It goes on, this hour and the next: still one comment.
	for k := range 40 {
		e.src.add(at(1, 300+k, clk.ago(time.Minute)))
	}
	e.scan(t, dep)
	clk.Add(time.Hour)
	for k := range 40 {
		e.src.add(at(1, 400+k, clk.ago(time.Minute)))
	}
	e.scan(t, dep)
	e.drain(t)
	if cs := e.escalationComments(steady.IssueNumber); len(cs) != 1 {
		t.Fatalf("%d escalation comments for one jump, want 1", len(cs))
	}
}

// TestAPendingGroupOverTheCapIsHeldBackInTheHourItReachedItsThreshold: a
// group first seen two days ago that reaches its threshold now, over the
// cap, goes into this hour's summary and held-back counts, not into a
// summary issue of two days ago.
func TestAPendingGroupOverTheCapIsHeldBackInTheHourItReachedItsThreshold(t *testing.T) {
	clk := newFixedClock()
	e := newEnv(t, func(o *errormon.Options) { o.IssuesPerHour = 1; o.Now = clk.Now })
	e.addTriaged(t, "app", 2, errormon.MaxWindowMinutes, 0)
	e.src.add(at(2, 0, clk.ago(48*time.Hour)))
	e.scan(t, "app")
	e.src.add(at(1, 0, clk.ago(2*time.Minute)), at(1, 1, clk.ago(time.Minute)), at(2, 1, clk.ago(time.Minute)))
	e.scan(t, "app")
	e.drain(t)
	hour := clk.Now().Truncate(time.Hour)
	st := e.status(t, "app")
	if len(st.HeldBack) != 1 || st.HeldBack[0].Hour != hour.UnixMilli() || st.HeldBack[0].Groups != 1 || st.HeldBack[0].Events != 2 {
		t.Fatalf("heldBack %+v; want 1 group, 2 events in the hour from %s", st.HeldBack, hour)
	}
	issues, _ := e.gh.snapshot()
	var titles []string
	for _, is := range issues {
		titles = append(titles, is.Title)
	}
	if len(issues) != 2 || !strings.Contains(strings.Join(titles, "\n"), hour.Format("2006-01-02 15:04")) {
		t.Fatalf("issues %q; want one filed and this hour's summary", titles)
	}
}
