// Package activity is wait_for_activity: an agent's call that answers at
// once when something waits for it (unread messages, tasks assigned to it
// and not started, tasks whose prerequisites are all done) and otherwise
// holds until something arrives or its timeout, instead of the agent
// polling check_messages and list_tasks. It reads; it never marks anything
// read or claims anything.
//
// Each kind of activity is a Source; a capability plugs its own in from
// its module entry (Service.Add). Waking: a Hub told of every commit this
// process makes (Notifying), plus, when the backend can say cheaply that
// another process committed (SQLite's data_version: Changes), a poll of
// that counter every PollEvery while someone waits; without one (DynamoDB,
// where each Lambda serves one call) the sources are read again with
// backoff from PollMin to PollMax.
//
// The answer is a hint, not the inbox: its cursor (since) is the newest
// arrival it returned, so an item that committed later with an older
// timestamp (a slow transaction, a DynamoDB index a moment behind) wakes
// no one until something newer does; check_messages and list_tasks remain
// the truth.
package activity

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The kinds of activity.
const (
	KindMessages     = "messages"
	KindTasks        = "tasks"
	KindUnblocked    = "unblocked"
	KindReservations = "reservations"
)

// Kinds are every kind a caller may ask for, in the order of the answer.
var Kinds = []string{KindMessages, KindTasks, KindUnblocked, KindReservations}

// Bounds of a wait.
const (
	DefaultTimeoutMs = 20_000
	MaxTimeoutMs     = 25_000
	// MaxItemsPerKind bounds the items of one kind in an answer (hasMore).
	MaxItemsPerKind = 20
	// DefaultPollEvery is the period of the Changes poll while someone
	// waits: a send is seen within it by a waiter in another process.
	DefaultPollEvery = 50 * time.Millisecond
	// DefaultPollMin and DefaultPollMax are the backoff of re-reading the
	// sources where there is no Changes (DynamoDB).
	DefaultPollMin = 100 * time.Millisecond
	DefaultPollMax = time.Second
)

// Item is one thing that arrived for the caller.
type Item struct {
	Kind string `json:"kind"`
	// ID is what the kind's own tools take: a receiptId, a taskId.
	ID string `json:"id"`
	// Ref is a related id: the messageId of a receipt.
	Ref string `json:"ref,omitempty"`
	// At is when it arrived (Unix ms): the cursor's clock.
	At    int64  `json:"at"`
	From  string `json:"from,omitempty"`
	Title string `json:"title"`
}

// Query is what a Source is asked.
type Query struct {
	Principal vp.Principal
	Tenant    string
	// Who is the orchestrator the caller acts as; Instance its instance.
	Who, Instance string
	// Since is the cursor (Unix ms): only what arrived after it; 0: every
	// pending item.
	Since int64
	Limit int
}

// Source is one kind of activity. A capability plugs its own in from its
// module entry with Service.Add (path reservations about to expire are
// the next one: KindReservations until then answers with a note).
type Source interface {
	Kind() string
	// Pending returns up to q.Limit items of q.Who after q.Since, and
	// whether more wait.
	Pending(ctx context.Context, q Query) ([]Item, bool, error)
}

// Changes is a counter of the store's commits, by any process, that the
// backend reads cheaply: it differs after every commit. *sqlite.Store
// (DataVersion) provides it.
type Changes interface {
	DataVersion(ctx context.Context) (int64, error)
}

// Options configures a Service.
type Options struct {
	Sources []Source
	// Hub wakes waiters on this process's commits (see Notifying).
	Hub     *Hub
	Changes Changes
	// MaxWait bounds every wait whatever the caller asks (MaxTimeoutMs
	// when zero): on AWS a waiting Lambda is billed, and the operator
	// chooses less.
	MaxWait          time.Duration
	PollEvery        time.Duration
	PollMin, PollMax time.Duration
	Now              func() time.Time
	Logger           *slog.Logger
}

// Service answers wait_for_activity.
type Service struct {
	o       Options
	sources map[string]Source

	mu       sync.Mutex
	waiters  int
	stopPoll chan struct{}

	closing   chan struct{} // closed by Close: every waiter answers
	closeOnce sync.Once
}

