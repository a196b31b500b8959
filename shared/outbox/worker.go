package outbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime/debug"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// pageSize is how many due jobs one look at the due index reads.
const pageSize = 64

// Kick asks a running Run to execute the jobs of p now, right after the
// caller's commit, so that in-process effects (search indexing) are
// near-synchronous. It never blocks; without Run the jobs wait for the next
// Drain. Duplicates and zero Pendings are ignored.
func (o *Outbox) Kick(p ...Pending) {
	for _, x := range p {
		if x.key.PK == "" {
			continue
		}
		select {
		case o.kicks <- x.key:
		default: // full: the poll will find it
		}
	}
	select {
	case o.wake <- struct{}{}:
	default:
	}
}

// Flush executes the jobs of p now, in the caller's goroutine — for a
// Lambda that must not return with work it could do itself. A failure is
// rescheduled like any other (and logged), not returned: the caller's
// transaction has committed and the job is durable.
func (o *Outbox) Flush(ctx context.Context, p ...Pending) {
	o.start()
	keys := make([]store.Key, 0, len(p))
	for _, x := range p {
		if x.key.PK != "" {
			keys = append(keys, x.key)
		}
	}
	o.runKeys(ctx, keys)
}

// RunInline runs, in the caller's goroutine, the jobs of EnqueueInline
// and the deliveries of PublishInline once the caller's transaction has
// committed. The caller holds their lease: a job's first version is the
// committed one, so success removes it with one conditional delete, and a
// failure is rescheduled (or dead-lettered) like a worker's. Pendings of
// Enqueue and Publish are ignored: Kick or Flush those.
func (o *Outbox) RunInline(ctx context.Context, p ...Pending) {
	for _, x := range p {
		for _, r := range x.inline {
			o.runInline(ctx, r)
		}
	}
}

func (o *Outbox) runInline(ctx context.Context, r record) {
	h := o.handler(r.Topic, r.Subscriber)
	if h == nil {
		o.failed(ctx, r, 1, fmt.Errorf("no handler is registered for topic %q subscriber %q in this process", r.Topic, r.Subscriber))
		return
	}
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.lease)
	err := call(hctx, h, r.job())
	cancel()
	if err != nil {
		o.failed(ctx, r, 1, err)
		return
	}
	o.remove(ctx, r)
}

// Settle ends the jobs of p (EnqueueInline) whose effect their caller did
// itself, without the handler — with what it held right after its commit,
// sparing the handler's reads on the call's path. err is how that went: nil
// removes the jobs; an error reschedules them for the worker, whose handler
// then does the effect from the store, as after any failed delivery.
func (o *Outbox) Settle(ctx context.Context, err error, p ...Pending) {
	for _, x := range p {
		for _, r := range x.inline {
			if err != nil {
				o.failed(ctx, r, 1, err)
				continue
			}
			o.remove(ctx, r)
		}
	}
}

// remove deletes an inline job whose effect is done: in the next batch
// (RemovalBatch), or now.
func (o *Outbox) remove(ctx context.Context, r record) {
	k := jobKey(r.Tenant, r.ID)
	if o.removalBatch > 0 && !o.isClosing() {
		o.removerOnce.Do(func() { o.removerStarted.Store(true); go o.remover() })
		if o.removerStarted.Load() {
			select {
			case o.removals <- k:
				return
			default: // the batch is full: write this one now
			}
		}
	}
	err := o.st.Write(ctx, store.Delete(k, store.IfVersion(1)))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		// The job runs again when its lease ends; handlers are idempotent.
		o.log.ErrorContext(ctx, "outbox job done but not removed", o.attrs(r, "outcome", "done", "err", err)...)
	}
}

func (o *Outbox) isClosing() bool {
	select {
	case <-o.closing:
		return true
	default:
		return false
	}
}

