// Package storequeue is the durable local job queue of embedded mode: jobs
// are items of the store port (SQLite in one file with everything else), so
// a job can be enqueued in the same transaction as the row it is about
// (EnqueueOps), and survives restarts.
//
// Keys (declared below; shared/store/KEYS.md):
//
//	job                 table  T#<tenant>#JOB#<id> / JOB   (Q#<queue>#JOB#<id> without a tenant)
//	ready jobs by time  gsi1   Q#<queue>#READY / <availableAt 13 digits>#<id>
//	dead letters        gsi1   Q#<queue>#DEAD  / <deadAt 13 digits>#<id>
//
// The ready index is global to the queue (a worker serves every tenant); it
// exists only in the embedded store — on AWS the queue is SQS.
//
// Receive reads due jobs from the ready index, then leases each with a
// conditional write on the job's version (store.IfVersion): when two
// workers race for a job exactly one wins. A lease moves the job's
// availableAt to the end of the visibility timeout, so a job neither acked
// nor failed in time is delivered again. Fail schedules a retry with
// exponential backoff; after MaxAttempts deliveries the job moves to the
// dead-letter partition, where it stays (with its last error) until
// Redrive or Purge.
package storequeue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Defaults of Options.
const (
	DefaultName        = "jobs"
	DefaultMaxAttempts = 5
	DefaultBackoff     = time.Second
	DefaultMaxBackoff  = 5 * time.Minute
)

// ErrOtherStore is returned by EnqueueOps for a store that is not the
// queue's: the caller must enqueue after its own write instead.
var ErrOtherStore = errors.New("storequeue: not the queue's store")

// Options configures New. Store is required.
type Options struct {
	Store store.Store
	// Name separates queues sharing a store (default "jobs").
	Name string
	// MaxAttempts is how many deliveries a job gets before it is
	// dead-lettered (default 5).
	MaxAttempts int
	// Backoff is the delay before the second delivery of a failed job; it
	// doubles with each failure up to MaxBackoff.
	Backoff    time.Duration
	MaxBackoff time.Duration
	Now        func() time.Time
}

// Queue is the store-backed queue. It is safe for concurrent use, by
// several processes on one store as well.
type Queue struct {
	st          store.Store
	name        string
	maxAttempts int
	backoff     time.Duration
	maxBackoff  time.Duration
	now         func() time.Time
	ids         *vp.IDs
	wake        chan struct{}
}

var _ queue.Queue = (*Queue)(nil)

