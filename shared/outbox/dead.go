package outbox

import (
	"context"
	"errors"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Entry is a job as an admin sees it.
type Entry struct {
	ID         string    `json:"id"`
	Tenant     string    `json:"tenant"`
	Topic      string    `json:"topic"`
	Subscriber string    `json:"subscriber,omitempty"`
	DedupKey   string    `json:"dedupKey,omitempty"`
	Event      bool      `json:"event,omitempty"` // not yet fanned out
	State      string    `json:"state"`           // "ready" or "dead"
	Attempts   int       `json:"attempts"`
	LastError  string    `json:"lastError,omitempty"`
	EnqueuedAt time.Time `json:"enqueuedAt"`
	// DueAt is when the job is next delivered (while it is leased: when
	// the lease ends).
	DueAt    time.Time `json:"dueAt"`
	FailedAt time.Time `json:"failedAt,omitzero"`
	DeadAt   time.Time `json:"deadAt,omitzero"`
}

func (r record) entry() Entry {
	e := Entry{ID: r.ID, Tenant: r.Tenant, Topic: r.Topic, Subscriber: r.Subscriber, DedupKey: r.DedupKey, Event: r.Event,
		State: r.State, Attempts: r.Attempts, LastError: r.LastError,
		EnqueuedAt: time.UnixMilli(r.EnqueuedAt).UTC(), DueAt: time.UnixMilli(r.DueAt).UTC()}
	if r.FailedAt != 0 {
		e.FailedAt = time.UnixMilli(r.FailedAt).UTC()
	}
	if r.DeadAt != 0 {
		e.DeadAt = time.UnixMilli(r.DeadAt).UTC()
	}
	return e
}

// Get returns the job id of tenant, ready or dead.
func (o *Outbox) Get(ctx context.Context, tenant, id string) (Entry, error) {
	const op = "outbox.Get"
	r, _, err := o.load(ctx, op, tenant, id)
	return r.entry(), err
}

func (o *Outbox) load(ctx context.Context, op, tenant, id string) (record, int64, error) {
	it, err := o.st.Get(ctx, jobKey(tenant, id))
	if errors.Is(err, store.ErrNotFound) {
		return record{}, 0, vp.Errorf(op, vp.KindNotFound, "id", "no outbox job %s in tenant %s", id, tenant)
	}
	if err != nil {
		return record{}, 0, vp.Wrap(op, vp.KindOf(err), err)
	}
	r, err := decode(it)
	if err != nil {
		return record{}, 0, vp.Wrap(op, vp.KindInternal, err)
	}
	return r, it.Version, nil
}

// DeadQuery selects dead letters.
type DeadQuery struct {
	Tenant string // "" for every tenant
	// Limit is the most returned (default 100, at most 1000).
	Limit int
}

// DeadLetters lists dead letters, oldest first.
func (o *Outbox) DeadLetters(ctx context.Context, q DeadQuery) ([]Entry, error) {
	const op = "outbox.DeadLetters"
	if q.Limit <= 0 {
		q.Limit = 100
	}
	q.Limit = min(q.Limit, 1000)
	sq := deadQuery("")
	sq.Limit = q.Limit
	if q.Tenant != "" {
		sq = deadQuery(q.Tenant)
		sq.Limit = q.Limit
	}
	rows, err := o.st.Query(ctx, sq)
	if err != nil {
		return nil, vp.Wrap(op, vp.KindOf(err), err)
	}
	out := make([]Entry, 0, len(rows))
	for _, it := range rows {
		r, err := decode(it)
		if err != nil {
			return nil, vp.Wrap(op, vp.KindInternal, err)
		}
		if r.State == stateDead { // the index may lag a Retry
			out = append(out, r.entry())
		}
	}
	return out, nil
}

// FindDead returns the dead letter id of any tenant, for an admin who has
// only the id (the CLI). It reads the dead-letter index page by page:
// dead letters are few, and this is never on a request path.
func (o *Outbox) FindDead(ctx context.Context, id string) (Entry, error) {
	const op = "outbox.FindDead"
	q := deadQuery("")
	q.Limit = 500
	for {
		rows, err := o.st.Query(ctx, q)
		if err != nil {
			return Entry{}, vp.Wrap(op, vp.KindOf(err), err)
		}
		for _, it := range rows {
			r, err := decode(it)
			if err != nil {
				return Entry{}, vp.Wrap(op, vp.KindInternal, err)
			}
			if r.ID == id && r.State == stateDead {
				return r.entry(), nil
			}
		}
		if len(rows) < q.Limit {
			return Entry{}, vp.Errorf(op, vp.KindNotFound, "id", "no dead letter %s (see: vantagepeers outbox dead)", id)
		}
		p := store.PositionOf(rows[len(rows)-1], store.GSI1)
		q.After = &p
	}
}

// Retry puts the dead letter id of tenant back in the queue, due now, with
// its attempts reset. An empty tenant looks the id up (FindDead).
func (o *Outbox) Retry(ctx context.Context, tenant, id string) (Entry, error) {
	const op = "outbox.Retry"
	r, ver, err := o.dead(ctx, op, tenant, id)
	if err != nil {
		return Entry{}, err
	}
	r.State, r.Attempts, r.DeadAt, r.DueAt = stateReady, 0, 0, o.now().UnixMilli()
	it, err := r.item()
	if err != nil {
		return Entry{}, vp.Wrap(op, vp.KindInternal, err)
	}
	if err := o.st.Write(ctx, store.Put(it, store.IfVersion(ver))); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return Entry{}, vp.E(op, vp.KindConflict, "id", "the job changed meanwhile; list the dead letters again")
		}
		return Entry{}, vp.Wrap(op, vp.KindOf(err), err)
	}
	o.log.InfoContext(ctx, "outbox job", o.attrs(r, "outcome", "retried_by_admin")...)
	o.Kick(Pending{id: r.ID, key: it.Key})
	return r.entry(), nil
}

// Discard deletes the dead letter id of tenant: its effect will not
// happen. Its dedup record stays, so a redelivery of the same cause is
// still a duplicate. An empty tenant looks the id up (FindDead).
func (o *Outbox) Discard(ctx context.Context, tenant, id string) (Entry, error) {
	const op = "outbox.Discard"
	r, ver, err := o.dead(ctx, op, tenant, id)
	if err != nil {
		return Entry{}, err
	}
	if err := o.st.Write(ctx, store.Delete(jobKey(r.Tenant, r.ID), store.IfVersion(ver))); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return Entry{}, vp.E(op, vp.KindConflict, "id", "the job changed meanwhile; list the dead letters again")
		}
		return Entry{}, vp.Wrap(op, vp.KindOf(err), err)
	}
	o.log.WarnContext(ctx, "outbox job", o.attrs(r, "outcome", "discarded_by_admin", "err", r.LastError)...)
	return r.entry(), nil
}

// dead loads the dead letter id (of tenant, or found by id).
func (o *Outbox) dead(ctx context.Context, op, tenant, id string) (record, int64, error) {
	if tenant == "" {
		e, err := o.FindDead(ctx, id)
		if err != nil {
			return record{}, 0, err
		}
		tenant = e.Tenant
	}
	r, ver, err := o.load(ctx, op, tenant, id)
	if err != nil {
		return record{}, 0, err
	}
	if r.State != stateDead {
		return record{}, 0, vp.Errorf(op, vp.KindConflict, "id", "job %s is not a dead letter (it is %s)", id, r.State)
	}
	return r, ver, nil
}
