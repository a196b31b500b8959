package cloudwatch_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch/cloudwatchfake"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const group = "/aws/lambda/checkout"

// clock is a settable clock for the Source (the fake ingests in real time).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time)     { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }
func (c *clock) Add(d time.Duration) { c.Set(c.Now().Add(d)) }
func newClock(t time.Time) *clock    { return &clock{t: t} }

type env struct {
	f     *cloudwatchfake.Server
	s     *cloudwatch.Source
	clk   *clock
	t0    time.Time
	tg    source.Target
	since time.Time
}

// setup starts a fake and a Source paced fast (the pacing test uses the
// default); the clock starts at t0, a minute ago, with since an hour
// before it.
func setup(t *testing.T, fo cloudwatchfake.Options, o cloudwatch.Options) *env {
	t.Helper()
	f := cloudwatchfake.New(t, fo)
	f.CreateLogGroup(group)
	t0 := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	clk := newClock(t0)
	o.Client = f.Client()
	o.Now = clk.Now
	if o.Interval == 0 {
		o.Interval = time.Millisecond
	}
	return &env{f: f, s: cloudwatch.New(o), clk: clk, t0: t0, since: t0.Add(-time.Hour),
		tg: source.Target{Tenant: "acme", Name: "prod", LogGroups: []string{group}}}
}

func (e *env) put(at time.Time, msg string) string {
	return e.f.Put(group, cloudwatchfake.Event{Timestamp: at, Message: msg})[0]
}

func (e *env) read(t *testing.T, cursor string, max int) source.Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	p, err := e.s.Read(ctx, e.tg, cursor, e.since, max)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return p
}

func ids(p source.Page) []string {
	out := make([]string, 0, len(p.Events))
	for _, e := range p.Events {
		out = append(out, e.ID)
	}
	return out
}

// drain reads until More is false (at most n Reads), counting each id.
func (e *env) drain(t *testing.T, cursor string, max, n int, seen map[string]int) string {
	t.Helper()
	for range n {
		p := e.read(t, cursor, max)
		for _, id := range ids(p) {
			seen[id]++
		}
		cursor = p.Cursor
		if !p.More {
			return cursor
		}
	}
	t.Fatalf("still More after %d reads", n)
	return ""
}

func TestReadAgainstFakeCloudWatchLogsParsesEventsAndReadsEachOnce(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
	idA := e.put(e.t0.Add(-10*time.Second), "2024-05-01T12:00:00.000Z\t3f0c1a2b-1111-2222-3333-444455556666\tERROR\tInvoke Error \t"+
		`{"errorType":"TypeError","errorMessage":"Cannot read properties of undefined (reading 'id')","stack":["TypeError: Cannot read properties of undefined (reading 'id')","    at Runtime.handler (file:///var/task/index.mjs:3:22)"]}`)
	e.put(e.t0.Add(-9*time.Second), "START RequestId: 3f0c1a2b-1111-2222-3333-444455556666 Version: $LATEST")
	idB := e.put(e.t0.Add(-8*time.Second), `{"level":"ERROR","msg":"charge failed","err":"card declined","route":"POST /pay"}`)
	p := e.read(t, "", 100)
	if got := ids(p); len(got) != 2 || got[0] != idA || got[1] != idB {
		t.Fatalf("ids %v, want %s %s", got, idA, idB)
	}
	a, b := p.Events[0], p.Events[1]
	if a.Function != "checkout" || a.Type != "TypeError" || a.Message != "Cannot read properties of undefined (reading 'id')" ||
		!strings.Contains(a.Stack, "index.mjs:3:22") || !a.Time.Equal(e.t0.Add(-10*time.Second)) || !strings.Contains(a.Raw, "Invoke Error") {
		t.Fatalf("event %+v", a)
	}
	if b.Function != "POST /pay" || b.Message != "charge failed: card declined" {
		t.Fatalf("event %+v", b)
	}
	if p.More {
		t.Fatal("More after a complete scan")
	}
	// The next Read re-reads the overlap and returns nothing twice.
	e.clk.Add(30 * time.Second)
	idC := e.put(e.t0.Add(20*time.Second), "ERROR: new one")
	p2 := e.read(t, p.Cursor, 100)
	if got := ids(p2); len(got) != 1 || got[0] != idC {
		t.Fatalf("second read %v, want only %s", got, idC)
	}
	reqs := e.f.Requests()
	if last := reqs[len(reqs)-1]; *last.StartTime != e.t0.Add(-cloudwatch.DefaultOverlap).UnixMilli() || *last.EndTime != e.t0.Add(30*time.Second).UnixMilli() {
		t.Fatalf("second scan [%d, %d], want [watermark - overlap, now]", *last.StartTime, *last.EndTime)
	}
}