// New returns a queue over o.Store.
func New(o Options) *Queue {
	if o.Name == "" {
		o.Name = DefaultName
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Queue{st: o.Store, name: o.Name, maxAttempts: o.MaxAttempts, backoff: o.Backoff,
		maxBackoff: o.MaxBackoff, now: o.Now, ids: vp.NewIDs(o.Now), wake: make(chan struct{}, 1)}
}

// MaxAttempts is the number of deliveries before dead-lettering.
func (q *Queue) MaxAttempts() int { return q.maxAttempts }

// Job states.
const (
	stateReady = "ready"
	stateDead  = "dead"
)

// record is a job as stored.
type record struct {
	ID          string `json:"id"`
	Kind        string `json:"kind"`
	Tenant      string `json:"tenant,omitempty"`
	Payload     []byte `json:"payload,omitempty"`
	Attempts    int    `json:"attempts"`
	State       string `json:"state"`
	AvailableAt int64  `json:"availableAt"`
	EnqueuedAt  int64  `json:"enqueuedAt"`
	LastError   string `json:"lastError,omitempty"`
	DeadAt      int64  `json:"deadAt,omitempty"`
}

func ms13(ms int64) string { return fmt.Sprintf("%013d", max(ms, 0)) }

// Where jobs live (shared/store/KEYS.md is generated from these). A job of
// a tenant is tenant data; the queue's index is global (a worker serves
// every tenant) and its entries name their job, whose item names its
// tenant. Lanes of the index: due jobs by availableAt, dead letters by
// deadAt.
const (
	laneReady = "READY"
	laneDead  = "DEAD"
)

// stored is a job with the queue it is in.
type stored struct {
	queue string
	r     record
}

var queueIndex = table.Key{Index: store.GSI1, Global: true, PK: "Q#{queue}#{lane}", SK: "{at}#{jobId}",
	Pattern: "due / dead embedding jobs", Note: "server-side worker; lease = IfVersion put; `<lane>` is `READY` (`<at>` = availableAt, 13 digits) or `DEAD` (`<at>` = deadAt)"}

func jobFields(s stored) table.Values {
	v := table.Values{"queue": s.queue, "jobId": s.r.ID, "lane": laneReady, "at": ms13(s.r.AvailableAt)}
	if s.r.State == stateDead {
		v["lane"], v["at"] = laneDead, ms13(s.r.DeadAt)
	}
	return v
}

func encodeJob(s stored) ([]byte, error) { return json.Marshal(s.r) }

var tenantJobs = table.Declare(table.Schema[stored]{
	Entity:  "embedding job",
	Primary: table.Key{PK: "JOB#{jobId}", SK: "JOB", Pattern: "embedding job (local durable queue)", Note: "embedded mode only; SQS on AWS"},
	Indexes: []table.Key{queueIndex},
	Fields:  jobFields,
	Encode:  encodeJob,
})

var serverJobs = table.Declare(table.Schema[stored]{
	Entity:  "job without a tenant",
	Global:  true,
	Primary: table.Key{PK: "Q#{queue}#JOB#{jobId}", SK: "JOB", Pattern: "job without a tenant (local durable queue)", Note: "in the same queue index"},
	Indexes: []table.Key{queueIndex},
	Fields:  jobFields,
	Encode:  encodeJob,
})

// Tables describes this package's keys for KEYS.md; the queue index is
// listed once.
func Tables() []table.Doc {
	server := serverJobs.Doc()
	server.Keys = server.Keys[:1]
	return []table.Doc{tenantJobs.Doc(), server}
}

func jobsOf(tenant string) *table.Table[stored] {
	if tenant == "" {
		return serverJobs
	}
	return tenantJobs
}

func (q *Queue) key(tenant, id string) store.Key {
	return jobsOf(tenant).KeyOf(tenant, table.Values{"queue": q.name, "jobId": id})
}

// lane starts a query of one lane of the queue index.
func (q *Queue) lane(lane string) store.Query {
	return tenantJobs.Query("", store.GSI1, table.Values{"queue": q.name, "lane": lane})
}

// item builds the store item of r.
func (q *Queue) item(r record) store.Item {
	it, _ := jobsOf(r.Tenant).Item("storequeue", r.Tenant, stored{queue: q.name, r: r}) // a record always encodes
	return it
}

func (q *Queue) prepare(jobs []queue.Job) ([]store.Op, error) {
	now := q.now().UnixMilli()
	ops := make([]store.Op, 0, len(jobs))
	for _, j := range jobs {
		if j.Kind == "" {
			return nil, errors.New("storequeue: a job needs a kind")
		}
		if strings.ContainsAny(j.Tenant, "#") || strings.ContainsAny(j.ID, "#") {
			return nil, fmt.Errorf("storequeue: job %q: '#' is not allowed in ids and tenants", j.ID)
		}
		if j.ID == "" {
			j.ID = q.ids.New("job")
		}
		r := record{ID: j.ID, Kind: j.Kind, Tenant: j.Tenant, Payload: j.Payload, State: stateReady,
			AvailableAt: now, EnqueuedAt: now}
		ops = append(ops, store.Put(q.item(r), store.IfNotExists))
	}
	return ops, nil
}

// Enqueue stores jobs, available at once. Jobs without an ID get one; a job
// whose ID is already queued is refused with store.ErrConditionFailed (the
// whole call then writes nothing, per batch of 100).
func (q *Queue) Enqueue(ctx context.Context, jobs ...queue.Job) error {
	ops, err := q.prepare(jobs)
	if err != nil {
		return err
	}
	for len(ops) > 0 {
		n := min(len(ops), store.MaxTransactOps)
		if err := q.st.Write(ctx, ops[:n]...); err != nil {
			return fmt.Errorf("storequeue: enqueue: %w", err)
		}
		ops = ops[n:]
	}
	q.Wake()
	return nil
}

// EnqueueOps returns the writes that enqueue jobs, for the caller to commit
// in its own transaction on st (which must be the queue's store, else
// ErrOtherStore). Call Wake after the commit.
func (q *Queue) EnqueueOps(st store.Store, jobs ...queue.Job) ([]store.Op, error) {
	if !sameStore(st, q.st) {
		return nil, ErrOtherStore
	}
	return q.prepare(jobs)
}

func sameStore(a, b store.Store) (same bool) {
	defer func() {
		if recover() != nil { // an uncomparable store type
			same = false
		}
	}()
	return a == b
}

// Wake tells a waiting consumer (Ready) that jobs may be due.
func (q *Queue) Wake() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Ready returns a channel that receives after Enqueue or Wake: a consumer
// polling the queue can wait on it as well as on its poll interval.
func (q *Queue) Ready() <-chan struct{} { return q.wake }

// Receive leases up to max due jobs for visibility. Jobs whose last lease
// ran out after the final attempt are dead-lettered instead of delivered.
func (q *Queue) Receive(ctx context.Context, max int, visibility time.Duration) ([]queue.Job, error) {
	if max <= 0 {
		return nil, nil
	}
	if visibility <= 0 {
		visibility = 30 * time.Second
	}
	now := q.now().UnixMilli()
	ready := q.lane(laneReady)
	ready.SKTo, ready.Limit = ms13(now)+"#~", max+16
	rows, err := q.st.Query(ctx, ready)
	if err != nil {
		return nil, fmt.Errorf("storequeue: receive: %w", err)
	}
	// Workers racing for the same head of the queue would mostly collide:
	// start each at a random candidate and wrap around.
	start := 0
	if len(rows) > max {
		start = rand.IntN(len(rows))
	}
	var out []queue.Job
	for i := range rows {
		if len(out) == max {
			break
		}
		cand := rows[(start+i)%len(rows)]
		j, ok, err := q.lease(ctx, cand.Key, now, visibility)
		if err != nil {
			return out, err
		}
		if ok {
			out = append(out, j)
		}
	}
	return out, nil
}

// lease takes one job with a conditional write; ok is false when another
// worker got it first or it is not due.
func (q *Queue) lease(ctx context.Context, k store.Key, now int64, visibility time.Duration) (queue.Job, bool, error) {
	it, err := q.st.Get(ctx, k) // the index may lag: decide on the item itself
	if errors.Is(err, store.ErrNotFound) {
		return queue.Job{}, false, nil
	}
	if err != nil {
		return queue.Job{}, false, fmt.Errorf("storequeue: receive: %w", err)
	}
	var r record
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return queue.Job{}, false, fmt.Errorf("storequeue: job %s: %w", k.PK, err)
	}
	if r.State != stateReady || r.AvailableAt > now {
		return queue.Job{}, false, nil
	}
	if r.Attempts >= q.maxAttempts {
		r.State, r.DeadAt = stateDead, now
		if r.LastError == "" {
			r.LastError = fmt.Sprintf("not acknowledged after %d deliveries", r.Attempts)
		}
		err := q.st.Write(ctx, store.Put(q.item(r), store.IfVersion(it.Version)))
		if err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return queue.Job{}, false, fmt.Errorf("storequeue: dead-letter: %w", err)
		}
		return queue.Job{}, false, nil
	}
	r.Attempts++
	r.AvailableAt = now + visibility.Milliseconds()
	err = q.st.Write(ctx, store.Put(q.item(r), store.IfVersion(it.Version)))
	if errors.Is(err, store.ErrConditionFailed) {
		return queue.Job{}, false, nil // another worker leased it
	}
	if err != nil {
		return queue.Job{}, false, fmt.Errorf("storequeue: lease: %w", err)
	}
	return queue.Job{ID: r.ID, Kind: r.Kind, Tenant: r.Tenant, Payload: r.Payload, Attempts: r.Attempts}, true, nil
}

