package storequeue_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
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

func eachBackend(t *testing.T, fn func(t *testing.T, st store.Store, c *clock)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := newClock()
		fn(t, b.Open(t, c.Now), c)
	})
}

func ctx() context.Context { return context.Background() }

func TestEnqueueReceiveAck(t *testing.T) {
	eachBackend(t, func(t *testing.T, st store.Store, c *clock) {
		q := storequeue.New(storequeue.Options{Store: st, Now: c.Now})
		if err := q.Enqueue(ctx(), queue.Job{Kind: "embed", Tenant: "acme", Payload: []byte(`{"id":"m1"}`)},
			queue.Job{ID: "job_2", Kind: "embed", Tenant: "acme"}, queue.Job{Kind: "reembed"}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-q.Ready():
		default:
			t.Fatal("Enqueue did not wake the consumer")
		}
		jobs, err := q.Receive(ctx(), 10, time.Minute)
		if err != nil || len(jobs) != 3 {
			t.Fatalf("received %d jobs (%v), want 3", len(jobs), err)
		}
		for _, j := range jobs {
			if j.Attempts != 1 || j.ID == "" {
				t.Fatalf("job %+v", j)
			}
			if j.Tenant == "acme" && j.ID != "job_2" && string(j.Payload) != `{"id":"m1"}` {
				t.Fatalf("payload %q", j.Payload)
			}
		}
		// Leased: nobody else gets them.
		if again, _ := q.Receive(ctx(), 10, time.Minute); len(again) != 0 {
			t.Fatalf("leased jobs delivered again: %+v", again)
		}
		for _, j := range jobs {
			if err := q.Ack(ctx(), j); err != nil {
				t.Fatal(err)
			}
		}
		if err := q.Ack(ctx(), jobs[0]); err != nil {
			t.Fatalf("second ack: %v", err)
		}
		c.Advance(time.Hour)
		if again, _ := q.Receive(ctx(), 10, time.Minute); len(again) != 0 {
			t.Fatalf("acked jobs delivered again: %+v", again)
		}
		// A duplicate id is refused.
		if err := q.Enqueue(ctx(), queue.Job{ID: "dup", Kind: "x"}); err != nil {
			t.Fatal(err)
		}
		if err := q.Enqueue(ctx(), queue.Job{ID: "dup", Kind: "x"}); !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("duplicate id: %v", err)
		}
		if err := q.Enqueue(ctx(), queue.Job{ID: "a#b", Kind: "x"}); err == nil {
			t.Fatal("'#' in an id accepted")
		}
		if err := q.Enqueue(ctx(), queue.Job{ID: "nokind"}); err == nil {
			t.Fatal("job without kind accepted")
		}
	})
}

func TestVisibilityTimeoutRedelivers(t *testing.T) {
	eachBackend(t, func(t *testing.T, st store.Store, c *clock) {
		q := storequeue.New(storequeue.Options{Store: st, Now: c.Now})
		_ = q.Enqueue(ctx(), queue.Job{ID: "j", Kind: "embed", Tenant: "acme"})
		first, _ := q.Receive(ctx(), 1, 30*time.Second)
		c.Advance(29 * time.Second)
		if got, _ := q.Receive(ctx(), 1, 30*time.Second); len(got) != 0 {
			t.Fatal("delivered again before the visibility timeout")
		}
		c.Advance(2 * time.Second)
		second, _ := q.Receive(ctx(), 1, 30*time.Second)
		if len(first) != 1 || len(second) != 1 || second[0].Attempts != 2 {
			t.Fatalf("first %+v second %+v", first, second)
		}
		// The stale delivery's Fail is ignored: it does not cut the new lease short.
		if err := q.Fail(ctx(), first[0], errors.New("late")); err != nil {
			t.Fatal(err)
		}
		if got, _ := q.Receive(ctx(), 1, 30*time.Second); len(got) != 0 {
			t.Fatal("a stale Fail released the current lease")
		}
	})
}