func TestFirstReadAgainstFakeCloudWatchLogsStartsAtSince(t *testing.T) {
	for _, zero := range []bool{false, true} {
		t.Run(fmt.Sprintf("zero since %v", zero), func(t *testing.T) {
			e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
			e.since = e.t0.Add(-10 * time.Minute)
			want := e.since
			if zero {
				e.since, want = time.Time{}, e.t0.Add(-time.Hour)
			}
			e.put(want.Add(-time.Second), "ERROR too old")
			in := e.put(want.Add(time.Second), "ERROR recent")
			p := e.read(t, "", 10)
			if got := ids(p); len(got) != 1 || got[0] != in {
				t.Fatalf("ids %v", got)
			}
			if r := e.f.Requests()[0]; r.StartTime == nil || *r.StartTime != want.UnixMilli() {
				t.Fatalf("first scan starts at %v, want since %d (not 0, not an overlap before)", r.StartTime, want.UnixMilli())
			}
		})
	}
}

// An event CloudWatch ingests after a Read, with a timestamp before the
// watermark that Read set, is found by the next Read's overlap.
func TestLateEventAgainstFakeCloudWatchLogsIsPickedUpWithinTheOverlap(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{Overlap: 2 * time.Minute})
	e.put(e.t0.Add(-time.Minute), "ERROR on time")
	p := e.read(t, "", 10)
	if len(p.Events) != 1 {
		t.Fatalf("first read %v", ids(p))
	}
	late := e.put(e.t0.Add(-30*time.Second), "ERROR arrived late") // before the watermark (t0)
	tooLate := e.put(e.t0.Add(-5*time.Minute), "ERROR far too late")
	e.clk.Add(time.Minute)
	p2 := e.read(t, p.Cursor, 10)
	if got := ids(p2); len(got) != 1 || got[0] != late {
		t.Fatalf("second read %v, want the late event %s (and not %s, older than the overlap)", got, late, tooLate)
	}
}

func TestEmptyPagesWithTokenAgainstFakeCloudWatchLogsAreFollowed(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{PageSize: 2, EmptyPages: 3}, cloudwatch.Options{})
	var want []string
	for i := range 5 {
		want = append(want, e.put(e.t0.Add(time.Duration(i-10)*time.Second), fmt.Sprintf("ERROR number %d", i)))
	}
	p := e.read(t, "", 100)
	if got := ids(p); strings.Join(got, ",") != strings.Join(want, ",") || p.More {
		t.Fatalf("ids %v more %v, want all 5 in one Read", got, p.More)
	}
	var empty int
	for _, r := range e.f.Requests() {
		if r.Events == 0 {
			empty++
		}
	}
	// 3 empty pages before each of 3 pages of events and 3 before the end,
	// plus the final empty answer.
	if n := len(e.f.Requests()); n != 16 || empty != 13 {
		t.Fatalf("%d requests (%d empty), want 16 (13 empty)", n, empty)
	}
}

// More empty pages than one Read may fetch: the token is kept in the
// cursor, and the next Read goes on from it rather than starting over.
func TestEmptyPagesBeyondTheBudgetAgainstFakeCloudWatchLogs(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{PageSize: 2, EmptyPages: 3}, cloudwatch.Options{MaxPages: 3})
	for i := range 5 {
		e.put(e.t0.Add(time.Duration(i-10)*time.Second), fmt.Sprintf("ERROR number %d", i))
	}
	seen := map[string]int{}
	var reads int
	cur := ""
	for reads = 1; reads <= 10; reads++ {
		p := e.read(t, cur, 100)
		for _, id := range ids(p) {
			seen[id]++
		}
		cur = p.Cursor
		if !p.More {
			break
		}
	}
	if len(seen) != 5 || reads != 6 {
		t.Fatalf("%d events in %d reads (%v), want 5 in 6 (16 pages, 3 a Read)", len(seen), reads, seen)
	}
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s returned %d times", id, n)
		}
	}
	for i, r := range e.f.Requests() {
		if i > 0 && r.NextToken == "" {
			t.Fatalf("request %d started the scan over", i)
		}
	}
}