// remover writes the removals of inline jobs in batches (RemovalBatch).
// A batch deletes unconditionally: every job in it has had its effect,
// whoever holds it now.
func (o *Outbox) remover() {
	defer close(o.removerDone)
	t := time.NewTicker(o.removalBatch)
	defer t.Stop()
	batch := map[store.Key]bool{}
	flush := func() {
		if len(batch) == 0 {
			return
		}
		ops := make([]store.Op, 0, len(batch))
		for k := range batch {
			ops = append(ops, store.Delete(k, store.Always))
		}
		clear(batch)
		if err := o.st.Write(context.Background(), ops...); err != nil {
			o.log.Error("outbox jobs done but not removed; they run again after their lease", "jobs", len(ops), "err", err)
		}
	}
	for {
		select {
		case k := <-o.removals:
			batch[k] = true
			if len(batch) >= store.MaxTransactOps {
				flush()
			}
		case <-t.C:
			flush()
		case <-o.closing:
			for {
				select {
				case k := <-o.removals:
					batch[k] = true
					if len(batch) >= store.MaxTransactOps {
						flush()
					}
				default:
					flush()
					return
				}
			}
		}
	}
}

// Close writes the removals still waiting (RemovalBatch), for up to 10
// seconds. Call it before closing the store; RunInline after Close writes
// each removal itself.
func (o *Outbox) Close() {
	o.removerOnce.Do(func() {}) // not started by now: it never will be
	o.closeOnce.Do(func() {
		close(o.closing)
		if !o.removerStarted.Load() {
			return
		}
		select {
		case <-o.removerDone:
		case <-time.After(10 * time.Second):
		}
	})
}

// Run drains due jobs until ctx is done: at every Kick, and every
// PollInterval otherwise. It returns nil once ctx is done and the handlers
// it started have returned. Registration is closed from the first call.
func (o *Outbox) Run(ctx context.Context) error {
	o.start()
	t := time.NewTicker(o.poll)
	defer t.Stop()
	for {
		var kicked []store.Key
	collect:
		for {
			select {
			case k := <-o.kicks:
				kicked = append(kicked, k)
			default:
				break collect
			}
		}
		if len(kicked) > 0 {
			o.runKeys(ctx, kicked)
		}
		if _, err := o.Drain(ctx); err != nil && ctx.Err() == nil {
			o.log.ErrorContext(ctx, "outbox drain failed", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-o.wake:
		case <-t.C:
		}
	}
}

// Drain runs the jobs that are due until none is (up to Concurrency at a
// time) and returns how many deliveries it made. It is what a scheduled
// Lambda, a CLI or a test calls. The error is the store's; handler
// failures are rescheduled, not returned.
func (o *Outbox) Drain(ctx context.Context) (int, error) {
	o.start()
	total := 0
	for ctx.Err() == nil {
		now := o.now().UnixMilli()
		q := readyQuery()
		q.SKTo, q.Limit = ms13(now)+"#~", pageSize
		rows, err := o.st.Query(ctx, q)
		if err != nil {
			return total, vp.Wrap("outbox.Drain", vp.KindOf(err), err)
		}
		if len(rows) == 0 {
			return total, nil
		}
		keys := make([]store.Key, len(rows))
		for i, it := range rows {
			keys[i] = it.Key
		}
		// Runners racing for the same head of the queue would mostly
		// collide: each starts at a random place.
		start := rand.IntN(len(keys))
		keys = append(keys[start:], keys[:start]...)
		n := o.runKeys(ctx, keys)
		total += n
		if n == 0 {
			// Every due job was taken by another runner (or the index is
			// behind): come back at the next poll rather than spin.
			return total, nil
		}
	}
	return total, ctx.Err()
}

// runKeys leases and runs the jobs at keys, Concurrency at a time, and the
// deliveries of the events among them; it returns how many it ran.
func (o *Outbox) runKeys(ctx context.Context, keys []store.Key) int {
	var (
		mu  sync.Mutex
		ran int
		wg  sync.WaitGroup
		sem = make(chan struct{}, o.concurrency)
	)
	var do func(k store.Key)
	do = func(k store.Key) {
		defer wg.Done()
		defer func() { <-sem }()
		next, ok := o.runOne(ctx, k)
		if !ok {
			return
		}
		mu.Lock()
		ran++
		mu.Unlock()
		for _, nk := range next { // an event's deliveries, right away
			wg.Add(1)
			go func() {
				sem <- struct{}{}
				do(nk)
			}()
		}
	}
	for _, k := range keys {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go do(k)
	}
	wg.Wait()
	return ran
}

// runOne leases the job at k and runs it. ok is false when there was
// nothing to run (gone, not due, leased by another runner). next are the
// keys of the deliveries an event fanned out to.
func (o *Outbox) runOne(ctx context.Context, k store.Key) (next []store.Key, ok bool) {
	r, ver, got, err := o.take(ctx, k)
	if err != nil {
		if ctx.Err() == nil {
			o.log.ErrorContext(ctx, "outbox lease failed", "key", k.PK, "err", err)
		}
		return nil, false
	}
	if got != taken {
		return nil, got == buried
	}
	if r.Event {
		return o.fanOut(ctx, r, ver), true
	}
	h := o.handler(r.Topic, r.Subscriber)
	if h == nil {
		o.failed(ctx, r, ver, fmt.Errorf("no handler is registered for topic %q subscriber %q in this process", r.Topic, r.Subscriber))
		return nil, true
	}
	// The handler gets the lease as its deadline, and keeps running when
	// the worker is asked to stop: an effect cut in the middle is the
	// worst case of the contract, so avoid making it common.
	hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.lease)
	err = call(hctx, h, r.job())
	cancel()
	if err != nil {
		o.failed(ctx, r, ver, err)
		return nil, true
	}
	// Unconditional: the effect is done, whoever holds the lease now.
	if err := o.st.Write(ctx, store.Delete(jobKey(r.Tenant, r.ID), store.Always)); err != nil {
		// The job runs again after its lease; the handler is idempotent.
		o.log.ErrorContext(ctx, "outbox job done but not removed", o.attrs(r, "outcome", "done", "err", err)...)
		return nil, true
	}
	o.log.InfoContext(ctx, "outbox job", o.attrs(r, "outcome", "done")...)
	return nil, true
}