func TestFailBacksOffThenDeadLetters(t *testing.T) {
	eachBackend(t, func(t *testing.T, st store.Store, c *clock) {
		q := storequeue.New(storequeue.Options{Store: st, Now: c.Now, MaxAttempts: 4, Backoff: time.Second, MaxBackoff: 3 * time.Second})
		_ = q.Enqueue(ctx(), queue.Job{ID: "j", Kind: "embed", Tenant: "acme", Payload: []byte("p")})
		wantDelay := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second} // doubled, capped
		for attempt := 1; attempt <= 4; attempt++ {
			jobs, err := q.Receive(ctx(), 5, time.Minute)
			if err != nil || len(jobs) != 1 || jobs[0].Attempts != attempt {
				t.Fatalf("attempt %d: %+v %v", attempt, jobs, err)
			}
			if err := q.Fail(ctx(), jobs[0], fmt.Errorf("boom %d", attempt)); err != nil {
				t.Fatal(err)
			}
			if attempt == 4 {
				break
			}
			d := wantDelay[attempt-1]
			c.Advance(d - time.Millisecond)
			if got, _ := q.Receive(ctx(), 5, time.Minute); len(got) != 0 {
				t.Fatalf("attempt %d: delivered before its %s backoff", attempt, d)
			}
			c.Advance(time.Millisecond)
		}
		c.Advance(time.Hour)
		if got, _ := q.Receive(ctx(), 5, time.Minute); len(got) != 0 {
			t.Fatalf("a dead-lettered job was delivered: %+v", got)
		}
		dead, err := q.DeadLetters(ctx(), 10)
		if err != nil || len(dead) != 1 || dead[0].ID != "j" || dead[0].LastError != "boom 4" || string(dead[0].Payload) != "p" {
			t.Fatalf("dead letters %+v %v", dead, err)
		}
		if err := q.Redrive(ctx(), dead[0].Job); err != nil {
			t.Fatal(err)
		}
		jobs, _ := q.Receive(ctx(), 5, time.Minute)
		if len(jobs) != 1 || jobs[0].Attempts != 1 {
			t.Fatalf("redriven job: %+v", jobs)
		}
		if dead, _ := q.DeadLetters(ctx(), 10); len(dead) != 0 {
			t.Fatalf("still dead after redrive: %+v", dead)
		}
	})
}

func TestExpiredLeasesDeadLetter(t *testing.T) {
	eachBackend(t, func(t *testing.T, st store.Store, c *clock) {
		q := storequeue.New(storequeue.Options{Store: st, Now: c.Now, MaxAttempts: 2})
		_ = q.Enqueue(ctx(), queue.Job{ID: "j", Kind: "embed", Tenant: "acme"})
		for i := 0; i < 2; i++ {
			if got, _ := q.Receive(ctx(), 1, time.Second); len(got) != 1 {
				t.Fatalf("delivery %d missing", i+1)
			}
			c.Advance(2 * time.Second) // the worker died: no ack, no fail
		}
		if got, _ := q.Receive(ctx(), 1, time.Second); len(got) != 0 {
			t.Fatalf("delivered a third time: %+v", got)
		}
		if dead, _ := q.DeadLetters(ctx(), 10); len(dead) != 1 || dead[0].LastError == "" {
			t.Fatalf("dead letters %+v", dead)
		}
	})
}

// TestWorkersNeverShareAJob races workers over one queue: every job is
// delivered exactly once while its lease holds.
func TestWorkersNeverShareAJob(t *testing.T) {
	eachBackend(t, func(t *testing.T, st store.Store, c *clock) {
		q := storequeue.New(storequeue.Options{Store: st, Now: c.Now})
		const n = 120
		var jobs []queue.Job
		for i := 0; i < n; i++ {
			jobs = append(jobs, queue.Job{ID: fmt.Sprintf("job_%03d", i), Kind: "embed", Tenant: "acme"})
		}
		if err := q.Enqueue(ctx(), jobs...); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		deliveries := map[string]int{}
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for empty := 0; empty < 3; {
					got, err := q.Receive(ctx(), 4, time.Hour)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						empty++
						continue
					}
					empty = 0
					mu.Lock()
					for _, j := range got {
						deliveries[j.ID]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(deliveries) != n {
			t.Fatalf("%d distinct jobs delivered, want %d", len(deliveries), n)
		}
		for id, k := range deliveries {
			if k != 1 {
				t.Fatalf("job %s delivered %d times within its lease", id, k)
			}
		}
	})
}

func TestEnqueueOpsJoinTheCallersTransaction(t *testing.T) {
	eachBackend(t, func(t *testing.T, st store.Store, c *clock) {
		q := storequeue.New(storequeue.Options{Store: st, Now: c.Now})
		ops, err := q.EnqueueOps(st, queue.Job{ID: "j1", Kind: "embed", Tenant: "acme"})
		if err != nil {
			t.Fatal(err)
		}
		row := store.Item{Key: store.Key{PK: "T#acme#ROW", SK: "ROW"}, Data: []byte(`{}`)}
		// A failing transaction enqueues nothing.
		bad := append([]store.Op{store.Put(row, store.IfExists)}, ops...)
		if err := st.Write(ctx(), bad...); !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("write: %v", err)
		}
		if got, _ := q.Receive(ctx(), 5, time.Minute); len(got) != 0 {
			t.Fatalf("job of a failed transaction delivered: %+v", got)
		}
		good := append([]store.Op{store.Put(row, store.IfNotExists)}, ops...)
		if err := st.Write(ctx(), good...); err != nil {
			t.Fatal(err)
		}
		if got, _ := q.Receive(ctx(), 5, time.Minute); len(got) != 1 || got[0].ID != "j1" {
			t.Fatalf("got %+v", got)
		}
		other, err := sqlite.Open(ctx(), sqlite.Options{Path: filepath.Join(t.TempDir(), "other.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		if _, err := q.EnqueueOps(other, queue.Job{Kind: "x"}); !errors.Is(err, storequeue.ErrOtherStore) {
			t.Fatalf("other store: %v", err)
		}
	})
}
