package activity_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

// counting counts the reads made through it.
type counting struct {
	store.Store
	reads atomic.Int64
}

func (c *counting) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.reads.Add(1)
	return c.Store.Get(ctx, k)
}

func (c *counting) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	c.reads.Add(1)
	return c.Store.Query(ctx, q)
}

// On AWS each Lambda serves one call and nothing tells it of another's
// write: a waiter reads its sources again with backoff (100 ms doubling to
// 1 s). Two service graphs over one table stand for two Lambdas.
func TestPollsTheStoreWithBackoffWhereNothingTellsIt(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		cs := &counting{Store: st}
		waiter, other := build(t, cs, activity.Options{}), build(t, st, activity.Options{})

		// The reads of one look: a wait that does not hold.
		cs.reads.Store(0)
		if _, err := waiter.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(0)}); err != nil {
			t.Fatal(err)
		}
		perLook := cs.reads.Load()
		if perLook == 0 {
			t.Fatal("a look read nothing")
		}
		cs.reads.Store(0)
		res, err := waiter.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(3_000)})
		if err != nil || !res.TimedOut {
			t.Fatalf("got %v (err %v); want the timeout", kinds(res), err)
		}
		// Looks at 0, 0.1, 0.3, 0.7, 1.5, 2.5 s and at the deadline.
		looks := cs.reads.Load() / perLook
		t.Logf("%s: %d reads (%d looks) in a 3 s wait", b.Name, cs.reads.Load(), looks)
		if looks < 5 || looks > 9 {
			t.Fatalf("%d looks in 3 s; want about 7 (backoff 100 ms doubling to 1 s)", looks)
		}

		since := time.Now().UnixMilli()
		got := waitThen(waiter, bob, activity.Input{TimeoutMs: ms(10_000), Since: &since})
		time.Sleep(1500 * time.Millisecond) // the backoff is at its 1 s ceiling
		send(t, other, "bob", "from another Lambda")
		sent := time.Now()
		a := <-got
		if a.err != nil || a.res.Count != 1 {
			t.Fatalf("got %v (timedOut %v, err %v)", kinds(a.res), a.res.TimedOut, a.err)
		}
		if lat := a.at.Sub(sent); lat > 1300*time.Millisecond {
			t.Fatalf("seen %v after the send; want within the 1 s ceiling of the backoff", lat)
		}
	})
}
