// Package reservation holds path reservations: an agent reserves the files
// of a project it is about to change (globs, exclusive or shared, for a
// time), so that other agents — and a git pre-commit guard asking
// check_paths — learn of the collision before it happens.
//
// Everything of one project lives in one partition of the table: a lock
// row, one row per reservation and one entry per reserved glob, keyed by
// the glob's literal prefix (Glob.Prefix). A reservation's write is
// conditional on the lock row's version read before its conflict check,
// so concurrent reservers of one project serialize: of racers for
// overlapping exclusive paths exactly one wins, on either backend. A
// conflict check reads only the entries whose prefix is an ancestor or a
// descendant of the asked glob's (a query per ancestor, one per subtree),
// then decides the overlap exactly (Overlap).
//
// Expiry is honest: a reservation is active while the service's clock is
// before its expiresAt, never shorter; the store's TTL removes its rows
// later. A job tells the holder once when one expired unrenewed, and a
// linked task's completion, failure, cancellation or deletion releases it.
package reservation

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Reservation is one reservation as the tools show it.
type Reservation struct {
	ID           string   `json:"_id"`
	CreationTime int64    `json:"_creationTime"`
	Project      string   `json:"project"`
	Holder       string   `json:"holder"`
	Paths        []string `json:"paths"`
	Exclusive    bool     `json:"exclusive"`
	Reason       string   `json:"reason,omitempty"`
	TaskID       string   `json:"taskId,omitempty"`
	TTLMinutes   int      `json:"ttlMinutes"`
	// ExpiresAt is in Unix milliseconds: the reservation is active before it.
	ExpiresAt int64 `json:"expiresAt"`
	RenewedAt int64 `json:"renewedAt,omitempty"`
}

// Conflict is a reservation of another holder that a request collides
// with: its overlapping globs. Its fields are a contract (the git guard
// reads them).
type Conflict struct {
	ReservationID string   `json:"reservationId"`
	Holder        string   `json:"holder"`
	Paths         []string `json:"paths"`
	Exclusive     bool     `json:"exclusive"`
	ExpiresAt     int64    `json:"expiresAt"`
	Reason        string   `json:"reason,omitempty"`
}

// row is a stored reservation: what the tools show, its tenant (the
// expiry index serves every tenant) and whether its holder was told it
// expired.
type row struct {
	Reservation
	Tenant   string `json:"tenant"`
	Notified bool   `json:"notified,omitempty"`
}

// entry is one reserved glob, stored under its literal prefix.
type entry struct {
	Project       string `json:"project"`
	ReservationID string `json:"reservationId"`
	N             int    `json:"n"` // the glob's position in the reservation
	Glob          string `json:"glob"`
	Holder        string `json:"holder"`
	Exclusive     bool   `json:"exclusive"`
	ExpiresAt     int64  `json:"expiresAt"`
	Reason        string `json:"reason,omitempty"`
}

// lock is the project's serialization row: every reservation and renewal
// writes it under IfVersion.
type lock struct {
	Project string `json:"project"`
	At      int64  `json:"at"`
}

// notifyGrace keeps an expired reservation's row readable (by the expiry
// job) this long after it ended; reads filter it out from expiresAt on.
const notifyGrace = 24 * time.Hour

var rows = table.Declare(table.Schema[row]{
	Entity:  "path reservation",
	Primary: table.Key{PK: "RSVP#{project}", SK: "R#{reservationId}", Pattern: "reservations of a project", Note: "TTL 24 h after expiresAt (the expiry notice reads it)"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "RSVH#{holder}", SK: "{reservationId}", Pattern: "reservations of a holder"},
		{Index: store.GSI2, PK: "RSVEXP", SK: "{expiresAt 13 digits}#{tenant}#{reservationId}", Global: true,
			Pattern: "reservations by expiry, all tenants", Note: "**server-side only** (the expiry job); sparse: dropped once the holder was told"},
		{Index: store.GSI3, PK: "RSVTASK#{taskId}", SK: "{reservationId}", Pattern: "reservations of a task", Note: "sparse: only linked ones"},
		{Index: store.GSI4, PK: "RSVALL", SK: "{reservationId}", Pattern: "reservations of the tenant"},
	},
	Fields: func(r row) table.Values {
		v := table.Values{"project": r.Project, "reservationId": r.ID, "holder": r.Holder, "taskId": r.TaskID, "tenant": r.Tenant}
		if !r.Notified {
			v["expiresAt 13 digits"] = table.Millis(r.ExpiresAt)
		}
		return v
	},
	Expires: func(r row) int64 { return ceilSeconds(r.ExpiresAt) + int64(notifyGrace/time.Second) },
})

