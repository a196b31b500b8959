package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// clock is a settable test clock.
type clock struct{ ms atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ms.Store(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
	return c
}
func (c *clock) Now() time.Time          { return time.UnixMilli(c.ms.Load()) }
func (c *clock) Advance(d time.Duration) { c.ms.Add(d.Milliseconds()) }

var ctx = context.Background()

// env is one outbox on one backend with a test clock.
type env struct {
	st store.Store
	c  *clock
}

func (e env) outbox(t *testing.T, o outbox.Options) *outbox.Outbox {
	t.Helper()
	o.Store, o.Now = e.st, e.c.Now
	if o.Jitter == nil {
		o.Jitter = func() float64 { return 1 } // no jitter: exact schedules
	}
	ob, err := outbox.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return ob
}

func eachBackend(t *testing.T, fn func(t *testing.T, e env)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := newClock()
		fn(t, env{st: b.Open(t, c.Now), c: c})
	})
}

// domainPut is the caller's own write in the transaction.
func domainPut(id string, cond store.Cond) store.Op {
	return store.Put(store.Item{Key: store.Key{PK: "T#acme#TASK#" + id, SK: "TASK"}, Data: []byte(`{}`)}, cond)
}

func drain(t *testing.T, ob *outbox.Outbox) int {
	t.Helper()
	n, err := ob.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// counter is a handler that counts its calls by job id and fails while
// fail says so.
type counter struct {
	mu    sync.Mutex
	calls map[string]int
	fail  func(j outbox.Job) error
}

func (c *counter) handle(_ context.Context, j outbox.Job) error {
	c.mu.Lock()
	if c.calls == nil {
		c.calls = map[string]int{}
	}
	c.calls[j.ID]++
	c.mu.Unlock()
	if c.fail != nil {
		return c.fail(j)
	}
	return nil
}

func (c *counter) n(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls[id]
}

func TestEnqueueCommitsWithTheChange(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ob := e.outbox(t, outbox.Options{})
		var h counter
		if err := ob.Handle("search.index", h.handle); err != nil {
			t.Fatal(err)
		}
		// Committed with the caller's write: the job exists and runs.
		p, err := ob.Enqueue(ctx, "acme", "search.index", "task_1", []byte(`{"id":"task_1"}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.Write(ctx, append([]store.Op{domainPut("1", store.IfNotExists)}, p.Ops()...)...); err != nil {
			t.Fatal(err)
		}
		if got, err := ob.Get(ctx, "acme", p.ID()); err != nil || got.State != "ready" || got.Topic != "search.index" {
			t.Fatalf("job after commit: %+v, %v", got, err)
		}
		if n := drain(t, ob); n != 1 || h.n(p.ID()) != 1 {
			t.Fatalf("drained %d, handler ran %d times", n, h.n(p.ID()))
		}
		if _, err := ob.Get(ctx, "acme", p.ID()); !vp.IsKind(err, vp.KindNotFound) {
			t.Fatalf("job after success: %v", err)
		}
		// A failed transaction leaves no job and no dedup record.
		p2, err := ob.Enqueue(ctx, "acme", "search.index", "task_2", nil)
		if err != nil {
			t.Fatal(err)
		}
		err = e.st.Write(ctx, append([]store.Op{domainPut("2", store.IfExists)}, p2.Ops()...)...)
		if !errors.Is(err, store.ErrConditionFailed) || outbox.IsDuplicate(err) {
			t.Fatalf("failed transaction: %v (duplicate %v)", err, outbox.IsDuplicate(err))
		}
		if _, err := ob.Get(ctx, "acme", p2.ID()); !vp.IsKind(err, vp.KindNotFound) {
			t.Fatalf("a failed transaction left a job: %v", err)
		}
		if n := drain(t, ob); n != 0 {
			t.Fatalf("drained %d jobs of a failed transaction", n)
		}
		again, err := ob.Enqueue(ctx, "acme", "search.index", "task_2", nil)
		if err != nil || again.Duplicate() || len(again.Ops()) == 0 {
			t.Fatalf("the failed transaction's dedup key was remembered: %+v %v", again, err)
		}
	})
}

func TestDedup(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ob := e.outbox(t, outbox.Options{DedupWindow: time.Hour})
		var h counter
		_ = ob.Handle("github.comment", h.handle)
		enqueue := func(key string) outbox.Pending {
			t.Helper()
			p, err := ob.Enqueue(ctx, "acme", "github.comment", key, []byte("hi"))
			if err != nil {
				t.Fatal(err)
			}
			return p
		}
		first := enqueue("delivery-1")
		if err := e.st.Write(ctx, first.Ops()...); err != nil {
			t.Fatal(err)
		}
		// A redelivered webhook: no ops, and its own write commits.
		dup := enqueue("delivery-1")
		if !dup.Duplicate() || len(dup.Ops()) != 0 {
			t.Fatalf("second enqueue of a key: %+v", dup)
		}
		if err := e.st.Write(ctx, append([]store.Op{domainPut("w", store.Always)}, dup.Ops()...)...); err != nil {
			t.Fatal(err)
		}
		// Still a duplicate once the job is done.
		drain(t, ob)
		if !enqueue("delivery-1").Duplicate() {
			t.Fatal("a key was forgotten when its job finished")
		}
		if h.n(first.ID()) != 1 {
			t.Fatalf("handler ran %d times", h.n(first.ID()))
		}
		// Two transactions racing with one key: the second fails, recognisably.
		a, b := enqueue("delivery-2"), enqueue("delivery-2")
		if a.ID() != b.ID() {
			t.Fatal("the same key gave two ids")
		}
		if err := e.st.Write(ctx, append([]store.Op{domainPut("a", store.Always)}, a.Ops()...)...); err != nil {
			t.Fatal(err)
		}
		err := e.st.Write(ctx, append([]store.Op{domainPut("b", store.Always)}, b.Ops()...)...)
		if !outbox.IsDuplicate(err) {
			t.Fatalf("racing duplicate: %v", err)
		}
		// Keys are per tenant and per topic; past the window a key is new.
		if p, _ := ob.Enqueue(ctx, "other", "github.comment", "delivery-1", nil); p.Duplicate() || p.ID() == first.ID() {
			t.Fatal("a key was shared across tenants")
		}
		e.c.Advance(2 * time.Hour)
		if enqueue("delivery-1").Duplicate() {
			t.Fatal("a key outlived the dedup window")
		}
	})
}

// The delays after each failure double from Backoff up to MaxBackoff, and
// the jitter takes them down to no less than half.
func TestBackoffSchedule(t *testing.T) {
	tests := []struct {
		name   string
		jitter float64
		want   []time.Duration
	}{
		{"no jitter", 1, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}},
		{"full jitter", 0, []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, e env) {
				ob := e.outbox(t, outbox.Options{Backoff: time.Second, MaxBackoff: 10 * time.Second, MaxAttempts: 10,
					Jitter: func() float64 { return tt.jitter }})
				_ = ob.Handle("push", func(context.Context, outbox.Job) error { return vp.Unavailable("push", errors.New("apns down")) })
				p, _ := ob.Enqueue(ctx, "acme", "push", "", nil)
				if err := e.st.Write(ctx, p.Ops()...); err != nil {
					t.Fatal(err)
				}
				for i, want := range tt.want {
					if n := drain(t, ob); n != 1 {
						t.Fatalf("failure %d: drained %d", i+1, n)
					}
					got, err := ob.Get(ctx, "acme", p.ID())
					if err != nil {
						t.Fatal(err)
					}
					if d := got.DueAt.Sub(e.c.Now()); d != want || got.Attempts != i+1 || got.LastError == "" {
						t.Fatalf("after failure %d: retry in %v (attempts %d, %q), want %v", i+1, d, got.Attempts, got.LastError, want)
					}
					e.c.Advance(want - time.Millisecond)
					if n := drain(t, ob); n != 0 {
						t.Fatalf("failure %d: retried before its backoff", i+1)
					}
					e.c.Advance(time.Millisecond)
				}
			})
		})
	}
	// The default jitter stays within [d/2, d].
	ob, _ := outbox.New(outbox.Options{Store: nopStore{}, Backoff: time.Second})
	for range 100 {
		if d := ob.Delay(3); d < 2*time.Second || d > 4*time.Second {
			t.Fatalf("jittered delay %v outside [2s, 4s]", d)
		}
	}
}

type nopStore struct{ store.Store }

func TestDeadLettersAfterMaxAttempts(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ob := e.outbox(t, outbox.Options{MaxAttempts: 3, Backoff: time.Second})
		broken := true
		var h counter
		h.fail = func(j outbox.Job) error {
			if broken {
				return fmt.Errorf("github said 502 on attempt %d", j.Attempt)
			}
			return nil
		}
		_ = ob.Handle("github.comment", h.handle)
		p, _ := ob.Enqueue(ctx, "acme", "github.comment", "issue-7", []byte("x"))
		other, _ := ob.Enqueue(ctx, "beta", "github.comment", "issue-7", []byte("x"))
		if err := e.st.Write(ctx, append(p.Ops(), other.Ops()...)...); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			drain(t, ob)
			e.c.Advance(time.Minute)
		}
		if h.n(p.ID()) != 3 {
			t.Fatalf("handler ran %d times, want 3", h.n(p.ID()))
		}
		if n := drain(t, ob); n != 0 || h.n(p.ID()) != 3 {
			t.Fatal("a dead letter was delivered")
		}
		all, err := ob.DeadLetters(ctx, outbox.DeadQuery{})
		if err != nil || len(all) != 2 {
			t.Fatalf("dead letters: %+v, %v", all, err)
		}
		dead, err := ob.DeadLetters(ctx, outbox.DeadQuery{Tenant: "acme"})
		if err != nil || len(dead) != 1 {
			t.Fatalf("acme's dead letters: %+v, %v", dead, err)
		}
		d := dead[0]
		if d.ID != p.ID() || d.Tenant != "acme" || d.Topic != "github.comment" || d.Attempts != 3 ||
			d.LastError != "github said 502 on attempt 3" || d.DeadAt.IsZero() || d.EnqueuedAt.IsZero() || d.FailedAt.IsZero() {
			t.Fatalf("dead letter %+v", d)
		}
		// Retry (found by id alone): delivered again, now succeeding.
		broken = false
		if _, err := ob.Retry(ctx, "", p.ID()); err != nil {
			t.Fatal(err)
		}
		if _, err := ob.Retry(ctx, "acme", p.ID()); !vp.IsKind(err, vp.KindConflict) {
			t.Fatalf("retry of a ready job: %v", err)
		}
		if n := drain(t, ob); n != 1 || h.n(p.ID()) != 4 {
			t.Fatalf("after retry: drained %d, calls %d", n, h.n(p.ID()))
		}
		// Discard: gone, and its key stays a duplicate.
		if _, err := ob.Discard(ctx, "", other.ID()); err != nil {
			t.Fatal(err)
		}
		if left, _ := ob.DeadLetters(ctx, outbox.DeadQuery{}); len(left) != 0 {
			t.Fatalf("dead letters left: %+v", left)
		}
		if _, err := ob.Discard(ctx, "", other.ID()); !vp.IsKind(err, vp.KindNotFound) {
			t.Fatalf("second discard: %v", err)
		}
		if again, _ := ob.Enqueue(ctx, "beta", "github.comment", "issue-7", nil); !again.Duplicate() {
			t.Fatal("a discarded job's key was forgotten")
		}
	})
}

func TestErrorKindsDecideTheRetry(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		wantState string
		wantIn    time.Duration // next delivery, for a retry
	}{
		{"rate-limited with a retry-after", vp.RateLimited("github", 42*time.Second, nil), "ready", 42 * time.Second},
		{"rate-limited without", vp.RateLimited("github", 0, nil), "ready", time.Second},
		{"unavailable", vp.Unavailable("push", errors.New("503")), "ready", time.Second},
		{"plain error", errors.New("boom"), "ready", time.Second},
		{"permanent", outbox.Permanent(errors.New("repository deleted")), "dead", 0},
		{"panic", nil, "ready", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eachBackend(t, func(t *testing.T, e env) {
				ob := e.outbox(t, outbox.Options{Backoff: time.Second})
				calls := 0
				_ = ob.Handle("x", func(context.Context, outbox.Job) error {
					calls++
					if tt.err == nil {
						panic("bad payload")
					}
					return tt.err
				})
				p, _ := ob.Enqueue(ctx, "acme", "x", "", nil)
				_ = e.st.Write(ctx, p.Ops()...)
				drain(t, ob)
				got, err := ob.Get(ctx, "acme", p.ID())
				if err != nil || got.State != tt.wantState || got.LastError == "" {
					t.Fatalf("after failure: %+v, %v", got, err)
				}
				if tt.wantState == "dead" {
					return
				}
				if d := got.DueAt.Sub(e.c.Now()); d != tt.wantIn {
					t.Fatalf("retry in %v, want %v", d, tt.wantIn)
				}
				e.c.Advance(tt.wantIn - time.Millisecond)
				drain(t, ob)
				e.c.Advance(time.Millisecond)
				drain(t, ob)
				if calls != 2 {
					t.Fatalf("handler ran %d times, want 2 (not before the retry-after, then once)", calls)
				}
			})
		})
	}
}

// Many runners draining one job: exactly one runs it.
func TestConcurrentDrainRunsOnce(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		var ran atomic.Int32
		obs := make([]*outbox.Outbox, 8) // as if separate processes
		for i := range obs {
			obs[i] = e.outbox(t, outbox.Options{})
			_ = obs[i].Handle("once", func(context.Context, outbox.Job) error {
				ran.Add(1)
				time.Sleep(5 * time.Millisecond) // hold the lease while others try
				return nil
			})
		}
		for round := range 5 {
			ran.Store(0)
			p, _ := obs[0].Enqueue(ctx, "acme", "once", "", nil)
			if err := e.st.Write(ctx, p.Ops()...); err != nil {
				t.Fatal(err)
			}
			var wg sync.WaitGroup
			for i := range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ob := obs[i%len(obs)]
					if i%2 == 0 {
						_, _ = ob.Drain(ctx)
					} else {
						ob.Flush(ctx, p) // the kicked path races the poll
					}
				}()
			}
			wg.Wait()
			if n := ran.Load(); n != 1 {
				t.Fatalf("round %d: the handler ran %d times", round, n)
			}
		}
	})
}

// Each subscriber of an event has its own attempts: one failing does not
// replay the others.
func TestSubscribersRetryIndependently(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ob := e.outbox(t, outbox.Options{MaxAttempts: 2, Backoff: time.Second})
		var ok, flaky, dead counter
		flaky.fail = func(j outbox.Job) error {
			if j.Attempt == 1 {
				return vp.Unavailable("github", errors.New("502"))
			}
			return nil
		}
		dead.fail = func(outbox.Job) error { return errors.New("always") }
		for name, c := range map[string]*counter{"mission.autocomplete": &ok, "github.comment": &flaky, "device.push": &dead} {
			if err := ob.Subscribe("task.completed", name, c.handle); err != nil {
				t.Fatal(err)
			}
		}
		p, err := ob.Publish(ctx, "acme", "task.completed", "task_9", []byte(`{"task":"task_9"}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.Write(ctx, append([]store.Op{domainPut("9", store.Always)}, p.Ops()...)...); err != nil {
			t.Fatal(err)
		}
		ob.Flush(ctx, p) // fan-out and every delivery, right away
		total := func(c *counter) int {
			c.mu.Lock()
			defer c.mu.Unlock()
			n := 0
			for _, v := range c.calls {
				n += v
			}
			return n
		}
		if total(&ok) != 1 || total(&flaky) != 1 || total(&dead) != 1 {
			t.Fatalf("first pass: %d %d %d", total(&ok), total(&flaky), total(&dead))
		}
		e.c.Advance(time.Minute)
		drain(t, ob)
		e.c.Advance(time.Minute)
		drain(t, ob)
		if total(&ok) != 1 || total(&flaky) != 2 || total(&dead) != 2 {
			t.Fatalf("after retries: ok %d flaky %d dead %d", total(&ok), total(&flaky), total(&dead))
		}
		dl, _ := ob.DeadLetters(ctx, outbox.DeadQuery{Tenant: "acme"})
		if len(dl) != 1 || dl[0].Subscriber != "device.push" || dl[0].Topic != "task.completed" {
			t.Fatalf("dead letters: %+v", dl)
		}
		// Deliveries carry the event; their ids are stable per subscriber.
		ok.mu.Lock()
		for id := range ok.calls {
			if id == p.ID() {
				t.Error("a delivery reused the event's id")
			}
		}
		ok.mu.Unlock()
		// Registration is closed once the outbox runs.
		if err := ob.Subscribe("task.completed", "late", ok.handle); !vp.IsKind(err, vp.KindConflict) {
			t.Fatalf("late subscribe: %v", err)
		}
	})
}

func TestEventWithoutSubscribersIsDropped(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ob := e.outbox(t, outbox.Options{})
		p, _ := ob.Publish(ctx, "acme", "task.created", "", nil)
		_ = e.st.Write(ctx, p.Ops()...)
		if n := drain(t, ob); n != 1 {
			t.Fatalf("drained %d", n)
		}
		if _, err := ob.Get(ctx, "acme", p.ID()); !vp.IsKind(err, vp.KindNotFound) {
			t.Fatalf("event left behind: %v", err)
		}
	})
}

