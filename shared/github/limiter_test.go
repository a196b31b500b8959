package github_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// clock is a settable fake clock, shared by the limiter and the store so
// that the pacing item's expiry is judged on the same time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Now().Truncate(time.Second)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// openStore opens a real SQLite store in a file of the test's folder.
func openStore(t testing.TB, now func() time.Time) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db"), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

func wantRateLimited(t *testing.T, err error, want time.Duration) {
	t.Helper()
	if !vp.IsKind(err, vp.KindRateLimited) {
		t.Fatalf("err = %v (kind %v), want rate_limited", err, vp.KindOf(err))
	}
	if got, _ := vp.RetryAfter(err); got != want {
		t.Fatalf("RetryAfter = %v, want %v (%v)", got, want, err)
	}
}

// slowReads delays every read a little, as a network store's latency does,
// so that concurrent read-modify-writes really overlap: on a local SQLite
// file they are fast enough to run one after the other and hide a lost
// update.
type slowReads struct{ store.Store }

func (s slowReads) Get(ctx context.Context, k store.Key) (store.Item, error) {
	it, err := s.Store.Get(ctx, k)
	time.Sleep(2 * time.Millisecond)
	return it, err
}

func TestLimiterConcurrentReservesGetDistinctSpacedSlots(t *testing.T) {
	clk := newClock()
	st := slowReads{openStore(t, clk.Now)}
	// Two limiters on one store stand for two processes.
	lims := []*github.Limiter{
		github.NewLimiter(github.LimiterOptions{Store: st, Now: clk.Now}),
		github.NewLimiter(github.LimiterOptions{Store: st, Now: clk.Now}),
	}
	const n = 20
	waits := make([]time.Duration, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			waits[i], errs[i] = lims[i%2].Reserve(context.Background(), "acme", time.Minute)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("reserve %d: %v", i, err)
		}
	}
	slices.Sort(waits)
	if waits[0] != 0 {
		t.Errorf("first slot waits %v, want 0", waits[0])
	}
	for i := 1; i < n; i++ {
		if gap := waits[i] - waits[i-1]; gap < time.Second {
			t.Fatalf("slots %d and %d are %v apart (waits %v)", i-1, i, gap, waits)
		}
	}
	// The clock did not move: the 20 slots are exactly the spacing apart.
	if want := (n - 1) * (github.DefaultSpacing + github.SpacingMargin); waits[n-1] != want {
		t.Errorf("last slot waits %v, want %v", waits[n-1], want)
	}
}