func TestMaxEventsAgainstFakeCloudWatchLogs(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
	var want []string
	for i := range 7 {
		want = append(want, e.put(e.t0.Add(time.Duration(i-20)*time.Second), fmt.Sprintf("ERROR %d", i)))
	}
	var got []string
	var sizes []int
	cur := ""
	for range 5 {
		p := e.read(t, cur, 3)
		got, sizes, cur = append(got, ids(p)...), append(sizes, len(p.Events)), p.Cursor
		if !p.More {
			break
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") || fmt.Sprint(sizes) != "[3 3 1]" {
		t.Fatalf("got %v in reads of %v, want %v in [3 3 1]", got, sizes, want)
	}
}

func TestThrottlingAgainstFakeCloudWatchLogs(t *testing.T) {
	// A standard retryer, which retries throttling: the Source must keep
	// it from doing so on its own.
	f := cloudwatchfake.New(t, cloudwatchfake.Options{})
	f.CreateLogGroup(group)
	s := cloudwatch.New(cloudwatch.Options{Client: f.Client(), Interval: time.Millisecond})
	tg := source.Target{Name: "prod", LogGroups: []string{group}}
	in := f.Put(group, cloudwatchfake.Event{Timestamp: time.Now().Add(-time.Minute), Message: "ERROR x"})[0]
	f.Throttle(1)
	start := time.Now()
	_, err := s.Read(context.Background(), tg, "", time.Now().Add(-time.Hour), 10)
	if !vp.IsKind(err, vp.KindRateLimited) {
		t.Fatalf("err = %v, want rate limited", err)
	}
	if d, _ := vp.RetryAfter(err); d != cloudwatch.ThrottleRetryAfter {
		t.Fatalf("retry after %v", d)
	}
	if n := len(f.Requests()); n != 1 || time.Since(start) > time.Second {
		t.Fatalf("%d requests in %v: the SDK retried the throttling", n, time.Since(start))
	}
	p, err := s.Read(context.Background(), tg, "", time.Now().Add(-time.Hour), 10)
	if err != nil || len(p.Events) != 1 || p.Events[0].ID != in {
		t.Fatalf("later Read = %v, %v", ids(p), err)
	}
}

// Throttled after reading something: the Read returns what it read (More),
// and the next one, starting with the throttled group, reports it.
func TestThrottlingMidReadAgainstFakeCloudWatchLogs(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
	const other = "/aws/lambda/worker"
	e.f.CreateLogGroup(other)
	e.tg.LogGroups = []string{group, other}
	a := e.put(e.t0.Add(-time.Minute), "ERROR in checkout")
	b := e.f.Put(other, cloudwatchfake.Event{Timestamp: e.t0.Add(-time.Minute), Message: "ERROR in worker"})[0]
	e.f.ThrottleGroup(other, 2)
	p := e.read(t, "", 10)
	if got := ids(p); len(got) != 1 || got[0] != a || !p.More {
		t.Fatalf("first read %v more %v", got, p.More)
	}
	if _, err := e.s.Read(context.Background(), e.tg, p.Cursor, e.since, 10); !vp.IsKind(err, vp.KindRateLimited) {
		t.Fatalf("second read: %v, want rate limited", err)
	}
	p3 := e.read(t, p.Cursor, 10)
	if got := ids(p3); len(got) != 1 || got[0] != b {
		t.Fatalf("third read %v, want %s", got, b)
	}
}

// At the default pace, a Read never exceeds CloudWatch's 5 requests a
// second: the fake, throttling beyond that, never has to.
func TestPacingAgainstFakeCloudWatchLogs(t *testing.T) {
	f := cloudwatchfake.New(t, cloudwatchfake.Options{EmptyPages: 4, RateLimit: 5})
	f.CreateLogGroup(group)
	// The pace is measured where the Source sends, not where the fake
	// receives: on a loaded machine arrivals bunch up after a late one.
	sent := &sendTimes{api: f.Client()}
	s := cloudwatch.New(cloudwatch.Options{Client: sent})
	f.Put(group, cloudwatchfake.Event{Timestamp: time.Now().Add(-time.Minute), Message: "ERROR paced"})
	p, err := s.Read(context.Background(), source.Target{Name: "prod", LogGroups: []string{group}}, "", time.Now().Add(-time.Hour), 10)
	if err != nil || len(p.Events) != 1 {
		t.Fatalf("Read = %v, %v", ids(p), err)
	}
	reqs := f.Requests()
	if len(reqs) != 10 || len(sent.at) != 10 {
		t.Fatalf("%d requests received, %d sent; want 10", len(reqs), len(sent.at))
	}
	for i, r := range reqs {
		if r.Status != 200 {
			t.Fatalf("request %d answered %d %s", i, r.Status, r.Code)
		}
	}
	// The fake's 200s above are the proof. The send times are read after
	// the pacer released each request, and a goroutine that wakes late
	// shortens the gap to the next one (CI saw 118 ms), but never the span:
	// each slot is 200 ms after the one before, however late its request
	// went out, so only the first send's own delay (allowed up to one slot)
	// can shorten it.
	if span, want := sent.at[len(sent.at)-1].Sub(sent.at[0]), time.Duration(len(sent.at)-2)*200*time.Millisecond; span < want {
		t.Fatalf("%d requests sent within %v; at 5 a second they take at least %v", len(sent.at), span, want)
	}
}

func TestExpiredTokenAgainstFakeCloudWatchLogsRestartsTheScan(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{PageSize: 2}, cloudwatch.Options{MaxPages: 1})
	var want []string
	for i := range 5 {
		want = append(want, e.put(e.t0.Add(time.Duration(i-30)*time.Second), fmt.Sprintf("ERROR %d", i)))
	}
	seen := map[string]int{}
	p := e.read(t, "", 100)
	for _, id := range ids(p) {
		seen[id]++
	}
	e.f.ExpireTokens()
	e.drain(t, p.Cursor, 100, 10, seen)
	for _, id := range want {
		if seen[id] != 1 {
			t.Fatalf("%s returned %d times (%v)", id, seen[id], seen)
		}
	}
	if r := e.f.Requests()[1]; r.Code != "InvalidParameterException" || r.NextToken == "" {
		t.Fatalf("the second request, with the expired token, was answered %d %s", r.Status, r.Code)
	}
}

