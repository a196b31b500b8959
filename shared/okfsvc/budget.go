package okfsvc

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Defaults of the memory budget shared by the validations and imports of a
// Service.
const (
	// DefaultMemoryBudget is what all the bundles being read at once may
	// hold: four inline bundles at their largest, or hundreds of ordinary
	// ones.
	DefaultMemoryBudget = 256 << 20
	// DefaultBudgetWait is how long a call waits for the budget to free
	// up before it is refused as rate_limited.
	DefaultBudgetWait = 2 * time.Second
)

// BudgetStats describes the memory budget: its limit, what calls hold now,
// and the most they held at once.
type BudgetStats struct {
	Limit int64 `json:"limit"`
	InUse int64 `json:"inUse"`
	Peak  int64 `json:"peak"`
}

// budget admits calls by the bytes they may hold, up to max in all. It
// belongs to one Service: every tool call, HTTP request and container
// using that Service shares it.
type budget struct {
	sem  *semaphore.Weighted
	max  int64
	wait time.Duration

	mu          sync.Mutex
	inUse, peak int64
}

func newBudget(limit int64, wait time.Duration) *budget {
	return &budget{sem: semaphore.NewWeighted(limit), max: limit, wait: max(wait, 0)}
}

// acquire admits a call that will hold about n bytes: at once when the
// budget has room, else after waiting at most b.wait for others to end;
// else it is refused as rate_limited. A call larger than the whole budget
// is refused at once (it would never fit). release gives the bytes back;
// calling it twice is harmless.
func (b *budget) acquire(ctx context.Context, op string, n int64) (release func(), err error) {
	n = max(n, 1)
	if n > b.max {
		return nil, vp.Errorf(op, vp.KindTooLarge, "bundle", "reading it holds about %d bytes in memory; this server holds at most %d bytes of bundles at once (the limit): use the CLI (`vantagepeers okf`) for a bundle this large", n, b.max)
	}
	if !b.sem.TryAcquire(n) {
		wctx, cancel := context.WithTimeout(ctx, b.wait)
		err := b.sem.Acquire(wctx, n)
		cancel()
		if ctx.Err() != nil {
			if err == nil {
				b.sem.Release(n)
			}
			return nil, vp.Wrap(op, vp.KindUnavailable, ctx.Err())
		}
		if err != nil {
			return nil, &vp.Error{Op: op, Kind: vp.KindRateLimited, Field: "bundle", RetryAfter: max(b.wait, time.Second),
				Msg: fmt.Sprintf("other bundles are being read: this one needs about %d bytes and this server holds at most %d bytes of bundles at once (the limit), which did not free up within %v; retry shortly", n, b.max, b.wait)}
		}
	}
	b.mu.Lock()
	b.inUse += n
	b.peak = max(b.peak, b.inUse)
	b.mu.Unlock()
	return sync.OnceFunc(func() {
		b.mu.Lock()
		b.inUse -= n
		b.mu.Unlock()
		b.sem.Release(n)
	}), nil
}

func (b *budget) stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return BudgetStats{Limit: b.max, InUse: b.inUse, Peak: b.peak}
}