func TestLimiterWindows(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		opts github.LimiterOptions
		run  func(t *testing.T, l *github.Limiter, clk *clock)
	}{
		{"the 81st write within a minute is refused", github.LimiterOptions{Spacing: -1}, func(t *testing.T, l *github.Limiter, clk *clock) {
			for i := range github.DefaultPerMinute {
				if w, err := l.Reserve(ctx, "acme", 0); err != nil || w != 0 {
					t.Fatalf("write %d: wait %v, %v", i+1, w, err)
				}
			}
			_, err := l.Reserve(ctx, "acme", 59*time.Second)
			wantRateLimited(t, err, time.Minute)
			clk.Advance(time.Minute)
			if w, err := l.Reserve(ctx, "acme", 0); err != nil || w != 0 {
				t.Fatalf("a minute later: wait %v, %v", w, err)
			}
		}},
		{"the 501st write within an hour is refused", github.LimiterOptions{}, func(t *testing.T, l *github.Limiter, clk *clock) {
			// One write a second, as paced: the minute limit never binds.
			step := github.DefaultSpacing + github.SpacingMargin
			for i := range github.DefaultPerHour {
				if w, err := l.Reserve(ctx, "acme", 0); err != nil || w != 0 {
					t.Fatalf("write %d: wait %v, %v", i+1, w, err)
				}
				clk.Advance(step)
			}
			_, err := l.Reserve(ctx, "acme", github.DefaultMaxWait)
			wantRateLimited(t, err, time.Hour-github.DefaultPerHour*step)
			clk.Advance(time.Hour - github.DefaultPerHour*step)
			if w, err := l.Reserve(ctx, "acme", 0); err != nil || w != 0 {
				t.Fatalf("an hour after the first: wait %v, %v", w, err)
			}
		}},
		{"a refused reserve takes no slot", github.LimiterOptions{}, func(t *testing.T, l *github.Limiter, clk *clock) {
			if w, err := l.Reserve(ctx, "acme", 0); err != nil || w != 0 {
				t.Fatalf("first: %v, %v", w, err)
			}
			step := github.DefaultSpacing + github.SpacingMargin
			_, err := l.Reserve(ctx, "acme", 500*time.Millisecond)
			wantRateLimited(t, err, step)
			// Had the refused call taken the slot, this one would wait two
			// steps.
			if w, err := l.Reserve(ctx, "acme", step); err != nil || w != step {
				t.Fatalf("after the refusal: wait %v, %v; want %v", w, err, step)
			}
		}},
		{"a block is never shortened", github.LimiterOptions{}, func(t *testing.T, l *github.Limiter, clk *clock) {
			now := clk.Now()
			for _, until := range []time.Time{now.Add(10 * time.Minute), now.Add(time.Minute), now.Add(-time.Hour)} {
				if err := l.Block(ctx, "acme", until); err != nil {
					t.Fatal(err)
				}
			}
			_, err := l.Reserve(ctx, "acme", time.Minute)
			wantRateLimited(t, err, 10*time.Minute)
			if err := l.Block(ctx, "acme", now.Add(20*time.Minute)); err != nil {
				t.Fatal(err)
			}
			_, err = l.Reserve(ctx, "acme", time.Minute)
			wantRateLimited(t, err, 20*time.Minute)
			if w, err := l.Reserve(ctx, "beta", 0); err != nil || w != 0 {
				t.Fatalf("another tenant: wait %v, %v", w, err)
			}
			clk.Advance(20 * time.Minute)
			if w, err := l.Reserve(ctx, "acme", 0); err != nil || w != 0 {
				t.Fatalf("after the block: wait %v, %v", w, err)
			}
		}},
		{"tenants are paced apart", github.LimiterOptions{}, func(t *testing.T, l *github.Limiter, clk *clock) {
			for _, tenant := range []string{"acme", "beta", "gamma"} {
				if w, err := l.Reserve(ctx, tenant, 0); err != nil || w != 0 {
					t.Fatalf("%s: wait %v, %v", tenant, w, err)
				}
			}
		}},
		{"an idle tenant's item expires", github.LimiterOptions{}, func(t *testing.T, l *github.Limiter, clk *clock) {
			if err := l.Block(ctx, "acme", clk.Now().Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
			clk.Advance(2 * time.Hour)
			if w, err := l.Reserve(ctx, "acme", 0); err != nil || w != 0 {
				t.Fatalf("two hours later: wait %v, %v", w, err)
			}
		}},
		{"a malformed tenant is refused", github.LimiterOptions{}, func(t *testing.T, l *github.Limiter, clk *clock) {
			for _, tenant := range []string{"", "Acme", "a/b"} {
				if _, err := l.Reserve(ctx, tenant, 0); !vp.IsKind(err, vp.KindInvalid) {
					t.Errorf("Reserve(%q) = %v, want invalid", tenant, err)
				}
				if err := l.Block(ctx, tenant, clk.Now().Add(time.Hour)); !vp.IsKind(err, vp.KindInvalid) {
					t.Errorf("Block(%q) = %v, want invalid", tenant, err)
				}
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock()
			tc.opts.Store, tc.opts.Now = openStore(t, clk.Now), clk.Now
			tc.run(t, github.NewLimiter(tc.opts), clk)
		})
	}
}