func TestCursorIsBoundedAgainstFakeCloudWatchLogs(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{MaxIDs: 50})
	for i := range 300 {
		e.put(e.t0.Add(time.Duration(i-600)*100*time.Millisecond), fmt.Sprintf("ERROR %d", i))
	}
	seen := map[string]int{}
	cur := e.drain(t, "", 1000, 3, seen)
	if len(seen) != 300 {
		t.Fatalf("%d events, want 300", len(seen))
	}
	var st struct {
		Groups map[string]struct {
			IDs map[string]int64 `json:"ids"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(cur), &st); err != nil {
		t.Fatal(err)
	}
	if n := len(st.Groups[group].IDs); n > 50 || len(cur) > 4096 {
		t.Fatalf("cursor keeps %d ids in %d bytes", n, len(cur))
	}
	// Re-reading the overlap still returns nothing twice.
	e.clk.Add(time.Second)
	e.drain(t, cur, 1000, 3, seen)
	for id, n := range seen {
		if n != 1 {
			t.Fatalf("%s returned %d times", id, n)
		}
	}
}

func TestBusyGroupDoesNotStarveAgainstFakeCloudWatchLogs(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
	const quiet = "/aws/lambda/quiet"
	e.f.CreateLogGroup(quiet)
	e.tg.LogGroups = []string{group, quiet}
	for i := range 20 {
		e.put(e.t0.Add(time.Duration(i-40)*time.Second), fmt.Sprintf("ERROR busy %d", i))
	}
	q := e.f.Put(quiet, cloudwatchfake.Event{Timestamp: e.t0.Add(-time.Minute), Message: "ERROR quiet"})[0]
	cur := ""
	for r := 1; r <= 2; r++ {
		p := e.read(t, cur, 5)
		for _, id := range ids(p) {
			if id == q {
				return
			}
		}
		cur = p.Cursor
	}
	t.Fatal("the quiet group's event was not read within two Reads")
}

func TestErrorsAgainstFakeCloudWatchLogs(t *testing.T) {
	tests := []struct {
		name  string
		prep  func(e *env)
		kind  vp.Kind
		field string
	}{
		{"no such log group", func(e *env) { e.tg.LogGroups = []string{"/aws/lambda/missing"} }, vp.KindInvalid, "logGroups"},
		{"no log groups", func(e *env) { e.tg.LogGroups = []string{" "} }, vp.KindInvalid, "logGroups"},
		{"refused credentials", func(e *env) {
			e.f.Fail(1, 400, "UnrecognizedClientException", "The security token included in the request is invalid.")
		}, vp.KindUnauthorized, "logGroups"},
		{"access denied", func(e *env) {
			e.f.Fail(1, 400, "AccessDeniedException", "not authorized to perform logs:FilterLogEvents")
		}, vp.KindUnauthorized, "logGroups"},
		// Three: the SDK's retries (kept for these) all fail.
		{"server error", func(e *env) { e.f.Fail(3, 500, "InternalServerException", "oops") }, vp.KindUnavailable, ""},
		{"service unavailable", func(e *env) { e.f.Fail(3, 503, "ServiceUnavailableException", "try later") }, vp.KindUnavailable, ""},
		{"limit exceeded", func(e *env) { e.f.Fail(1, 400, "LimitExceededException", "too many") }, vp.KindRateLimited, ""},
		{"unsupported filter", func(e *env) { e.tg.FilterPattern = `{ $.level = "error" }` }, vp.KindInvalid, "filterPattern"},
		{"unreachable", func(e *env) { e.f.Close() }, vp.KindUnavailable, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
			tt.prep(e)
			_, err := e.s.Read(context.Background(), e.tg, "", e.since, 10)
			if vp.KindOf(err) != tt.kind {
				t.Fatalf("err = %v (%v), want %v", err, vp.KindOf(err), tt.kind)
			}
			var ve *vp.Error
			if tt.field != "" && (!errors.As(err, &ve) || ve.Field != tt.field) {
				t.Fatalf("err = %v, want field %s", err, tt.field)
			}
		})
	}
	t.Run("bad cursor", func(t *testing.T) {
		e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
		if _, err := e.s.Read(context.Background(), e.tg, "1234", e.since, 10); !vp.IsKind(err, vp.KindInvalid) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestShortDeadlineAgainstFakeCloudWatchLogs(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
	e.put(e.t0.Add(-time.Minute), "ERROR x")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p, err := e.s.Read(ctx, e.tg, "", e.since, 10)
	if err != nil || !p.More || len(p.Events) != 0 || len(e.f.Requests()) != 0 {
		t.Fatalf("Read = %+v, %v after %d requests; want no request, More, no error", p, err, len(e.f.Requests()))
	}
	// The cursor it returned still starts the first scan at since.
	p = e.read(t, p.Cursor, 10)
	if len(p.Events) != 1 || *e.f.Requests()[0].StartTime != e.since.UnixMilli() {
		t.Fatalf("then %v", ids(p))
	}
}

func TestRawIsBoundedAgainstFakeCloudWatchLogs(t *testing.T) {
	e := setup(t, cloudwatchfake.Options{}, cloudwatch.Options{})
	e.put(e.t0.Add(-time.Minute), "ERROR "+strings.Repeat("é", 20000)+"\n"+strings.Repeat("    at f (a.js:1:1)\n", 3000))
	p := e.read(t, "", 10)
	if len(p.Events) != 1 {
		t.Fatalf("events %v", ids(p))
	}
	ev := p.Events[0]
	if len(ev.Raw) > source.MaxRawBytes || len(ev.Raw) < source.MaxRawBytes-2 || len(ev.Message) > 1024 || len(ev.Stack) > 16<<10 {
		t.Fatalf("raw %d, message %d, stack %d bytes", len(ev.Raw), len(ev.Message), len(ev.Stack))
	}
}

// sendTimes records when each FilterLogEvents call is made.
type sendTimes struct {
	api cloudwatch.FilterLogEventsAPI
	at  []time.Time
}

func (s *sendTimes) FilterLogEvents(ctx context.Context, in *cloudwatchlogs.FilterLogEventsInput, opts ...func(*cloudwatchlogs.Options)) (*cloudwatchlogs.FilterLogEventsOutput, error) {
	s.at = append(s.at, time.Now())
	return s.api.FilterLogEvents(ctx, in, opts...)
}
