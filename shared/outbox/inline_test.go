package outbox_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
)

// TestInlineJob: a job the caller runs itself after its commit runs once,
// leaves nothing behind, and is not taken by a worker while leased; a
// failed inline run is the worker's after the backoff; a caller that died
// before running it leaves it to the worker once the lease ends.
func TestInlineJob(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := &counter{}
		ob := e.outbox(t, outbox.Options{Lease: time.Minute})
		if err := ob.Handle("index", c.handle); err != nil {
			t.Fatal(err)
		}
		commit := func(id string) outbox.Pending {
			p, err := ob.EnqueueInline(ctx, "acme", "index", []byte(`{"id":"`+id+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			if err := e.st.Write(ctx, append([]store.Op{domainPut(id, store.IfNotExists)}, p.Ops()...)...); err != nil {
				t.Fatal(err)
			}
			return p
		}

		ok := commit("t1")
		if n := drain(t, ob); n != 0 {
			t.Fatalf("a worker ran %d jobs leased to their caller", n)
		}
		ob.RunInline(ctx, ok)
		if got := c.n(ok.ID()); got != 1 {
			t.Fatalf("inline run: %d calls, want 1", got)
		}
		if _, err := e.st.Get(ctx, store.Key{PK: "T#acme#OB#" + ok.ID(), SK: "JOB"}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("job left after a successful inline run: %v", err)
		}

		failing := commit("t2")
		c.fail = func(j outbox.Job) error {
			if j.Attempt == 1 {
				return errors.New("index down")
			}
			return nil
		}
		ob.RunInline(ctx, failing)
		e.c.Advance(2 * time.Second) // past the first backoff (1s), before the lease would end
		drain(t, ob)
		if got := c.n(failing.ID()); got != 2 {
			t.Fatalf("failed inline run then worker: %d calls, want 2", got)
		}

		orphan := commit("t3") // the caller dies before RunInline
		drain(t, ob)
		if got := c.n(orphan.ID()); got != 0 {
			t.Fatalf("worker ran a leased job early: %d calls", got)
		}
		e.c.Advance(61 * time.Second)
		drain(t, ob)
		if got := c.n(orphan.ID()); got != 1 {
			t.Fatalf("orphaned inline job after its lease: %d calls, want 1", got)
		}
	})
}

// TestPublishInline: the deliveries of an event its caller delivers itself
// commit with the change, one per subscriber, run once each in the
// caller's goroutine and leave nothing behind; a failing subscriber is
// retried by the worker without replaying the other; a caller that died
// leaves both to the worker once the lease ends; no subscriber, no ops.
func TestPublishInline(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		ob := e.outbox(t, outbox.Options{Lease: time.Minute})
		var mu sync.Mutex
		calls := map[string]int{}
		var failGithub bool
		sub := func(name string) outbox.Handler {
			return func(_ context.Context, j outbox.Job) error {
				mu.Lock()
				defer mu.Unlock()
				calls[name]++
				if name == "github" && failGithub {
					failGithub = false
					return errors.New("github down")
				}
				return nil
			}
		}
		for _, name := range []string{"mission", "github"} {
			if err := ob.Subscribe("task.finished", name, sub(name)); err != nil {
				t.Fatal(err)
			}
		}
		count := func(name string) int {
			mu.Lock()
			defer mu.Unlock()
			return calls[name]
		}
		commit := func(id string) outbox.Pending {
			p, err := ob.PublishInline(ctx, "acme", "task.finished", []byte(`{"id":"`+id+`"}`))
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Ops()) != 2 {
				t.Fatalf("%d ops, want one delivery per subscriber", len(p.Ops()))
			}
			if err := e.st.Write(ctx, append([]store.Op{domainPut(id, store.IfNotExists)}, p.Ops()...)...); err != nil {
				t.Fatal(err)
			}
			return p
		}

		ok := commit("t1")
		if n := drain(t, ob); n != 0 {
			t.Fatalf("a worker ran %d deliveries leased to their caller", n)
		}
		ob.RunInline(ctx, ok)
		if count("mission") != 1 || count("github") != 1 {
			t.Fatalf("inline deliveries: %v", calls)
		}
		e.c.Advance(61 * time.Second)
		if n := drain(t, ob); n != 0 {
			t.Fatalf("%d deliveries left after the inline run", n)
		}

		failing := commit("t2")
		failGithub = true
		ob.RunInline(ctx, failing)
		e.c.Advance(2 * time.Second)
		drain(t, ob)
		if count("mission") != 2 || count("github") != 3 {
			t.Fatalf("after a failed delivery and the worker: %v, want mission 2, github 3", calls)
		}

		commit("t3") // the caller dies before RunInline
		e.c.Advance(61 * time.Second)
		drain(t, ob)
		if count("mission") != 3 || count("github") != 4 {
			t.Fatalf("orphaned deliveries after their lease: %v", calls)
		}

		none, err := ob.PublishInline(ctx, "acme", "nobody.listens", nil)
		if err != nil || len(none.Ops()) != 0 {
			t.Fatalf("an event without subscribers: %d ops, %v", len(none.Ops()), err)
		}
	})
}

// TestInlineRemovalsBatched: with RemovalBatch, inline jobs are removed
// together after their effects, off the caller's path; Close writes what
// still waits; a job whose removal was lost only runs again after its
// lease (the handler is idempotent).
func TestInlineRemovalsBatched(t *testing.T) {
	eachBackend(t, func(t *testing.T, e env) {
		c := &counter{}
		ob := e.outbox(t, outbox.Options{Lease: time.Minute, RemovalBatch: time.Hour}) // only Close or a full batch writes
		if err := ob.Handle("index", c.handle); err != nil {
			t.Fatal(err)
		}
		var ps []outbox.Pending
		for i := range 150 { // more than one batch of store.MaxTransactOps
			p, err := ob.EnqueueInline(ctx, "acme", "index", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.st.Write(ctx, append([]store.Op{domainPut(fmt.Sprint(i), store.IfNotExists)}, p.Ops()...)...); err != nil {
				t.Fatal(err)
			}
			ob.RunInline(ctx, p)
			ps = append(ps, p)
		}
		ob.Close()
		for _, p := range ps {
			if got := c.n(p.ID()); got != 1 {
				t.Fatalf("job %s ran %d times, want 1", p.ID(), got)
			}
			if _, err := e.st.Get(ctx, store.Key{PK: "T#acme#OB#" + p.ID(), SK: "JOB"}); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("job %s not removed after Close: %v", p.ID(), err)
			}
		}
		e.c.Advance(2 * time.Minute)
		if n := drain(t, ob); n != 0 {
			t.Fatalf("a worker ran %d jobs whose removals were written", n)
		}
	})
}