// A job whose topic has no handler in this process is not lost: it is
// retried, then dead-lettered where an admin sees it.
func TestJobWithoutHandlerEndsInDeadLetters(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ob := e.outbox(t, outbox.Options{MaxAttempts: 2})
		p, _ := ob.Enqueue(ctx, "acme", "unwired", "", nil)
		_ = e.st.Write(ctx, p.Ops()...)
		drain(t, ob)
		e.c.Advance(time.Hour)
		drain(t, ob)
		dl, _ := ob.DeadLetters(ctx, outbox.DeadQuery{})
		if len(dl) != 1 || dl[0].ID != p.ID() {
			t.Fatalf("dead letters: %+v", dl)
		}
	})
}

// A runner that dies holding a lease: the job runs again after the lease,
// and a runner that dies on the last attempt leaves a dead letter.
func TestExpiredLeaseIsDeliveredAgain(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ob := e.outbox(t, outbox.Options{Lease: 30 * time.Second, MaxAttempts: 2})
		var h counter
		hang := make(chan struct{})
		h.fail = func(j outbox.Job) error {
			if j.Attempt <= 2 {
				<-hang // "dies": never returns within the test's clock
			}
			return nil
		}
		_ = ob.Handle("slow", h.handle)
		p, _ := ob.Enqueue(ctx, "acme", "slow", "", nil)
		_ = e.st.Write(ctx, p.Ops()...)
		var wg sync.WaitGroup
		for range 2 {
			wg.Add(1)
			go func() { defer wg.Done(); _, _ = ob.Drain(ctx) }()
			deadline := time.Now().Add(5 * time.Second)
			for got, _ := ob.Get(ctx, "acme", p.ID()); got.Attempts == 0 || got.DueAt.Before(e.c.Now()); got, _ = ob.Get(ctx, "acme", p.ID()) {
				if time.Now().After(deadline) {
					t.Fatal("the job was not leased")
				}
				time.Sleep(time.Millisecond)
			}
			e.c.Advance(31 * time.Second)
		}
		drain(t, ob)
		dl, _ := ob.DeadLetters(ctx, outbox.DeadQuery{})
		if len(dl) != 1 || dl[0].Attempts != 2 {
			t.Fatalf("dead letters after two lost leases: %+v", dl)
		}
		close(hang)
		wg.Wait()
	})
}