var entries = table.Declare(table.Schema[entry]{
	Entity: "path reservation entry",
	Primary: table.Key{PK: "RSVP#{project}", SK: "P#{prefix?}|{reservationId}#{n}", Pattern: "reserved globs of a project by literal prefix",
		Note: "conflict check: one query per ancestor prefix, one per subtree; TTL at expiresAt"},
	Fields: func(e entry) table.Values {
		return table.Values{"project": e.Project, "prefix": MustGlob(e.Glob).Prefix(), "reservationId": e.ReservationID, "n": strconv.Itoa(e.N)}
	},
	Expires: func(e entry) int64 { return ceilSeconds(e.ExpiresAt) },
})

var locks = table.Declare(table.Schema[lock]{
	Entity:  "path reservation lock",
	Primary: table.Key{PK: "RSVP#{project}", SK: "LOCK", Pattern: "a project's reservation lock", Note: "IfVersion in every reservation and renewal"},
	Fields:  func(l lock) table.Values { return table.Values{"project": l.Project} },
})

// Tables documents the keys of this package (shared/store/KEYS.md).
func Tables() []table.Doc { return []table.Doc{rows.Doc(), entries.Doc(), locks.Doc()} }

// ceilSeconds is the store expiry (seconds) of a millisecond instant: the
// second at or after it, so that the store never hides a row early.
func ceilSeconds(ms int64) int64 { return (ms + 999) / 1000 }

// Limits of the inputs.
const (
	MaxPaths          = 32 // a reservation is written in one transaction with its entries
	MaxGlobBytes      = 512
	MaxReasonBytes    = vp.MaxShortTextBytes
	DefaultTTLMinutes = 60
	MaxTTLMinutes     = 1440
	MaxIDs            = 50
	// maxHeld bounds the reservations one renewal or release by project
	// visits.
	maxHeld = 200
	// maxAttempts bounds the rereads of a reservation that lost its lock
	// write: every reserver of a project takes the same lock, so a burst of
	// 40 may need about as many.
	maxAttempts = 64
)

// Limits bound the arguments, declared once for the tools' schemas and
// the checks.
type Limits struct{ Project, Paths, Reason, TTLMinutes, ReservationIDs vp.Limit }

func limits() Limits {
	return Limits{
		Project:        vp.MaxBytes("project", vp.MaxProjectBytes),
		Paths:          vp.MaxItems("paths", MaxPaths, MaxGlobBytes),
		Reason:         vp.MaxBytes("reason", MaxReasonBytes),
		TTLMinutes:     vp.Between("ttlMinutes", 1, MaxTTLMinutes),
		ReservationIDs: vp.MaxItems("reservationIds", MaxIDs, vp.MaxNameBytes),
	}
}

// Limits are reserve_paths' limits.
func (ReserveInput) Limits() vp.Limits {
	l := limits()
	return vp.Limits{l.Project, l.Paths, l.Reason, l.TTLMinutes}
}

// Limits are renew_reservations' limits.
func (RenewInput) Limits() vp.Limits {
	l := limits()
	return vp.Limits{l.Project, l.TTLMinutes, l.ReservationIDs}
}

// Limits are release_paths' limits.
func (ReleaseInput) Limits() vp.Limits {
	l := limits()
	return vp.Limits{l.Project, l.Paths, l.ReservationIDs}
}

// Limits are check_paths' limits.
func (CheckInput) Limits() vp.Limits {
	l := limits()
	return vp.Limits{l.Project, l.Paths}
}

// Limits are list_reservations' limits.
func (ListInput) Limits() vp.Limits {
	l := limits()
	return vp.Limits{l.Project, vp.MaxBytes("holder", vp.MaxNameBytes), vp.MaxBytes("path", MaxGlobBytes)}
}

// Tasks is what the service reads of tasks; *task.Service implements it.
type Tasks interface {
	GetTask(ctx context.Context, p vp.Principal, in task.TaskRef) (vp.Task, error)
}

// Notices sends a system message in the caller's transaction;
// *message.Service implements it.
type Notices interface {
	ComposeNotice(ctx context.Context, op, tenant, from, to, content string) (message.Notice, error)
	Sent(ctx context.Context, op, tenant string, n message.Notice)
}

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	Logger  *slog.Logger
	// Tasks checks a linked task; nil: taskId is taken as given.
	Tasks Tasks
	// Notices tells holders of expired reservations; nil: nobody is told.
	Notices Notices
}

