package convex_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const key = "prod:happy-otter-123|eyJ2MiI6InNlY3JldC1kZXBsb3kta2V5In0="

func setup(t *testing.T, o convexfake.Options) (*convexfake.Server, *convex.Source, source.Target) {
	t.Helper()
	if o.Key == "" {
		o.Key = key
	}
	f := convexfake.New(t, o)
	return f, newSource(convex.Options{}), bound(source.Target{Tenant: "acme", Name: "prod", DeploymentURL: f.URL(), Key: key})
}

// newSource is a Source whose policy allows the fakes' loopback address
// (they listen on http://127.0.0.1), as an operator's allow-list would.
func newSource(o convex.Options) *convex.Source {
	allow, err := egress.ParseAllow("127.0.0.1")
	if err != nil {
		panic(err)
	}
	o.Egress = egress.New(egress.Options{Allow: allow})
	return convex.New(o)
}

func read(t *testing.T, s *convex.Source, tg source.Target, cursor string, since time.Time, max int) source.Page {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := s.Read(ctx, tg, cursor, since, max)
	if err != nil {
		t.Fatalf("Read(%q): %v", cursor, err)
	}
	return p
}

func ids(p source.Page) []string {
	var out []string
	for _, e := range p.Events {
		out = append(out, e.ID)
	}
	return out
}

func TestReadAgainstFakeConvexReturnsFailedCompletionsOnly(t *testing.T) {
	f, s, tg := setup(t, convexfake.Options{Hold: 200 * time.Millisecond})
	t0 := time.Now().Add(-10 * time.Minute).Truncate(time.Millisecond)
	f.Append(
		convexfake.Entry{Identifier: "messages:list", UdfType: "Query", ExecutionID: "ok-1", Time: t0},
		convexfake.Entry{Kind: "Progress", Identifier: "ai:run", UdfType: "Action", ExecutionID: "act-1", LogLines: []string{"[ERROR] not a failure"}, Time: t0.Add(time.Second)},
		convexfake.Entry{Identifier: "messages:send", ExecutionID: "ex-1", RequestID: "req-1", Time: t0.Add(2 * time.Second),
			Error: "Uncaught TypeError: Cannot read properties of undefined (reading 'body')\n    at handler (../convex/messages.ts:14:22)"},
		convexfake.Entry{Identifier: "ai:run", UdfType: "Action", ExecutionID: "act-1", Time: t0.Add(3 * time.Second), Error: "Your request timed out"},
		convexfake.Entry{Identifier: "http:POST /webhook", UdfType: "HttpAction", ExecutionID: "ok-2", Time: t0.Add(4 * time.Second)},
	)
	p := read(t, s, tg, "", t0.Add(-time.Minute), 100)
	if got := ids(p); strings.Join(got, ",") != "ex-1,act-1" {
		t.Fatalf("events %v, want ex-1,act-1", got)
	}
	e := p.Events[0]
	if e.Function != "messages:send" || e.Type != "TypeError" || e.Message != "Cannot read properties of undefined (reading 'body')" ||
		!strings.HasPrefix(e.Stack, "    at handler (../convex/messages.ts") || !e.Time.Equal(t0.Add(2*time.Second)) ||
		!strings.Contains(e.Raw, `"executionId":"ex-1"`) {
		t.Fatalf("event %+v", e)
	}
	if e := p.Events[1]; e.Type != "" || e.Message != "Your request timed out" || e.Function != "ai:run" {
		t.Fatalf("event %+v", e)
	}
	// A chunk that moved the cursor may have more after it (Convex answers
	// in chunks); Newest is its last entry's log time.
	if !p.More || !p.Newest.Equal(t0.Add(4*time.Second)) {
		t.Fatalf("More %v, Newest %v after a chunk; want true, %v", p.More, p.Newest, t0.Add(4*time.Second))
	}
	// Nothing new: the long poll ends empty, the cursor stays, no more.
	p2 := read(t, s, tg, p.Cursor, time.Time{}, 100)
	if len(p2.Events) != 0 || p2.Cursor != p.Cursor || p2.More {
		t.Fatalf("second read %+v (cursor was %q)", p2, p.Cursor)
	}
	for _, r := range f.Requests() {
		if !r.Authorized {
			t.Fatalf("request %+v not authorized", r)
		}
	}
}

