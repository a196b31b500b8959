// Package keyword is keyword search over the coordination aggregates —
// messages, tasks, briefing notes and components: the searches, which read
// every hit back from its aggregate's table, and the backfill that indexes
// what was written before the index existed, and the handler of the index
// jobs every aggregate commits with its writes (search.Writer, IndexJob);
// this package only reads their tables.
package keyword

import (
	"log/slog"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
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

// Service is keyword search and its backfill.
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
