package outbox

import (
	"context"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Defaults of Options.
const (
	DefaultMaxAttempts  = 8
	DefaultBackoff      = time.Second
	DefaultMaxBackoff   = 10 * time.Minute
	DefaultLease        = time.Minute
	DefaultDedupWindow  = 30 * 24 * time.Hour
	DefaultPollInterval = 2 * time.Second
	DefaultConcurrency  = 4
)

// Limits of what a caller may enqueue.
const (
	MaxPayloadBytes = 256 * 1024
	MaxDedupKey     = 512
	MaxName         = 100 // topic and subscriber names
	// MaxSubscribers bounds one topic's subscribers: the fan-out of an event
	// is one transaction (the event's removal and one delivery each).
	MaxSubscribers = 64
)

// Options configures New. Store is required.
type Options struct {
	Store  store.Store
	Logger *slog.Logger
	// MaxAttempts is how many deliveries a job gets before it goes to dead
	// letters (default 8).
	MaxAttempts int
	// Backoff is the delay after the first failure; it doubles with each
	// further failure up to MaxBackoff. Each delay is jittered down to as
	// little as half, so that jobs failing together do not retry together.
	Backoff, MaxBackoff time.Duration
	// Lease is how long a runner owns a job it took (default 1m): the
	// handler's deadline, and how long a job whose runner died waits before
	// another runner takes it.
	Lease time.Duration
	// DedupWindow is how long a dedup key is remembered after its job was
	// enqueued (default 30 days).
	DedupWindow time.Duration
	// PollInterval is how often Run looks for due jobs when nothing woke it
	// (default 2s).
	PollInterval time.Duration
	// Concurrency is how many handlers Run and Drain run at once (default 4).
	Concurrency int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Jitter returns a number in [0, 1]; the backoff delay d becomes
	// d/2 + Jitter()*d/2 (default math/rand/v2.Float64). Tests pin it.
	Jitter func() float64
	// RemovalBatch, when positive, is how long the removals of jobs run
	// inline (RunInline) may wait to be written together, in one
	// transaction of up to store.MaxTransactOps deletes, instead of one
	// write each on the caller's path. A removal lost to a crash only makes
	// the job run again when its lease ends, which handlers tolerate (they
	// are idempotent). Close writes what waits. Zero: each removal is
	// written before RunInline returns.
	RemovalBatch time.Duration
}

// Handler runs one job. See the package documentation for its contract
// (idempotent under Job.ID; the meaning of the errors it returns).
type Handler func(ctx context.Context, j Job) error

// Job is what a handler receives.
type Job struct {
	// ID is stable across retries, crashes and redeliveries: the
	// idempotency key of the side effect.
	ID         string
	Tenant     string
	Topic      string
	Subscriber string // "" for a job of Handle
	DedupKey   string
	Payload    []byte
	Attempt    int // 1 on the first delivery
	EnqueuedAt time.Time
}

// Outbox enqueues jobs and events and runs them. It is safe for concurrent
// use; several Outboxes (processes, Lambdas) may share one store.
type Outbox struct {
	st          store.Store
	log         *slog.Logger
	maxAttempts int
	backoff     time.Duration
	maxBackoff  time.Duration
	lease       time.Duration
	dedupWindow time.Duration
	poll        time.Duration
	concurrency int
	now         func() time.Time
	jitter      func() float64
	ids         *vp.IDs

	mu       sync.RWMutex
	started  bool
	handlers map[string]Handler            // topic -> the job handler
	subs     map[string]map[string]Handler // topic -> subscriber -> handler

	wake  chan struct{}
	kicks chan store.Key

	removalBatch   time.Duration
	removals       chan store.Key
	removerOnce    sync.Once
	closeOnce      sync.Once
	removerStarted atomic.Bool
	closing        chan struct{}
	removerDone    chan struct{}
}

// New returns an outbox over o.Store.
func New(o Options) (*Outbox, error) {
	if o.Store == nil {
		return nil, vp.E("outbox.New", vp.KindInvalid, "Store", "is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.Backoff, DefaultBackoff)
	def(&o.MaxBackoff, DefaultMaxBackoff)
	def(&o.Lease, DefaultLease)
	def(&o.DedupWindow, DefaultDedupWindow)
	def(&o.PollInterval, DefaultPollInterval)
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Concurrency <= 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Jitter == nil {
		o.Jitter = rand.Float64
	}
	return &Outbox{
		st: o.Store, log: o.Logger, maxAttempts: o.MaxAttempts, backoff: o.Backoff, maxBackoff: max(o.MaxBackoff, o.Backoff),
		lease: o.Lease, dedupWindow: o.DedupWindow, poll: o.PollInterval, concurrency: o.Concurrency,
		now: o.Now, jitter: o.Jitter, ids: vp.NewIDs(o.Now),
		handlers: map[string]Handler{}, subs: map[string]map[string]Handler{},
		wake: make(chan struct{}, 1), kicks: make(chan store.Key, 1024),
		removalBatch: o.RemovalBatch, removals: make(chan store.Key, 4096),
		closing: make(chan struct{}), removerDone: make(chan struct{}),
	}, nil
}

// MaxAttempts is the number of deliveries before a job is dead-lettered.
func (o *Outbox) MaxAttempts() int { return o.maxAttempts }

// Handle registers the handler of the jobs of topic (Enqueue). A topic has
// one handler, and no subscribers.
func (o *Outbox) Handle(topic string, h Handler) error {
	const op = "outbox.Handle"
	if err := checkName(op, "topic", topic); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.started:
		return vp.E(op, vp.KindConflict, "", "register handlers before Run, Drain or Flush")
	case h == nil:
		return vp.E(op, vp.KindInvalid, "handler", "is nil")
	case o.handlers[topic] != nil:
		return vp.Errorf(op, vp.KindConflict, "topic", "%q already has a handler", topic)
	case o.subs[topic] != nil:
		return vp.Errorf(op, vp.KindConflict, "topic", "%q is an event topic (it has subscribers)", topic)
	}
	o.handlers[topic] = h
	return nil
}

// Subscribe registers subscriber's handler for the events of topic
// (Publish). The subscriber name is part of each delivery's identity:
// keep it stable across releases.
func (o *Outbox) Subscribe(topic, subscriber string, h Handler) error {
	const op = "outbox.Subscribe"
	if err := checkName(op, "topic", topic); err != nil {
		return err
	}
	if err := checkName(op, "subscriber", subscriber); err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case o.started:
		return vp.E(op, vp.KindConflict, "", "subscribe before Run, Drain or Flush")
	case h == nil:
		return vp.E(op, vp.KindInvalid, "handler", "is nil")
	case o.handlers[topic] != nil:
		return vp.Errorf(op, vp.KindConflict, "topic", "%q is a job topic (it has a handler)", topic)
	case o.subs[topic][subscriber] != nil:
		return vp.Errorf(op, vp.KindConflict, "subscriber", "%q already subscribes to %q", subscriber, topic)
	case len(o.subs[topic]) >= MaxSubscribers:
		return vp.Errorf(op, vp.KindTooLarge, "topic", "%q has %d subscribers, the limit", topic, MaxSubscribers)
	}
	if o.subs[topic] == nil {
		o.subs[topic] = map[string]Handler{}
	}
	o.subs[topic][subscriber] = h
	return nil
}

// start closes registration: handlers are read without further changes.
func (o *Outbox) start() {
	o.mu.Lock()
	o.started = true
	o.mu.Unlock()
}

func (o *Outbox) handler(topic, subscriber string) Handler {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if subscriber == "" {
		return o.handlers[topic]
	}
	return o.subs[topic][subscriber]
}

// subscribers returns the subscribers of topic, sorted (the fan-out's
// ops are then the same on every runner).
func (o *Outbox) subscribers(topic string) []string {
	o.mu.RLock()
	defer o.mu.RUnlock()
	names := make([]string, 0, len(o.subs[topic]))
	for n := range o.subs[topic] {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Pending is the outcome of Enqueue or Publish: the ops to append to the
// caller's transaction, and the handle to Kick or Flush after it commits.
type Pending struct {
	id        string
	key       store.Key
	ops       []store.Op
	duplicate bool
	// inline holds the job of EnqueueInline, or the deliveries of
	// PublishInline, leased to their caller.
	inline []record
}

// Ops returns the writes to commit with the caller's own (none for a
// duplicate).
func (p Pending) Ops() []store.Op { return p.ops }

// ID is the job's id ("" for a duplicate whose job may be gone).
func (p Pending) ID() string { return p.id }

// Duplicate reports that the dedup key was seen within the dedup window:
// nothing is to be enqueued.
func (p Pending) Duplicate() bool { return p.duplicate }

// Enqueue returns the ops that enqueue a job for topic's handler, to be
// committed in the caller's transaction. dedupKey may be empty (no
// deduplication).
func (o *Outbox) Enqueue(ctx context.Context, tenant, topic, dedupKey string, payload []byte) (Pending, error) {
	return o.prepare(ctx, "outbox.Enqueue", tenant, topic, dedupKey, payload, false, false)
}

// EnqueueInline is Enqueue for a job its caller runs itself right after
// the commit, with RunInline: an effect that should be near-synchronous
// and cheap (a search index write). The job is committed already leased
// to the caller, due only when the lease ends, so no worker takes it while
// the caller runs it, and running it costs one write, its removal. If the
// caller dies or the effect fails, the job is the worker's like any other.
func (o *Outbox) EnqueueInline(ctx context.Context, tenant, topic string, payload []byte) (Pending, error) {
	return o.prepare(ctx, "outbox.EnqueueInline", tenant, topic, "", payload, false, true)
}

// Publish returns the ops that publish an event of topic to its
// subscribers, to be committed in the caller's transaction. A topic with
// no subscriber when the event is fanned out drops it: nobody asked.
func (o *Outbox) Publish(ctx context.Context, tenant, topic, dedupKey string, payload []byte) (Pending, error) {
	return o.prepare(ctx, "outbox.Publish", tenant, topic, dedupKey, payload, true, false)
}

func (o *Outbox) prepare(ctx context.Context, op, tenant, topic, dedupKey string, payload []byte, event, inline bool) (Pending, error) {
	if tenant == "" || strings.Contains(tenant, "#") {
		return Pending{}, vp.E(op, vp.KindInvalid, "tenant", "must be non-empty and without '#'")
	}
	if err := checkName(op, "topic", topic); err != nil {
		return Pending{}, err
	}
	if len(dedupKey) > MaxDedupKey {
		return Pending{}, vp.Errorf(op, vp.KindTooLarge, "dedupKey", "is %d bytes, the limit is %d", len(dedupKey), MaxDedupKey)
	}
	if len(payload) > MaxPayloadBytes {
		return Pending{}, vp.Errorf(op, vp.KindTooLarge, "payload", "is %d bytes, the limit is %d", len(payload), MaxPayloadBytes)
	}
	now := o.now()
	var id string
	if dedupKey == "" {
		id = o.ids.New("ob")
	} else {
		id = hashID(tenant, topic, dedupKey)
		_, err := o.st.Get(ctx, dedupKeyOf(tenant, id))
		if err == nil {
			return Pending{duplicate: true}, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return Pending{}, vp.Wrap(op, vp.KindOf(err), err)
		}
	}
	r := record{ID: id, Tenant: tenant, Topic: topic, DedupKey: dedupKey, Event: event, Payload: payload,
		State: stateReady, DueAt: now.UnixMilli(), EnqueuedAt: now.UnixMilli()}
	if inline {
		r.Attempts, r.DueAt = 1, now.Add(o.lease).UnixMilli()
	}
	it, err := r.item()
	if err != nil {
		return Pending{}, vp.Wrap(op, vp.KindInternal, err)
	}
	ops := []store.Op{store.Put(it, store.IfNotExists)}
	if dedupKey != "" {
		d, err := dedups.Item(op, tenant, dedupRecord{ID: id, ExpiresAt: now.Add(o.dedupWindow).Unix()})
		if err != nil {
			return Pending{}, err
		}
		ops = append(ops, store.Put(d, store.IfNotExists))
	}
	p := Pending{id: id, key: it.Key, ops: ops}
	if inline {
		p.inline = []record{r}
	}
	return p, nil
}

// PublishInline is Publish for an event its caller delivers itself right
// after the commit, with RunInline, when the delivery must be
// near-synchronous (a mission completing with its last task). Instead of
// the event, it returns the ops of its deliveries to the topic's
// subscribers — the fan-out a worker would do, done at publish time —
// each committed leased to the caller like a job of EnqueueInline. A
// delivery then costs its handler and one write, its removal, where
// Publish and Flush cost the event's lease and fan-out and each
// delivery's lease besides. If the caller dies or a handler fails, the
// deliveries are the worker's like any other. Registration is closed from
// the first call (the subscribers must be known); with no subscriber the
// event is dropped, as a fan-out would drop it.
func (o *Outbox) PublishInline(ctx context.Context, tenant, topic string, payload []byte) (Pending, error) {
	const op = "outbox.PublishInline"
	o.start()
	p, err := o.prepare(ctx, op, tenant, topic, "", payload, true, false)
	if err != nil {
		return Pending{}, err
	}
	now := o.now()
	out := Pending{id: p.id}
	for _, s := range o.subscribers(topic) {
		d := record{ID: hashID(p.id, s), Tenant: tenant, Topic: topic, Subscriber: s, Payload: payload,
			State: stateReady, Attempts: 1, DueAt: now.Add(o.lease).UnixMilli(), EnqueuedAt: now.UnixMilli()}
		it, err := d.item()
		if err != nil {
			return Pending{}, vp.Wrap(op, vp.KindInternal, err)
		}
		out.ops = append(out.ops, store.Put(it, store.IfNotExists))
		out.inline = append(out.inline, d)
	}
	return out, nil
}

// IsDuplicate reports whether a failed Write failed on an outbox job or
// dedup record that already exists: another transaction enqueued the same
// dedup key first.
func IsDuplicate(err error) bool {
	var ce *store.ConditionError
	if !errors.As(err, &ce) {
		return false
	}
	return strings.HasPrefix(ce.Key.PK, "T#") && strings.Contains(ce.Key.PK, "#OB#") &&
		(ce.Key.SK == skJob || ce.Key.SK == skDedup)
}

// Permanent marks a handler's error as one no retry can fix (a payload
// that cannot be decoded, a repository that no longer exists): the job
// goes to dead letters at once. Permanent(nil) is nil.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return "permanent: " + e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

func checkName(op, field, s string) error {
	if s == "" || len(s) > MaxName {
		return vp.Errorf(op, vp.KindInvalid, field, "must be 1 to %d characters", MaxName)
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			return vp.Errorf(op, vp.KindInvalid, field, "%q: use lower-case letters, digits, '.', '-' and '_'", s)
		}
	}
	return nil
}

// ---- records and keys ----

const (
	stateReady = "ready"
	stateDead  = "dead"
	skJob      = "JOB"
	skDedup    = "DEDUP"
)

// record is a job as stored.
type record struct {
	ID         string `json:"id"`
	Tenant     string `json:"tenant"`
	Topic      string `json:"topic"`
	Subscriber string `json:"sub,omitempty"`
	// Event: fan out to the topic's subscribers instead of running a handler.
	Event      bool   `json:"event,omitempty"`
	DedupKey   string `json:"dedup,omitempty"`
	Payload    []byte `json:"payload,omitempty"`
	Attempts   int    `json:"attempts"`
	State      string `json:"state"`
	DueAt      int64  `json:"dueAt"` // ms; while leased, the end of the lease
	EnqueuedAt int64  `json:"enqueuedAt"`
	LastError  string `json:"lastError,omitempty"`
	FailedAt   int64  `json:"failedAt,omitempty"`
	DeadAt     int64  `json:"deadAt,omitempty"`
}

// jobs declares a job's keys (KEYS.md). Its gsi1 entry is in the due
// partition while it waits and in the dead one after its last attempt; the
// tenant's dead-letter index (gsi2) holds only dead jobs (sparse).
var jobs = table.Declare(table.Schema[record]{
	Entity: "outbox job",
	Primary: table.Key{PK: "OB#{id}", SK: skJob, Pattern: "outbox job or event",
		Note: "enqueued in the transaction of its cause; a deduplicated job's id is a hash of tenant, topic and dedup key"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "OB#{queue}", SK: "{at}#{id}", Global: true, Pattern: "due outbox jobs (`READY`) / dead letters (`DEAD`)",
			Note: "server-side worker serving every tenant; lease = IfVersion put"},
		{Index: store.GSI2, PK: "OBDEAD", SK: "{deadAt}#{id}", Pattern: "dead letters of a tenant",
			Note: "sparse: dead jobs only; `vantagepeers outbox dead --tenant`"},
	},
	Fields: func(r record) table.Values {
		v := table.Values{"id": r.ID, "queue": "READY", "at": ms13(r.DueAt)}
		if r.State == stateDead {
			v["queue"], v["at"], v["deadAt"] = "DEAD", ms13(r.DeadAt), ms13(r.DeadAt)
		}
		return v
	},
})

// dedupRecord is what remembers a dedup key after its job is gone.
type dedupRecord struct {
	ID        string `json:"-"`
	ExpiresAt int64  `json:"-"`
}

var dedups = table.Declare(table.Schema[dedupRecord]{
	Entity:  "outbox dedup record",
	Primary: table.Key{PK: "OB#{id}", SK: skDedup, Pattern: "dedup record of an outbox job", Note: "TTL: the dedup window (default 30 days)"},
	Fields:  func(d dedupRecord) table.Values { return table.Values{"id": d.ID} },
	Expires: func(d dedupRecord) int64 { return d.ExpiresAt },
})

// Tables declares the outbox's keys for KEYS.md.
func Tables() []table.Doc { return []table.Doc{jobs.Doc(), dedups.Doc()} }

func ms13(ms int64) string { return table.Millis(max(ms, 0)) }

func jobKey(tenant, id string) store.Key { return jobs.KeyOf(tenant, table.Values{"id": id}) }

func dedupKeyOf(tenant, id string) store.Key { return dedups.KeyOf(tenant, table.Values{"id": id}) }

func readyQuery() store.Query { return jobs.Query("", store.GSI1, table.Values{"queue": "READY"}) }

func deadQuery(tenant string) store.Query {
	if tenant == "" {
		return jobs.Query("", store.GSI1, table.Values{"queue": "DEAD"})
	}
	return jobs.Query(tenant, store.GSI2, nil)
}

func (r record) item() (store.Item, error) { return jobs.Item("outbox", r.Tenant, r) }

func decode(it store.Item) (record, error) {
	var r record
	if err := json.Unmarshal(it.Data, &r); err != nil {
		return r, fmt.Errorf("outbox: job %s: %w", it.Key.PK, err)
	}
	return r, nil
}

// idEncoding is base32 in lower case without padding: ids fit in keys and
// read like the time-ordered ids (which they are not: a hash must not
// depend on when the duplicate arrives).
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// hashID is the id of a deduplicated job, or of an event's delivery to one
// subscriber: the same inputs always give the same id.
func hashID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return "ob_" + idEncoding.EncodeToString(h.Sum(nil)[:16])
}