func TestFirstReadAgainstFakeConvexStartsAtSince(t *testing.T) {
	now := time.Now().Truncate(time.Millisecond)
	tests := []struct {
		name  string
		since time.Time
		want  string // the first request's cursor
		ids   string
	}{
		{"since given", now.Add(-30 * time.Minute), strconv.FormatInt(now.Add(-30*time.Minute).UnixMilli(), 10), "recent"},
		{"zero since: the default backfill", time.Time{}, strconv.FormatInt(now.Add(-time.Hour).UnixMilli(), 10), "hour-old,recent"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := convexfake.New(t, convexfake.Options{Key: key})
			s := newSource(convex.Options{Now: func() time.Time { return now }})
			tg := bound(source.Target{Name: "prod", DeploymentURL: f.URL(), Key: key})
			f.Append(
				convexfake.Entry{Identifier: "a:old", ExecutionID: "ancient", Error: "Error: old", Time: now.Add(-3 * time.Hour)},
				convexfake.Entry{Identifier: "a:b", ExecutionID: "hour-old", Error: "Error: b", Time: now.Add(-45 * time.Minute)},
				convexfake.Entry{Identifier: "a:c", ExecutionID: "recent", Error: "Error: c", Time: now.Add(-time.Minute)},
			)
			p := read(t, s, tg, "", tt.since, 10)
			if got := strings.Join(ids(p), ","); got != tt.ids {
				t.Fatalf("events %s, want %s", got, tt.ids)
			}
			if got := f.Requests()[0].Cursor; got != tt.want {
				t.Fatalf("first cursor %s, want %s (not 0)", got, tt.want)
			}
		})
	}
}

// Convex answers strictly after the cursor; a server that overlapped
// (answering the entry at the cursor again) must not make an event
// appear twice.
func TestConsecutiveReadsAgainstFakeConvexReturnEachEventOnce(t *testing.T) {
	for _, inclusive := range []bool{false, true} {
		t.Run("inclusive="+strconv.FormatBool(inclusive), func(t *testing.T) {
			f, s, tg := setup(t, convexfake.Options{Inclusive: inclusive, Hold: 100 * time.Millisecond})
			t0 := time.Now().Add(-time.Minute)
			fail := func(id string, d time.Duration) convexfake.Entry {
				return convexfake.Entry{Identifier: "f:" + id, ExecutionID: id, Error: "Error: " + id, Time: t0.Add(d)}
			}
			f.Append(fail("a", 0), fail("b", time.Second), fail("b", time.Second), fail("c", 2*time.Second)) // b twice: dedup within a page
			seen := map[string]int{}
			p := read(t, s, tg, "", t0.Add(-time.Second), 100)
			for _, id := range ids(p) {
				seen[id]++
			}
			f.Append(fail("d", 3*time.Second), fail("e", 4*time.Second))
			cur := p.Cursor
			for range 3 {
				p = read(t, s, tg, cur, time.Time{}, 100)
				for _, id := range ids(p) {
					seen[id]++
				}
				cur = p.Cursor
			}
			for _, id := range []string{"a", "b", "c", "d", "e"} {
				if seen[id] != 1 {
					t.Fatalf("%s returned %d times (%v)", id, seen[id], seen)
				}
			}
			if inclusive {
				// The fake did send the overlap: the dedup is what held.
				if r := f.Requests()[1]; r.Entries != 3 {
					t.Fatalf("second request served %d entries, want the overlap c plus d, e", r.Entries)
				}
			}
		})
	}
}

func TestReadAgainstFakeConvexStopsAtMaxAndResumes(t *testing.T) {
	f, s, tg := setup(t, convexfake.Options{Hold: 100 * time.Millisecond})
	t0 := time.Now().Add(-time.Minute)
	var want []string
	for i := range 7 {
		id := "x" + strconv.Itoa(i)
		f.Append(convexfake.Entry{Identifier: "ok", ExecutionID: "ok" + strconv.Itoa(i), Time: t0.Add(time.Duration(2*i) * time.Millisecond)})
		f.Append(convexfake.Entry{Identifier: "f", ExecutionID: id, Error: "Error: " + id, Time: t0.Add(time.Duration(2*i+1) * time.Millisecond)})
		want = append(want, id)
	}
	var got []string
	cur, reads := "", 0
	for {
		p := read(t, s, tg, cur, t0.Add(-time.Second), 3)
		reads++
		if len(p.Events) > 3 {
			t.Fatalf("%d events with max 3", len(p.Events))
		}
		got = append(got, ids(p)...)
		cur = p.Cursor
		if !p.More {
			break
		}
	}
	// Three reads of at most 3, and a fourth that finds the end.
	if strings.Join(got, ",") != strings.Join(want, ",") || reads != 4 {
		t.Fatalf("got %v in %d reads, want %v in 4", got, reads, want)
	}
	// And the cursor then sits after everything.
	if p := read(t, s, tg, cur, time.Time{}, 3); len(p.Events) != 0 {
		t.Fatalf("after the end: %v", ids(p))
	}
}

