package okfsvc

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Calls beyond the budget wait, and are refused with rate_limited, naming
// the limit, when it does not free up in time; what is held never exceeds
// it.
func TestBudgetNeverExceeded(t *testing.T) {
	const limit = 1000
	b := newBudget(limit, 20*time.Millisecond)
	var inUse, peak atomic.Int64
	var ok, limited atomic.Int32
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(200 + 100*(i%5))
			release, err := b.acquire(context.Background(), "validate_okf_bundle", n)
			if err != nil {
				if vp.KindOf(err) != vp.KindRateLimited || !strings.Contains(err.Error(), "1000") {
					t.Errorf("refusal %v: want rate_limited naming the limit", err)
				}
				if d, _ := vp.RetryAfter(err); d <= 0 {
					t.Errorf("refusal %v: no retry-after", err)
				}
				limited.Add(1)
				return
			}
			now := inUse.Add(n)
			for {
				p := peak.Load()
				if now <= p || peak.CompareAndSwap(p, now) {
					break
				}
			}
			time.Sleep(5 * time.Millisecond)
			inUse.Add(-n)
			release()
			ok.Add(1)
		}()
	}
	wg.Wait()
	t.Logf("%d admitted, %d refused; peak %d of %d (budget's own peak %d)", ok.Load(), limited.Load(), peak.Load(), limit, b.stats().Peak)
	if peak.Load() > limit || b.stats().Peak > limit {
		t.Fatalf("held %d (budget says %d) at once; the budget is %d", peak.Load(), b.stats().Peak, limit)
	}
	if ok.Load() == 0 || b.stats().InUse != 0 {
		t.Fatalf("%d admitted, %d still in use", ok.Load(), b.stats().InUse)
	}
}

// A call waits for the budget to free up, up to the bound; one larger
// than the whole budget is refused at once.
func TestBudgetWaitsThenRefuses(t *testing.T) {
	ctx := context.Background()
	b := newBudget(100, 200*time.Millisecond)
	release, err := b.acquire(ctx, "op", 100)
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(30 * time.Millisecond); release() }()
	start := time.Now()
	r2, err := b.acquire(ctx, "op", 60)
	if err != nil {
		t.Fatalf("a call that fits once another ends must wait for it: %v", err)
	}
	if time.Since(start) < 20*time.Millisecond {
		t.Fatal("admitted while the budget was full")
	}
	start = time.Now()
	_, err = b.acquire(ctx, "op", 60) // 60 + 60 > 100, and nobody releases
	if vp.KindOf(err) != vp.KindRateLimited || !strings.Contains(err.Error(), "100 bytes") {
		t.Fatalf("got %v, want rate_limited naming the limit", err)
	}
	if w := time.Since(start); w < 150*time.Millisecond || w > 2*time.Second {
		t.Fatalf("waited %v; the bound is 200ms", w)
	}
	r2()
	_, err = b.acquire(ctx, "op", 101)
	if vp.KindOf(err) != vp.KindTooLarge || !strings.Contains(err.Error(), "100 bytes") {
		t.Fatalf("got %v, want too_large naming the limit", err)
	}
	// A cancelled caller stops waiting.
	hold, _ := b.acquire(ctx, "op", 100)
	defer hold()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.acquire(cctx, "op", 10); err == nil {
		t.Fatal("a cancelled call was admitted")
	}
}