// Ack removes a finished job. Acking a job that is gone is not an error.
func (q *Queue) Ack(ctx context.Context, job queue.Job) error {
	if err := q.st.Write(ctx, store.Delete(q.key(job.Tenant, job.ID), store.Always)); err != nil {
		return fmt.Errorf("storequeue: ack %s: %w", job.ID, err)
	}
	return nil
}

// Fail records a failed delivery: the job is retried after a backoff that
// doubles with each attempt, or dead-lettered after MaxAttempts. A Fail for
// a delivery that is no longer the current one (the lease ran out and the
// job went to another worker) is ignored.
func (q *Queue) Fail(ctx context.Context, job queue.Job, cause error) error {
	msg := "failed"
	if cause != nil {
		msg = cause.Error()
	}
	if len(msg) > 2000 {
		msg = msg[:2000]
	}
	return table.Conflicts{Op: "storequeue.fail", Field: "jobId", ID: job.ID, Unmapped: true, Exhausted: func() error {
		return fmt.Errorf("storequeue: fail %s: the job kept changing", job.ID)
	}}.Retry(ctx, func() error {
		it, err := q.st.Get(ctx, q.key(job.Tenant, job.ID))
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("storequeue: fail %s: %w", job.ID, err)
		}
		var r record
		if err := json.Unmarshal(it.Data, &r); err != nil {
			return fmt.Errorf("storequeue: job %s: %w", job.ID, err)
		}
		if r.State != stateReady || r.Attempts != job.Attempts {
			return nil
		}
		now := q.now().UnixMilli()
		r.LastError = msg
		if r.Attempts >= q.maxAttempts {
			r.State, r.DeadAt = stateDead, now
		} else {
			r.AvailableAt = now + q.delay(r.Attempts).Milliseconds()
		}
		err = q.st.Write(ctx, store.Put(q.item(r), store.IfVersion(it.Version)))
		if err != nil {
			// A lost write stays a condition failure: read again.
			return fmt.Errorf("storequeue: fail %s: %w", job.ID, err)
		}
		return nil
	})
}