// call runs h, turning a panic into an error: one bad payload must not
// take the worker down.
func call(ctx context.Context, h Handler, j Job) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("handler panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return h(ctx, j)
}

func (r record) job() Job {
	return Job{ID: r.ID, Tenant: r.Tenant, Topic: r.Topic, Subscriber: r.Subscriber, DedupKey: r.DedupKey,
		Payload: r.Payload, Attempt: r.Attempts, EnqueuedAt: time.UnixMilli(r.EnqueuedAt)}
}

// What take did.
type outcome uint8

const (
	skipped outcome = iota // gone, not due, or leased by another runner
	taken
	buried // its attempts were spent: dead-lettered instead
)

// take leases the job at k: a conditional write on the version read that
// counts the delivery and moves the due time to the end of the lease.
// It returns the record and its version after the lease.
func (o *Outbox) take(ctx context.Context, k store.Key) (record, int64, outcome, error) {
	it, err := o.st.Get(ctx, k) // the index may lag: decide on the item itself
	if errors.Is(err, store.ErrNotFound) {
		return record{}, 0, skipped, nil
	}
	if err != nil {
		return record{}, 0, skipped, err
	}
	r, err := decode(it)
	if err != nil {
		return record{}, 0, skipped, err
	}
	now := o.now().UnixMilli()
	if r.State != stateReady || r.DueAt > now {
		return record{}, 0, skipped, nil
	}
	if r.Attempts >= o.maxAttempts {
		// The last delivery's runner died or overran its lease.
		r.LastError = fmt.Sprintf("no outcome after delivery %d (the runner died or overran its lease); last error: %s", r.Attempts, r.LastError)
		o.bury(ctx, r, it.Version)
		return record{}, 0, buried, nil
	}
	r.Attempts++
	r.DueAt = now + o.lease.Milliseconds()
	nit, err := r.item()
	if err != nil {
		return record{}, 0, skipped, err
	}
	err = o.st.Write(ctx, store.Put(nit, store.IfVersion(it.Version)))
	if errors.Is(err, store.ErrConditionFailed) {
		return record{}, 0, skipped, nil // another runner leased it
	}
	if err != nil {
		return record{}, 0, skipped, err
	}
	return r, it.Version + 1, taken, nil
}

