package table_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestConflictsRacersOneTransaction: 16 goroutines each move one unit from
// one widget to another in one transaction conditional on both versions
// read. Conflicts.Retry rereads after every lost write, so every move
// lands exactly once and the total never changes, on both backends.
func TestConflictsRacersOneTransaction(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		ctx := context.Background()
		st := b.Open(t, nil)
		from, to := widget{ID: "from", Owner: "bob", N: 100}, widget{ID: "to", Owner: "bob"}
		for _, w := range []widget{from, to} {
			it, err := widgets.Item("op", "acme", w)
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Write(ctx, store.Put(it, store.IfNotExists)); err != nil {
				t.Fatal(err)
			}
		}
		const racers = 16
		var wg sync.WaitGroup
		errs := make(chan error, racers)
		attempts := make(chan int, racers)
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n := 0
				err := table.Conflicts{Op: "move", Field: "widgetId", ID: fmt.Sprint("move ", i)}.Retry(ctx, func() error {
					n++
					f, fit, err := widgets.Get(ctx, st, "move", "widgetId", "from", widgets.Key("acme", from))
					if err != nil {
						return err
					}
					g, git, err := widgets.Get(ctx, st, "move", "widgetId", "to", widgets.Key("acme", to))
					if err != nil {
						return err
					}
					f.N, g.N = f.N-1, g.N+1
					fi, _ := widgets.Item("move", "acme", f)
					gi, _ := widgets.Item("move", "acme", g)
					return st.Write(ctx, store.Put(fi, store.IfVersion(fit.Version)), store.Put(gi, store.IfVersion(git.Version)))
				})
				errs <- err
				attempts <- n
			}()
		}
		wg.Wait()
		close(errs)
		close(attempts)
		conflicts := 0
		for err := range errs {
			if vp.IsKind(err, vp.KindConflict) {
				conflicts++ // allowed only past MaxUpdateAttempts
			} else if err != nil {
				t.Fatal(err)
			}
		}
		total := 0
		for n := range attempts {
			if n > table.MaxUpdateAttempts {
				t.Fatalf("a racer made %d attempts; the bound is %d", n, table.MaxUpdateAttempts)
			}
			total += n
		}
		f, _, _ := widgets.Get(ctx, st, "op", "widgetId", "from", widgets.Key("acme", from))
		g, _, _ := widgets.Get(ctx, st, "op", "widgetId", "to", widgets.Key("acme", to))
		if moved := racers - conflicts; g.N != moved || f.N != 100-moved {
			t.Fatalf("from=%d to=%d after %d racers with %d conflicts (%d attempts)", f.N, g.N, racers, conflicts, total)
		}
	})
}

// TestConflictsExhausted: an attempt that always loses is run Max times,
// then Retry answers with the default conflict naming field and id, or
// with Exhausted's answer (nil included) when it is set.
func TestConflictsExhausted(t *testing.T) {
	ctx := context.Background()
	lose := func(n *int) func() error {
		return func() error { *n++; return fmt.Errorf("put: %w", store.ErrConditionFailed) }
	}
	n := 0
	err := table.Retry(ctx, "op", "widgetId", "w1", lose(&n))
	var ve *vp.Error
	if !errors.As(err, &ve) || ve.Kind != vp.KindConflict || ve.Field != "widgetId" || !strings.Contains(ve.Msg, "w1") {
		t.Fatalf("after every attempt lost: %v, want a conflict naming widgetId and w1", err)
	}
	if n != table.MaxUpdateAttempts {
		t.Fatalf("Retry made %d attempts, want %d", n, table.MaxUpdateAttempts)
	}
	n = 0
	mine := vp.E("op", vp.KindUnavailable, "tenant", "busy")
	if err := (table.Conflicts{Op: "op", Max: 3, Exhausted: func() error { return mine }}).Retry(ctx, lose(&n)); err != mine || n != 3 {
		t.Fatalf("Max 3 with Exhausted: %v after %d attempts, want %v after 3", err, n, mine)
	}
	n = 0
	answered := false
	err = table.Conflicts{Op: "op", Exhausted: func() error { answered = true; return nil }}.Retry(ctx, lose(&n))
	if err != nil || !answered || n != table.MaxUpdateAttempts {
		t.Fatalf("Exhausted answering nil: err %v, called %v, %d attempts", err, answered, n)
	}
}