func TestValidation(t *testing.T) {
	ob, _ := outbox.New(outbox.Options{Store: nopStore{}})
	tests := []struct {
		name                 string
		tenant, topic, dedup string
		payload              int
		kind                 vp.Kind
	}{
		{"no tenant", "", "x", "", 0, vp.KindInvalid},
		{"tenant with #", "a#b", "x", "", 0, vp.KindInvalid},
		{"upper-case topic", "acme", "Task.Done", "", 0, vp.KindInvalid},
		{"empty topic", "acme", "", "", 0, vp.KindInvalid},
		{"long dedup key", "acme", "x", string(make([]byte, outbox.MaxDedupKey+1)), 0, vp.KindTooLarge},
		{"large payload", "acme", "x", "", outbox.MaxPayloadBytes + 1, vp.KindTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ob.Enqueue(ctx, tt.tenant, tt.topic, tt.dedup, make([]byte, tt.payload))
			if !vp.IsKind(err, tt.kind) {
				t.Fatalf("got %v, want %v", err, tt.kind)
			}
		})
	}
	if _, err := outbox.New(outbox.Options{}); !vp.IsKind(err, vp.KindInvalid) {
		t.Fatalf("New without a store: %v", err)
	}
	h := func(context.Context, outbox.Job) error { return nil }
	if err := ob.Handle("a", h); err != nil {
		t.Fatal(err)
	}
	if err := ob.Handle("a", h); !vp.IsKind(err, vp.KindConflict) {
		t.Fatalf("second handler: %v", err)
	}
	if err := ob.Subscribe("a", "s", h); !vp.IsKind(err, vp.KindConflict) {
		t.Fatalf("subscriber on a job topic: %v", err)
	}
}