// New returns a Service.
func New(o Options) *Service {
	if o.Hub == nil {
		o.Hub = NewHub()
	}
	if o.MaxWait <= 0 || o.MaxWait > MaxTimeoutMs*time.Millisecond {
		o.MaxWait = MaxTimeoutMs * time.Millisecond
	}
	if o.PollEvery <= 0 {
		o.PollEvery = DefaultPollEvery
	}
	if o.PollMin <= 0 {
		o.PollMin = DefaultPollMin
	}
	if o.PollMax < o.PollMin {
		o.PollMax = max(DefaultPollMax, o.PollMin)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{o: o, sources: map[string]Source{}, closing: make(chan struct{})}
	for _, src := range o.Sources {
		s.Add(src)
	}
	return s
}

// Add plugs a source in; call it before serving.
func (s *Service) Add(src Source) { s.sources[src.Kind()] = src }

// Close makes every waiter answer now, with what it has: a server shutting
// down gracefully waits for its requests, and a wait may last 25 s.
func (s *Service) Close() { s.closeOnce.Do(func() { close(s.closing) }) }

// MaxWait is the longest wait this service grants.
func (s *Service) MaxWait() time.Duration { return s.o.MaxWait }

// Input is a wait.
type Input struct {
	// TimeoutMs is how long to hold when nothing waits: 0..25000, nil:
	// 20000; the server's MaxWait may shorten it.
	TimeoutMs *int64
	// Kinds restricts the kinds watched (all when empty).
	Kinds []string
	// Since is the cursor of the previous answer (Unix ms); nil: every
	// pending item counts.
	Since               *int64
	Recipient           string
	RecipientInstanceID string
	// Hold, set by a transport that bounds a token's requests in flight,
	// trades the call's request slot for a waiting slot before it waits
	// (see httpapi); an error refuses the wait. Nil: no bound.
	Hold func() (release func(), err error) `json:"-"`
}

// Limits bounds wait_for_activity's arguments.
type Limits struct{ TimeoutMs, Kinds vp.Limit }

// Limits are the limits of Input.
func (Input) Limits() Limits {
	return Limits{TimeoutMs: vp.Between("timeoutMs", 0, MaxTimeoutMs), Kinds: vp.MaxItems("kinds", len(Kinds), 16)}
}

// Result is what arrived, or nothing at the timeout.
type Result struct {
	Items []Item `json:"items"`
	Count int    `json:"count"`
	// HasMore: some kind had more than MaxItemsPerKind.
	HasMore bool `json:"hasMore,omitempty"`
	// Since is the cursor to pass back: the newest arrival returned (or,
	// with nothing, where this call looked up to).
	Since    int64    `json:"since"`
	TimedOut bool     `json:"timedOut"`
	WaitedMs int64    `json:"waitedMs"`
	Notes    []string `json:"notes,omitempty"`
}

// cursorSlack is how far back an empty answer's cursor stays from the
// moment it looked: a transaction that minted its timestamp before the
// look and committed after it is still after the cursor.
const cursorSlack = time.Second

// Wait answers at once when something of in.Kinds waits for the caller
// after in.Since; otherwise it holds until something arrives, the timeout
// or ctx ends.
func (s *Service) Wait(ctx context.Context, p vp.Principal, in Input) (Result, error) {
	const op = "wait_for_activity"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Result{}, err
	}
	lim := in.Limits()
	timeout := int64(DefaultTimeoutMs)
	if in.TimeoutMs != nil {
		timeout = *in.TimeoutMs
		if timeout < int64(lim.TimeoutMs.Min) || timeout > int64(lim.TimeoutMs.Max) {
			return Result{}, vp.Errorf(op, vp.KindInvalid, "timeoutMs", "must be from %d to %d milliseconds, got %d", int64(lim.TimeoutMs.Min), int64(lim.TimeoutMs.Max), timeout)
		}
	}
	if in.Since != nil && *in.Since < 0 {
		return Result{}, vp.Errorf(op, vp.KindInvalid, "since", "must be a Unix time in milliseconds (the since of a previous answer), got %d", *in.Since)
	}
	var errs vp.Errs
	errs.Add(vp.CheckName(op, "recipient", in.Recipient, false))
	errs.Add(vp.CheckName(op, "recipientInstanceId", in.RecipientInstanceID, false))
	if err := errs.First(); err != nil {
		return Result{}, err
	}
	who, err := p.ActAs(op, "recipient", in.Recipient)
	if err != nil {
		return Result{}, err
	}
	srcs, notes, err := s.pick(op, in.Kinds)
	if err != nil {
		return Result{}, err
	}
	wait := time.Duration(timeout) * time.Millisecond
	if wait > s.o.MaxWait {
		notes = append(notes, fmt.Sprintf("timeoutMs: this server holds a call at most %d ms; waited that long", s.o.MaxWait.Milliseconds()))
		wait = s.o.MaxWait
	}
	q := Query{Principal: p, Tenant: tenant, Who: who, Instance: vp.NormalizeOrchestrator(in.RecipientInstanceID), Limit: MaxItemsPerKind}
	if in.Since != nil {
		q.Since = *in.Since
	}
	start := time.Now()
	deadline := start.Add(wait)
	res, err := s.until(ctx, op, q, srcs, in.Hold, deadline)
	if err != nil {
		return Result{}, err
	}
	res.WaitedMs = time.Since(start).Milliseconds()
	res.Notes = append(notes, res.Notes...)
	return res, nil
}