func TestLongPollAgainstFakeConvexIsBoundedByTheDeadline(t *testing.T) {
	f, s, tg := setup(t, convexfake.Options{Hold: 60 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	p, err := s.Read(ctx, tg, "1700000000000", time.Time{}, 10)
	took := time.Since(start)
	if err != nil || len(p.Events) != 0 || p.Cursor != "1700000000000" {
		t.Fatalf("Read = %+v, %v", p, err)
	}
	if took < 800*time.Millisecond || took > 1600*time.Millisecond {
		t.Fatalf("Read took %v, want about 1 s (the deadline minus the margin)", took)
	}
	if n := len(f.Requests()); n != 1 {
		t.Fatalf("%d requests", n)
	}

	// MaxWait bounds it without a deadline, too.
	s2 := newSource(convex.Options{MaxWait: 300 * time.Millisecond})
	start = time.Now()
	if p, err := s2.Read(context.Background(), tg, "1700000000000", time.Time{}, 10); err != nil || len(p.Events) != 0 {
		t.Fatalf("Read = %+v, %v", p, err)
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("MaxWait 300ms: took %v", took)
	}
}

func TestLongPollAgainstFakeConvexAnswersWhenSomethingIsLogged(t *testing.T) {
	f, s, tg := setup(t, convexfake.Options{Hold: 60 * time.Second})
	go func() {
		time.Sleep(300 * time.Millisecond)
		f.Append(convexfake.Entry{Identifier: "a:b", ExecutionID: "late", Error: "Error: boom"})
	}()
	start := time.Now()
	p := read(t, s, tg, strconv.FormatInt(time.Now().Add(-time.Second).UnixMilli(), 10), time.Time{}, 10)
	if got := ids(p); len(got) != 1 || got[0] != "late" || time.Since(start) > 2*time.Second {
		t.Fatalf("events %v after %v", got, time.Since(start))
	}
}

// captureLogs sends the standard and slog loggers to a buffer for the
// test, to check that nothing logged carries the key.
func captureLogs(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	oldOut, oldFlags, oldSlog := log.Writer(), log.Flags(), slog.Default()
	log.SetOutput(&buf)
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { log.SetOutput(oldOut); log.SetFlags(oldFlags); slog.SetDefault(oldSlog) })
	return &buf
}

func TestUnauthorizedAgainstFakeConvex(t *testing.T) {
	logs := captureLogs(t)
	f := convexfake.New(t, convexfake.Options{Key: "the-right-key"})
	s := newSource(convex.Options{})
	tests := []struct {
		name   string
		key    string
		script []convexfake.Answer
	}{
		{"wrong key", key, nil},
		{"missing key", "", nil},
		{"a proxy echoing the key", key, []convexfake.Answer{{Status: 403, Body: `{"message":"key ` + key + ` refused"}`}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.Script(tt.script...)
			_, err := s.Read(context.Background(), bound(source.Target{Name: "prod", DeploymentURL: f.URL(), Key: tt.key}), "", time.Now(), 10)
			if !vp.IsKind(err, vp.KindUnauthorized) {
				t.Fatalf("err = %v (%v), want unauthorized", err, vp.KindOf(err))
			}
			var e *vp.Error
			if !asErr(err, &e) || e.Field != "deployKeyEnvVar" || !strings.Contains(err.Error(), "deployKeyEnvVar") {
				t.Fatalf("err %v does not point at deployKeyEnvVar", err)
			}
			if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "eyJ2") {
				t.Fatalf("the key is in the error: %v", err)
			}
		})
	}
	if strings.Contains(logs.String(), key) || strings.Contains(logs.String(), "the-right-key") {
		t.Fatalf("the key was logged: %s", logs)
	}
}

func asErr(err error, e **vp.Error) bool { return errors.As(err, e) }