// delay is the backoff after the given number of failed deliveries.
func (q *Queue) delay(attempts int) time.Duration {
	d := q.backoff
	for i := 1; i < attempts && d < q.maxBackoff; i++ {
		d *= 2
	}
	return min(d, q.maxBackoff)
}

// DeadJob is a dead-lettered job with its last error.
type DeadJob struct {
	queue.Job
	LastError string
	DeadAt    time.Time
}

// DeadLetters lists up to max dead-lettered jobs, oldest first.
func (q *Queue) DeadLetters(ctx context.Context, max int) ([]DeadJob, error) {
	if max <= 0 {
		max = 100
	}
	dead := q.lane(laneDead)
	dead.Limit = max
	rows, err := q.st.Query(ctx, dead)
	if err != nil {
		return nil, fmt.Errorf("storequeue: dead letters: %w", err)
	}
	out := make([]DeadJob, 0, len(rows))
	for _, it := range rows {
		var r record
		if err := json.Unmarshal(it.Data, &r); err != nil {
			return nil, err
		}
		out = append(out, DeadJob{
			Job:       queue.Job{ID: r.ID, Kind: r.Kind, Tenant: r.Tenant, Payload: r.Payload, Attempts: r.Attempts},
			LastError: r.LastError, DeadAt: time.UnixMilli(r.DeadAt),
		})
	}
	return out, nil
}

// Redrive puts a dead-lettered job back in the queue with its attempts
// reset.
func (q *Queue) Redrive(ctx context.Context, job queue.Job) error {
	it, err := q.st.Get(ctx, q.key(job.Tenant, job.ID))
	if err != nil {
		return fmt.Errorf("storequeue: redrive %s: %w", job.ID, err)
	}
	var r record
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return err
	}
	if r.State != stateDead {
		return fmt.Errorf("storequeue: redrive %s: the job is not dead-lettered", job.ID)
	}
	r.State, r.Attempts, r.DeadAt, r.AvailableAt = stateReady, 0, 0, q.now().UnixMilli()
	if err := q.st.Write(ctx, store.Put(q.item(r), store.IfVersion(it.Version))); err != nil {
		return fmt.Errorf("storequeue: redrive %s: %w", job.ID, err)
	}
	q.Wake()
	return nil
}
