// Package coord holds the domain services of agent coordination — profiles
// and presence, messaging, and (in later files) tasks, missions and the
// rest. Each capability is one file; all are written against the store port
// and know nothing of SQLite, DynamoDB or MCP.
package coord

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/records"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	Logger  *slog.Logger
	// Index, when set, makes messages, tasks, briefing notes and components
	// searchable by keyword (see search.go); without it the keyword tools
	// answer that search is not configured.
	Index search.Index
	// SearchBackfillBudget bounds the backfill a keyword search runs first
	// for a tenant no backfill has finished (default 5s): the search then
	// answers from what is indexed, and the next one resumes the backfill.
	SearchBackfillBudget time.Duration
}

// Service is the coordination domain.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
	log     *slog.Logger
	idx     search.Index
	// searchBackfill is Options.SearchBackfillBudget.
	searchBackfill time.Duration
	// indexed remembers, per tenant, that the backfill marker was seen
	// (EnsureIndexed) and when, with a lock so that one process backfills a
	// tenant once per index.
	indexed sync.Map // tenant -> *tenantIndex
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.SearchBackfillBudget <= 0 {
		o.SearchBackfillBudget = 5 * time.Second
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now), log: o.Logger, idx: o.Index,
		searchBackfill: o.SearchBackfillBudget}
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

func encode(op string, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Entities are plain structs; failing to encode one is a bug.
		panic(op + ": encoding entity: " + err.Error())
	}
	return b
}

func decode[T any](op string, it store.Item) (T, error) { return records.Decode[T](op, it) }

// storeErr maps store errors onto domain kinds.
func storeErr(op string, err error) error { return records.Err(op, err) }

// get reads and decodes one entity; a missing item is a NotFound naming field.
func get[T any](ctx context.Context, s *Service, op, field, id string, k store.Key) (T, store.Item, error) {
	var zero T
	it, err := s.st.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return zero, it, vp.Errorf(op, vp.KindNotFound, field, "no %s %q in this tenant", field, id)
	}
	if err != nil {
		return zero, it, storeErr(op, err)
	}
	v, err := decode[T](op, it)
	return v, it, err
}

// queryAll reads a whole (small) partition, up to max items.
func (s *Service) queryAll(ctx context.Context, q store.Query, max int) ([]store.Item, error) {
	var out []store.Item
	for len(out) < max {
		q.Limit = min(200, max-len(out))
		rows, err := s.st.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(rows) < q.Limit {
			break
		}
		p := store.PositionOf(rows[len(rows)-1], q.Index)
		q.After = &p
	}
	return out, nil
}

// scan walks a partition in pages, calling fn until it returns false.
func (s *Service) scan(ctx context.Context, q store.Query, fn func(store.Item) (bool, error)) (int, error) {
	n := 0
	for {
		q.Limit = 100
		rows, err := s.st.Query(ctx, q)
		if err != nil {
			return n, err
		}
		for _, it := range rows {
			n++
			more, err := fn(it)
			if err != nil || !more {
				return n, err
			}
		}
		if len(rows) < q.Limit {
			return n, nil
		}
		pos := store.PositionOf(rows[len(rows)-1], q.Index)
		q.After = &pos
	}
}