func TestErrorsAgainstFakeConvex(t *testing.T) {
	tests := []struct {
		name  string
		ans   convexfake.Answer
		kind  vp.Kind
		retry time.Duration
	}{
		{"500", convexfake.Answer{Status: 500, Body: `{"code":"InternalServerError"}`}, vp.KindUnavailable, 0},
		{"503", convexfake.Answer{Status: 503}, vp.KindUnavailable, 0},
		{"429", convexfake.Answer{Status: 429, Body: `{"code":"RateLimited"}`}, vp.KindRateLimited, 0},
		{"429 with Retry-After", convexfake.Answer{Status: 429, Header: http.Header{"Retry-After": {"7"}}}, vp.KindRateLimited, 7 * time.Second},
		{"404", convexfake.Answer{Status: 404}, vp.KindInvalid, 0},
		{"not JSON", convexfake.Answer{Status: 200, Body: `<html>proxy</html>`}, vp.KindUnavailable, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, s, tg := setup(t, convexfake.Options{})
			f.Script(tt.ans)
			_, err := s.Read(context.Background(), tg, "", time.Now(), 10)
			if vp.KindOf(err) != tt.kind {
				t.Fatalf("err = %v (%v), want %v", err, vp.KindOf(err), tt.kind)
			}
			if tt.kind == vp.KindRateLimited {
				if d, ok := vp.RetryAfter(err); !ok || d != tt.retry {
					t.Fatalf("retry-after %v, %v; want %v", d, ok, tt.retry)
				}
			}
			// The next Read, unscripted, works.
			f.Append(convexfake.Entry{Identifier: "a", ExecutionID: "x", Error: "Error: x"})
			if p := read(t, s, tg, "", time.Now().Add(-time.Minute), 10); len(p.Events) != 1 {
				t.Fatalf("after the failure: %v", ids(p))
			}
		})
	}
	t.Run("slow answer within a short deadline", func(t *testing.T) {
		f, s, tg := setup(t, convexfake.Options{})
		f.Script(convexfake.Answer{Delay: 10 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		defer cancel()
		start := time.Now()
		p, err := s.Read(ctx, tg, "5", time.Time{}, 10)
		// Not the fake's 10 s: the Read ends with its deadline (give a loaded
		// machine a second past it).
		if err != nil || len(p.Events) != 0 || p.Cursor != "5" || time.Since(start) > 2500*time.Millisecond {
			t.Fatalf("Read = %+v, %v after %v", p, err, time.Since(start))
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		f, s, tg := setup(t, convexfake.Options{})
		f.Close()
		if _, err := s.Read(context.Background(), tg, "", time.Now(), 10); !vp.IsKind(err, vp.KindUnavailable) {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestInvalidTargets(t *testing.T) {
	s := newSource(convex.Options{})
	tests := []struct {
		name   string
		tg     source.Target
		cursor string
		field  string
	}{
		{"no URL", bound(source.Target{Name: "p", Key: "k"}), "", "deploymentUrl"},
		{"not http", bound(source.Target{Name: "p", Key: "k", DeploymentURL: "ftp://x.convex.cloud"}), "", "deploymentUrl"},
		{"no host", bound(source.Target{Name: "p", Key: "k", DeploymentURL: "https://"}), "", "deploymentUrl"},
		{"bad cursor", bound(source.Target{Name: "p", Key: "k", DeploymentURL: "https://x.convex.cloud"}), "yesterday", "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Read(context.Background(), tt.tg, tt.cursor, time.Now(), 10)
			var e *vp.Error
			if !vp.IsKind(err, vp.KindInvalid) || !asErr(err, &e) || e.Field != tt.field {
				t.Fatalf("err = %v, want invalid %s", err, tt.field)
			}
		})
	}
}

func TestRawAndPartsAreBoundedAgainstFakeConvex(t *testing.T) {
	f, s, tg := setup(t, convexfake.Options{})
	f.Append(convexfake.Entry{Identifier: "big", ExecutionID: "big-1",
		Error:    "Uncaught ConvexError: " + strings.Repeat("data ", 2000) + "\n" + strings.Repeat("    at f (x.ts:1:1)\n", 5000),
		LogLines: []string{strings.Repeat("l", 20000)}})
	p := read(t, s, tg, "", time.Now().Add(-time.Minute), 10)
	if len(p.Events) != 1 {
		t.Fatalf("events %v", ids(p))
	}
	e := p.Events[0]
	if len(e.Raw) > source.MaxRawBytes || len(e.Raw) < source.MaxRawBytes/2 || len(e.Message) > 1024 || len(e.Stack) > 16<<10 || e.Type != "ConvexError" {
		t.Fatalf("raw %d, message %d, stack %d bytes, type %q", len(e.Raw), len(e.Message), len(e.Stack), e.Type)
	}
}

func TestIDWithoutExecutionIDAgainstFakeConvex(t *testing.T) {
	f, s, tg := setup(t, convexfake.Options{})
	at := time.Now().Add(-time.Second)
	f.Append(convexfake.Entry{Identifier: "old:backend", RequestID: "req-9", Error: "Error: x", Time: at})
	p := read(t, s, tg, "", time.Now().Add(-time.Minute), 10)
	if len(p.Events) != 1 || !strings.HasPrefix(p.Events[0].ID, "req-9@") {
		t.Fatalf("events %+v", p.Events)
	}
}