// fanOut replaces a leased event with one delivery per subscriber, in one
// transaction conditional on the lease, and returns the deliveries' keys.
func (o *Outbox) fanOut(ctx context.Context, ev record, ver int64) []store.Key {
	subs := o.subscribers(ev.Topic)
	ops := []store.Op{store.Delete(jobKey(ev.Tenant, ev.ID), store.IfVersion(ver))}
	keys := make([]store.Key, 0, len(subs))
	now := o.now().UnixMilli()
	for _, s := range subs {
		d := record{ID: hashID(ev.ID, s), Tenant: ev.Tenant, Topic: ev.Topic, Subscriber: s, DedupKey: ev.DedupKey,
			Payload: ev.Payload, State: stateReady, DueAt: now, EnqueuedAt: ev.EnqueuedAt}
		it, err := d.item()
		if err != nil {
			o.failed(ctx, ev, ver, err)
			return nil
		}
		ops = append(ops, store.Put(it, store.IfNotExists))
		keys = append(keys, it.Key)
	}
	err := o.st.Write(ctx, ops...)
	var ce *store.ConditionError
	if errors.As(err, &ce) && ce.Index == 0 {
		o.log.WarnContext(ctx, "outbox job", o.attrs(ev, "outcome", "lease_lost")...)
		return nil
	}
	if err != nil {
		o.failed(ctx, ev, ver, fmt.Errorf("fan-out: %w", err))
		return nil
	}
	o.log.InfoContext(ctx, "outbox job", o.attrs(ev, "outcome", "fanned_out", "subscribers", len(subs))...)
	return keys
}

// failed records a failed delivery of the leased r: dead letter when the
// error is permanent or the attempts are spent, else the next due time.
func (o *Outbox) failed(ctx context.Context, r record, ver int64, cause error) {
	now := o.now()
	r.LastError = truncate(cause.Error(), 2000)
	r.FailedAt = now.UnixMilli()
	if IsPermanent(cause) || r.Attempts >= o.maxAttempts {
		o.bury(ctx, r, ver)
		return
	}
	delay := o.Delay(r.Attempts)
	if d, ok := vp.RetryAfter(cause); ok && d > 0 {
		delay = d // the dependency said when: no sooner, and no later
	}
	r.DueAt = now.Add(delay).UnixMilli()
	it, err := r.item()
	if err == nil {
		err = o.st.Write(ctx, store.Put(it, store.IfVersion(ver)))
	}
	switch {
	case errors.Is(err, store.ErrConditionFailed):
		o.log.WarnContext(ctx, "outbox job", o.attrs(r, "outcome", "lease_lost", "err", cause)...)
	case err != nil:
		// The lease runs out and the job is delivered again.
		o.log.ErrorContext(ctx, "outbox job failed and not rescheduled", o.attrs(r, "outcome", "retry", "err", cause, "store_err", err)...)
	default:
		o.log.WarnContext(ctx, "outbox job", o.attrs(r, "outcome", "retry", "err", cause, "retry_in", delay.String())...)
	}
}

// bury moves r to dead letters, conditional on version ver.
func (o *Outbox) bury(ctx context.Context, r record, ver int64) {
	r.State, r.DeadAt = stateDead, o.now().UnixMilli()
	it, err := r.item()
	if err == nil {
		err = o.st.Write(ctx, store.Put(it, store.IfVersion(ver)))
	}
	switch {
	case errors.Is(err, store.ErrConditionFailed):
		o.log.WarnContext(ctx, "outbox job", o.attrs(r, "outcome", "lease_lost")...)
	case err != nil:
		o.log.ErrorContext(ctx, "outbox job not dead-lettered", o.attrs(r, "outcome", "dead", "err", r.LastError, "store_err", err)...)
	default:
		o.log.ErrorContext(ctx, "outbox job", o.attrs(r, "outcome", "dead", "err", r.LastError)...)
	}
}

// Delay is the backoff after the given number of failed deliveries:
// Backoff doubled per failure after the first, capped at MaxBackoff, then
// jittered to between half and all of it.
func (o *Outbox) Delay(failures int) time.Duration {
	d := o.backoff
	for i := 1; i < failures && d < o.maxBackoff; i++ {
		d *= 2
	}
	d = min(d, o.maxBackoff)
	j := min(max(o.jitter(), 0), 1)
	return d/2 + time.Duration(j*float64(d/2))
}

func (o *Outbox) attrs(r record, kv ...any) []any {
	a := []any{"id", r.ID, "tenant", r.Tenant, "topic", r.Topic}
	if r.Subscriber != "" {
		a = append(a, "subscriber", r.Subscriber)
	}
	a = append(a, "attempt", r.Attempts)
	return append(a, kv...)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