// TestConflictsStopsAndMaps: a won write, a domain error and a cancelled
// context end the loop at once; a bare store error becomes a domain kind.
func TestConflictsStopsAndMaps(t *testing.T) {
	c := table.Conflicts{Op: "op", Field: "widgetId", ID: "w1"}
	n := 0
	if err := c.Retry(context.Background(), func() error {
		n++
		if n < 3 {
			return store.ErrConditionFailed
		}
		return nil
	}); err != nil || n != 3 {
		t.Fatalf("won on the third attempt: %v after %d", err, n)
	}
	refuse := vp.E("op", vp.KindInvalid, "n", "no")
	if err := c.Retry(context.Background(), func() error { return refuse }); err != refuse {
		t.Fatalf("a domain error = %v, want it unchanged", err)
	}
	if err := c.Retry(context.Background(), func() error { return fmt.Errorf("get: %w", store.ErrNotFound) }); !vp.IsKind(err, vp.KindNotFound) {
		t.Fatalf("a bare store.ErrNotFound = %v, want KindNotFound", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	n = 0
	err := c.Retry(ctx, func() error { n++; return store.ErrConditionFailed })
	if n != 1 || !errors.Is(err, context.Canceled) || !vp.IsKind(err, vp.KindInternal) {
		t.Fatalf("cancelled: %v after %d attempts, want an internal error wrapping context.Canceled after 1", err, n)
	}
}

// TestConflictsPause: Pause runs between attempts only (never before the
// first nor after the last), with the number of the attempt it precedes,
// and its error (the context ended) ends Retry as it is.
func TestConflictsPause(t *testing.T) {
	ctx := context.Background()
	var paused []int
	n := 0
	c := table.Conflicts{Op: "op", Field: "widgetId", ID: "w1", Max: 4, Pause: func(_ context.Context, i int) error {
		paused = append(paused, i)
		return nil
	}}
	err := c.Retry(ctx, func() error { n++; return store.ErrConditionFailed })
	if !vp.IsKind(err, vp.KindConflict) || n != 4 || fmt.Sprint(paused) != "[1 2 3]" {
		t.Fatalf("4 lost attempts: %v after %d, paused before %v; want a conflict after 4, paused before [1 2 3]", err, n, paused)
	}
	stop := vp.Unavailable("op", context.Canceled)
	n = 0
	c.Pause = func(context.Context, int) error { return stop }
	if err := c.Retry(ctx, func() error { n++; return store.ErrConditionFailed }); err != stop || n != 1 {
		t.Fatalf("a pause that fails: %v after %d attempts, want %v after 1", err, n, stop)
	}
	// With a Pause, a cancelled context is the pause's to answer: a pause
	// that ignores it lets the attempts run to their bound.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	n = 0
	c.Pause = func(context.Context, int) error { return nil }
	if err := c.Retry(cctx, func() error { n++; return store.ErrConditionFailed }); !vp.IsKind(err, vp.KindConflict) || n != 4 {
		t.Fatalf("cancelled with a pause that ignores it: %v after %d attempts, want a conflict after 4", err, n)
	}
}

// TestConflictsUnmapped: an Unmapped policy returns a foreign error as it
// is, where the default one maps it onto a domain kind.
func TestConflictsUnmapped(t *testing.T) {
	foreign := fmt.Errorf("queue: job j1: %w", store.ErrNotFound)
	c := table.Conflicts{Op: "op", Field: "jobId", ID: "j1"}
	if err := c.Retry(context.Background(), func() error { return foreign }); err == foreign || !vp.IsKind(err, vp.KindNotFound) {
		t.Fatalf("mapped: %v, want a NotFound wrapping it", err)
	}
	c.Unmapped = true
	if err := c.Retry(context.Background(), func() error { return foreign }); err != foreign {
		t.Fatalf("unmapped: %v, want %v unchanged", err, foreign)
	}
	n := 0
	if err := c.Retry(context.Background(), func() error { n++; return store.ErrConditionFailed }); !vp.IsKind(err, vp.KindConflict) || n != table.MaxUpdateAttempts {
		t.Fatalf("unmapped, always lost: %v after %d, want the conflict after %d", err, n, table.MaxUpdateAttempts)
	}
}
