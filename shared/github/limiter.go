package github

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// GitHub's limits on content-creating requests, per account: one at a time
// and at least a second apart, at most 80 a minute and 500 an hour
// (rate-limits-for-the-rest-api.md, best-practices-for-using-the-rest-api.md).
const (
	DefaultSpacing   = time.Second
	DefaultPerMinute = 80
	DefaultPerHour   = 500
)

// SpacingMargin is added to a positive Spacing. A slot is chosen before
// the store write that takes it and its request reaches GitHub after the
// scheduler and the network, so two requests arrive a little more or less
// than their slots' distance apart: a request was seen to leave 80 ms after
// its slot on a loaded 2-core machine under the race detector. 150 ms more
// keep the gap GitHub sees at a second or more, for a cost of 15 % of the
// write rate (about 52 writes a minute instead of 60; the per-minute cap
// of 80 was never reachable at one a second).
const SpacingMargin = 150 * time.Millisecond

// LimiterOptions configures a Limiter.
type LimiterOptions struct {
	// Store holds one pacing item per tenant, shared by every process
	// (and Lambda) that writes for it.
	Store store.Store
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Spacing is the least time between two writes of a tenant (0: 1 s;
	// negative: none, for tests of the other limits). SpacingMargin is
	// added to it.
	Spacing time.Duration
	// PerMinute and PerHour bound a tenant's writes in any minute and any
	// hour (0: 80 and 500).
	PerMinute int
	PerHour   int
}

// Limiter hands out each tenant's write slots so that all the writers of a
// tenant, in every process, stay within GitHub's content-creation limits
// together; and holds a tenant back after GitHub answered with a limit.
// It is safe for concurrent use.
type Limiter struct {
	st                 store.Store
	now                func() time.Time
	spacing            int64 // ms
	perMinute, perHour int
	keep               int // slots remembered: enough for both windows
	minuteMs, hourMs   int64
}

// NewLimiter returns a Limiter.
func NewLimiter(o LimiterOptions) *Limiter {
	l := &Limiter{st: o.Store, now: o.Now, perMinute: o.PerMinute, perHour: o.PerHour,
		minuteMs: time.Minute.Milliseconds(), hourMs: time.Hour.Milliseconds()}
	if l.now == nil {
		l.now = time.Now
	}
	if sp := cmp.Or(o.Spacing, DefaultSpacing); sp > 0 {
		// Rounded up: a slot is never closer than asked.
		l.spacing = (sp + SpacingMargin + time.Millisecond - 1).Milliseconds()
	}
	if l.perMinute <= 0 {
		l.perMinute = DefaultPerMinute
	}
	if l.perHour <= 0 {
		l.perHour = DefaultPerHour
	}
	l.keep = max(l.perMinute, l.perHour)
	return l
}

// pacing is a tenant's item. Slots are the Unix milliseconds of the writes
// reserved in the last hour, oldest first, at most max(PerMinute, PerHour)
// of them (500 numbers, about 7 KB): a sliding log, exact for both windows,
// where a counter per fixed window would let twice the limit through
// across a window's edge.
type pacing struct {
	Slots        []int64 `json:"slots,omitempty"`
	BlockedUntil int64   `json:"blockedUntil,omitempty"` // Unix ms
}

// pacings declares the item (KEYS.md). It expires an hour after its last
// slot or block, when it no longer constrains anything, so idle tenants
// leave nothing behind.
var pacings = table.Declare(table.Schema[pacing]{
	Entity: "github write pacing",
	Primary: table.Key{PK: "GHPACE", SK: "GHPACE", Pattern: "GitHub write slots of a tenant",
		Note: "one item per tenant: the write slots of the last hour and the block after a limit answer; IfVersion put; TTL: an hour after the last"},
	Fields: func(pacing) table.Values { return nil },
	Expires: func(p pacing) int64 {
		last := p.BlockedUntil
		if n := len(p.Slots); n > 0 {
			last = max(last, p.Slots[n-1])
		}
		return last/1000 + int64(time.Hour/time.Second) + 1
	},
})

// Tables declares this package's keys for KEYS.md.
func Tables() []table.Doc { return []table.Doc{pacings.Doc()} }

// maxAttempts bounds Reserve's and Block's rereads after a lost
// conditional write. It is higher than table.MaxUpdateAttempts because
// every writer of a tenant contends for the same item by design: twenty
// concurrent writers must all get through.
const maxAttempts = 64

// Reserve takes the tenant's next write slot if it is due within maxWait
// and returns how long to wait for it (0: now). A slot further away is not
// taken: Reserve returns vp.KindRateLimited with the wait. The slot is
// written with a conditional put on the tenant's one item, reread and
// retried when another writer got there first, so no two callers, in any
// process, get the same slot.
func (l *Limiter) Reserve(ctx context.Context, tenant string, maxWait time.Duration) (time.Duration, error) {
	const op = "github.limiter.reserve"
	var at int64
	err := l.update(ctx, op, tenant, func(p *pacing, nowMs int64) (bool, error) {
		at = l.next(*p, nowMs)
		if wait := time.Duration(at-nowMs) * time.Millisecond; wait > maxWait {
			e := vp.RateLimited(op, wait, nil)
			e.Msg = fmt.Sprintf("tenant %s's next GitHub write slot is %v away", tenant, wait)
			return false, e
		}
		l.prune(p, nowMs, 1)
		p.Slots = append(p.Slots, at)
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	// The wait from now, not from the clock read before the write: the
	// write took some of it.
	return max(time.UnixMilli(at).Sub(l.now()), 0), nil
}

// Block holds the tenant's writes until until (after a limit answer). It
// never shortens a block already in place.
func (l *Limiter) Block(ctx context.Context, tenant string, until time.Time) error {
	const op = "github.limiter.block"
	u := until.UnixMilli()
	return l.update(ctx, op, tenant, func(p *pacing, nowMs int64) (bool, error) {
		if u <= p.BlockedUntil || u <= nowMs {
			return false, nil
		}
		l.prune(p, nowMs, 0)
		p.BlockedUntil = u
		return true, nil
	})
}

// due returns how long the tenant's next slot is away, without taking it.
func (l *Limiter) due(ctx context.Context, tenant string) (time.Duration, error) {
	const op = "github.limiter.due"
	if !vp.ValidTenant(tenant) {
		return 0, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clip(tenant))
	}
	p, _, _, err := l.read(ctx, op, tenant)
	if err != nil {
		return 0, err
	}
	nowMs := l.now().UnixMilli()
	return time.Duration(l.next(p, nowMs)-nowMs) * time.Millisecond, nil
}

// next is the earliest slot the tenant may have at nowMs: after any block,
// Spacing after its last slot, a minute after the PerMinute-th last and an
// hour after the PerHour-th last. Slots are never before the last one, so
// the log stays sorted.
func (l *Limiter) next(p pacing, nowMs int64) int64 {
	at := max(nowMs, p.BlockedUntil)
	n := len(p.Slots)
	if n == 0 {
		return at
	}
	at = max(at, p.Slots[n-1]+l.spacing)
	if n >= l.perMinute {
		at = max(at, p.Slots[n-l.perMinute]+l.minuteMs)
	}
	if n >= l.perHour {
		at = max(at, p.Slots[n-l.perHour]+l.hourMs)
	}
	return at
}

// prune forgets the slots that no longer constrain the next one: those
// more than an hour old, and all but the last keep-room (room for the
// slots about to be added).
func (l *Limiter) prune(p *pacing, nowMs int64, room int) {
	i := 0
	for i < len(p.Slots) && p.Slots[i] <= nowMs-l.hourMs {
		i++
	}
	i = max(i, len(p.Slots)-l.keep+room)
	if i > 0 {
		p.Slots = append(p.Slots[:0], p.Slots[i:]...)
	}
	if p.BlockedUntil <= nowMs {
		p.BlockedUntil = 0
	}
}

// update is the read-modify-write of a tenant's item: change edits it and
// says whether to write; a lost conditional write starts again from the
// read, after a short random pause that spreads the contenders (a lost
// write stays store.ErrConditionFailed through storeErr).
func (l *Limiter) update(ctx context.Context, op, tenant string, change func(p *pacing, nowMs int64) (bool, error)) error {
	if !vp.ValidTenant(tenant) {
		return vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clip(tenant))
	}
	if l.st == nil {
		return vp.E(op, vp.KindInternal, "", "the limiter has no Store (github.LimiterOptions.Store)")
	}
	return table.Conflicts{Op: op, Max: maxAttempts,
		Pause: func(ctx context.Context, attempt int) error {
			pause := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt-1, 5)))
			t := time.NewTimer(pause)
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				t.Stop()
				return vp.Unavailable(op, ctx.Err())
			}
		},
		Exhausted: func() error {
			return vp.Errorf(op, vp.KindUnavailable, "tenant", "%s's GitHub pacing kept changing under this call (%d attempts); retry", tenant, maxAttempts)
		},
	}.Retry(ctx, func() error {
		p, it, found, err := l.read(ctx, op, tenant)
		if err != nil {
			return err
		}
		write, err := change(&p, l.now().UnixMilli())
		if err != nil || !write {
			return err
		}
		item, err := pacings.Item(op, tenant, p)
		if err != nil {
			return err
		}
		cond := store.IfNotExists
		if found {
			cond = store.IfVersion(it.Version)
		}
		return storeErr(op, l.st.Write(ctx, store.Put(item, cond)))
	})
}

func (l *Limiter) read(ctx context.Context, op, tenant string) (p pacing, it store.Item, found bool, err error) {
	it, err = l.st.Get(ctx, pacings.KeyOf(tenant, nil))
	if errors.Is(err, store.ErrNotFound) {
		return pacing{}, it, false, nil
	}
	if err != nil {
		return pacing{}, it, false, storeErr(op, err)
	}
	p, err = records.Decode[pacing](op, it)
	return p, it, true, err
}

// storeErr keeps the kind a store error already has (the SQLite store
// reports a busy file as unavailable, which the caller retries) and maps
// the others.
func storeErr(op string, err error) error {
	if err == nil {
		return nil
	}
	if k := vp.KindOf(err); k != vp.KindOther {
		return vp.Wrap(op, k, err)
	}
	return records.Err(op, err)
}