// Service is the reservation domain.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	log     *slog.Logger
	ids     *vp.IDs
	tasks   Tasks
	notices Notices
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, log: o.Logger, ids: vp.NewIDs(o.Now), tasks: o.Tasks, notices: o.Notices}
}

// parseGlobs checks and parses the paths argument (at least one glob
// unless optional), dropping repeats.
func parseGlobs(op string, paths []string, optional bool) ([]Glob, error) {
	l := limits().Paths
	switch {
	case len(paths) == 0 && !optional:
		return nil, vp.E(op, vp.KindInvalid, l.Field, "is required: give at least one glob, such as \"src/api/**\"")
	case len(paths) > l.Items:
		return nil, vp.Errorf(op, vp.KindTooLarge, l.Field, "has %d globs; the limit is %d", len(paths), l.Items)
	}
	out := make([]Glob, 0, len(paths))
	for i, p := range paths {
		field := l.Field + "[" + strconv.Itoa(i) + "]"
		if len(p) > l.Bytes {
			return nil, vp.Errorf(op, vp.KindTooLarge, field, "is %d bytes; the limit is %d bytes", len(p), l.Bytes)
		}
		g, err := ParseGlob(op, field, p)
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(out, func(h Glob) bool { return h.src == g.src }) {
			out = append(out, g)
		}
	}
	return out, nil
}

func checkProject(op, project string, required bool) error {
	return limits().Project.KeyText(op, project, required)
}

func globStrings(gs []Glob) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.src
	}
	return out
}

// conflicts returns the active reservations of holders other than holder
// in the project that collide with globs: every overlapping one when
// exclusive, the exclusive ones otherwise. Reads are strongly consistent
// (one partition of the table).
func (s *Service) conflicts(ctx context.Context, tenant, project, holder string, globs []Glob, exclusive bool, nowMS int64) ([]Conflict, error) {
	byID := map[string]*Conflict{}
	var order []string
	seen := map[string]bool{} // queries already run
	for _, g := range globs {
		for _, q := range candidateQueries(tenant, project, g.Prefix()) {
			key := q.SKPrefix
			if seen[key] {
				continue
			}
			seen[key] = true
			err := scan(ctx, s.st, q, func(it store.Item) error {
				e, err := decodeEntry(it)
				if err != nil || e.ExpiresAt <= nowMS || e.Holder == holder || (!exclusive && !e.Exclusive) {
					return err
				}
				h, err := ParseGlob("check", "glob", e.Glob)
				if err != nil {
					return nil // an entry written under other rules cannot be judged; it expires
				}
				hit := false
				for _, mine := range globs {
					if _, ok := Overlap(mine, h); ok {
						hit = true
						break
					}
				}
				if !hit {
					return nil
				}
				c := byID[e.ReservationID]
				if c == nil {
					c = &Conflict{ReservationID: e.ReservationID, Holder: e.Holder, Exclusive: e.Exclusive, ExpiresAt: e.ExpiresAt, Reason: e.Reason}
					byID[e.ReservationID] = c
					order = append(order, e.ReservationID)
				}
				if !slices.Contains(c.Paths, e.Glob) {
					c.Paths = append(c.Paths, e.Glob)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	slices.Sort(order)
	out := make([]Conflict, len(order))
	for i, id := range order {
		out[i] = *byID[id]
	}
	return out, nil
}

// candidateQueries are the queries that read every entry whose prefix is
// an ancestor of prefix (exactly that prefix: "P#<ancestor>|") or starts
// with it (its subtree: "P#<prefix>"); by Glob.Prefix no other entry can
// overlap.
func candidateQueries(tenant, project, prefix string) []store.Query {
	pk := entries.PK(tenant, store.Primary, table.Values{"project": project})
	var out []store.Query
	for i := 0; i < len(prefix); i++ {
		if i == 0 || prefix[i-1] == '/' {
			out = append(out, store.Query{PK: pk, SKPrefix: "P#" + prefix[:i] + "|"})
		}
	}
	return append(out, store.Query{PK: pk, SKPrefix: "P#" + prefix})
}

// scan reads a whole query in pages.
func scan(ctx context.Context, st store.Store, q store.Query, fn func(store.Item) error) error {
	for {
		q.Limit = 500
		items, err := st.Query(ctx, q)
		if err != nil {
			return err
		}
		for _, it := range items {
			if err := fn(it); err != nil {
				return err
			}
		}
		if len(items) < q.Limit {
			return nil
		}
		p := store.PositionOf(items[len(items)-1], q.Index)
		q.After = &p
	}
}