// pick returns the sources of kinds (all when empty) and the notes of the
// kinds this server has no source for.
func (s *Service) pick(op string, kinds []string) ([]Source, []string, error) {
	if len(kinds) > len(Kinds) {
		return nil, nil, vp.Errorf(op, vp.KindTooLarge, "kinds", "has %d entries; there are %d kinds: %s", len(kinds), len(Kinds), strings.Join(Kinds, ", "))
	}
	want := kinds
	if len(want) == 0 {
		want = Kinds
	}
	var srcs []Source
	var notes, missing []string
	for _, k := range want {
		if !slices.Contains(Kinds, k) {
			return nil, nil, vp.Errorf(op, vp.KindInvalid, "kinds", "%q is not a kind; use %s", k, strings.Join(Kinds, ", "))
		}
		if src, ok := s.sources[k]; ok && !slices.Contains(srcs, src) {
			srcs = append(srcs, src)
		} else if !ok {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 && len(kinds) > 0 {
		notes = append(notes, fmt.Sprintf("kinds: %s not watched: this server has no source of it yet", strings.Join(missing, ", ")))
	}
	if len(srcs) == 0 {
		return nil, nil, vp.Errorf(op, vp.KindInvalid, "kinds", "none of %s can be watched on this server; use %s", strings.Join(want, ", "), strings.Join(s.available(), ", "))
	}
	return srcs, notes, nil
}

func (s *Service) available() []string {
	var out []string
	for _, k := range Kinds {
		if _, ok := s.sources[k]; ok {
			out = append(out, k)
		}
	}
	return out
}

// until reads the sources, and while they have nothing, waits for a
// change (or the next poll) and reads them again, until the deadline.
func (s *Service) until(ctx context.Context, op string, q Query, srcs []Source, hold func() (func(), error), deadline time.Time) (Result, error) {
	backoff := s.o.PollMin
	held := false
	for {
		v := s.o.Hub.Version()
		looked := s.o.Now()
		res, err := s.read(ctx, q, srcs)
		if err != nil {
			return Result{}, err
		}
		if res.Count > 0 {
			return res, nil
		}
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil || s.closed() {
			res.TimedOut = true
			res.Since = max(q.Since, looked.Add(-cursorSlack).UnixMilli())
			return res, nil
		}
		if !held {
			held = true
			if hold != nil {
				release, err := hold()
				if err != nil {
					return Result{}, err
				}
				defer release()
			}
			if s.o.Changes != nil {
				defer s.watch()()
			}
		}
		// Without a change counter the sources themselves are polled;
		// the hub still wakes this process's own writes at once.
		next := left
		if s.o.Changes == nil {
			next = min(backoff, left)
			backoff = min(2*backoff, s.o.PollMax)
		}
		t := time.NewTimer(next)
		select {
		case <-s.o.Hub.Changed(v):
		case <-t.C:
		case <-ctx.Done():
		case <-s.closing:
		}
		t.Stop()
	}
}

func (s *Service) closed() bool {
	select {
	case <-s.closing:
		return true
	default:
		return false
	}
}

// read asks each source once.
func (s *Service) read(ctx context.Context, q Query, srcs []Source) (Result, error) {
	res := Result{Items: []Item{}, Since: q.Since}
	var all []Item
	unblocked := map[string]bool{}
	for _, src := range srcs {
		items, more, err := src.Pending(ctx, q)
		if err != nil {
			return Result{}, err
		}
		res.HasMore = res.HasMore || more
		for _, it := range items {
			if it.Kind == KindUnblocked {
				unblocked[it.ID] = true
			}
		}
		all = append(all, items...)
	}
	for _, it := range all {
		if it.Kind == KindTasks && unblocked[it.ID] {
			continue // a task both not started and newly unblocked is told once
		}
		res.Items = append(res.Items, it)
		res.Since = max(res.Since, it.At)
	}
	res.Count = len(res.Items)
	return res, nil
}

// watch starts the Changes poll if it is the first waiter, and returns
// what ends its share of it.
func (s *Service) watch() func() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiters++; s.waiters == 1 {
		s.stopPoll = make(chan struct{})
		go s.poll(s.stopPoll)
	}
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.waiters--; s.waiters == 0 {
			close(s.stopPoll)
		}
	}
}

// poll reads the Changes counter every PollEvery until stop, and bumps
// the hub when it moved: another process (or this one) committed.
func (s *Service) poll(stop chan struct{}) {
	ctx := context.Background()
	last, err := s.o.Changes.DataVersion(ctx)
	if err != nil {
		s.o.Logger.Warn("wait_for_activity: reading the store's change counter", "err", err)
	}
	t := time.NewTicker(s.o.PollEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		v, err := s.o.Changes.DataVersion(ctx)
		if err != nil {
			s.o.Logger.Warn("wait_for_activity: reading the store's change counter", "err", err)
			continue
		}
		if v != last {
			last = v
			s.o.Hub.Bump()
		}
	}
}
