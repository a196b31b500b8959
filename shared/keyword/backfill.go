package keyword

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The keyword backfill indexes what a tenant wrote before keyword search
// existed, or before its index was lost. It runs once per index, and it
// resumes: a run cut short by a Lambda's deadline or a search's budget
// continues where it stopped, so a tenant too large for one invocation is
// still finished by a few.

// indexMarkerID names the document that records that a tenant's
// coordination data was indexed; a new version (a new document shape)
// makes EnsureIndexed index everything again. It lives in the index, so an
// index that is lost or replaced is backfilled again.
const (
	indexMarkerID    = "coord-index-v1"
	indexMarkerKind  = "marker"
	indexMarkerTitle = "vantagepeers coordination index marker"
	backfillRunTitle = "vantagepeers coordination backfill run"
)

// markerRecheck is how long a process trusts a marker it has seen. Past
// it, the next EnsureIndexed reads the marker again (one index query), so
// that a long-lived process — a warm Lambda container, the scheduler —
// backfills an index that was replaced under it.
const markerRecheck = 10 * time.Minute

// backfillBatch is how many documents one index write carries; the
// checkpoint moves after each.
const backfillBatch = 200

type tenantIndex struct {
	mu     sync.Mutex
	seenAt time.Time // when the marker was last seen or written; zero: never
}

// ReindexReport counts the documents a backfill wrote, over all the runs
// that made it.
type ReindexReport struct {
	Tenant         string `json:"tenant"`
	AlreadyIndexed bool   `json:"alreadyIndexed,omitempty"`
	Resumed        bool   `json:"resumed,omitempty"`
	Messages       int    `json:"messages"`
	Tasks          int    `json:"tasks"`
	Briefings      int    `json:"briefings"`
	Components     int    `json:"components"`
}

// backfillRun is the checkpoint of a backfill in progress, kept in the
// store. Run names a document written into the index when the run began:
// an index without it is not the one the run was filling, and the run
// starts over.
type backfillRun struct {
	Run    string          `json:"run"`
	Source int             `json:"source"`          // index into backfillSources
	After  *store.Position `json:"after,omitempty"` // the last item indexed in Source
	Report ReindexReport   `json:"report"`
}

// checkpoints declares where a tenant's backfill in progress is kept.
var checkpoints = table.Declare(table.Schema[backfillRun]{
	Entity:  "keyword backfill checkpoint",
	Primary: table.Key{PK: "IDXFILL", SK: indexMarkerID, Pattern: "keyword-search backfill checkpoint", Note: "run id, source, last position; deleted when the backfill finishes"},
	Fields:  func(backfillRun) table.Values { return nil },
})

// Tables declares the package's keys for KEYS.md.
func Tables() []table.Doc { return []table.Doc{checkpoints.Doc()} }

func backfillKey(tenant string) store.Key { return checkpoints.KeyOf(tenant, nil) }

func backfillRunDocID(run string) string { return "coord-backfill-" + run }

// EnsureIndexed indexes a tenant's messages, tasks, briefing notes and
// components unless the index already carries the tenant's marker (data
// written since keyword search exists is indexed by its write). One
// process backfills a tenant once per index, and looks for the marker again
// after markerRecheck; concurrent processes only repeat idempotent upserts.
// Without an index it does nothing.
func (s *Service) EnsureIndexed(ctx context.Context, tenant string) (ReindexReport, error) {
	rep := ReindexReport{Tenant: tenant}
	if s.idx == nil {
		return rep, nil
	}
	if !vp.ValidTenant(tenant) {
		return rep, fmt.Errorf("keyword.EnsureIndexed: %q is not a tenant id", tenant)
	}
	v, _ := s.indexed.LoadOrStore(tenant, &tenantIndex{})
	ti := v.(*tenantIndex)
	ti.mu.Lock()
	defer ti.mu.Unlock()
	now := s.now()
	if !ti.seenAt.IsZero() && now.Sub(ti.seenAt) < markerRecheck {
		rep.AlreadyIndexed = true
		return rep, nil
	}
	found, err := s.indexHolds(ctx, tenant, indexMarkerTitle, indexMarkerID)
	if err != nil {
		return rep, fmt.Errorf("keyword.EnsureIndexed: reading the marker: %w", err)
	}
	if found {
		ti.seenAt, rep.AlreadyIndexed = now, true
		return rep, nil
	}
	if rep, err = s.Reindex(ctx, tenant); err != nil {
		return rep, err
	}
	ti.seenAt = now
	return rep, nil
}

// indexHolds reports whether the tenant's marker partition holds the
// document id, looked up by its title.
func (s *Service) indexHolds(ctx context.Context, tenant, title, id string) (bool, error) {
	hits, err := s.idx.Text(ctx, title, search.Filter{Tenant: indexPartition(tenant, indexMarkerKind), Kinds: []string{indexMarkerKind}}, 10)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(hits, func(h search.Hit) bool { return h.ID == id }), nil
}

// backfillSource is one partition the backfill reads, in a fixed order
// (the checkpoint names a source by its position).
type backfillSource struct {
	q     store.Query
	count func(*ReindexReport) *int
	doc   func(store.Item) (search.Doc, error)
}

func backfillSources(tenant string) []backfillSource {
	const op = "keyword.reindex"
	sources := []backfillSource{
		{message.Messages.Query(tenant, store.GSI3, nil), func(r *ReindexReport) *int { return &r.Messages }, func(it store.Item) (search.Doc, error) {
			m, err := records.Decode[vp.Message](op, it)
			return message.Doc(tenant, m), err
		}},
		{briefing.Notes.Query(tenant, store.GSI1, nil), func(r *ReindexReport) *int { return &r.Briefings }, func(it store.Item) (search.Doc, error) {
			n, err := records.Decode[vp.BriefingNote](op, it)
			return briefing.Doc(tenant, n), err
		}},
		{component.Components.Query(tenant, store.GSI1, nil), func(r *ReindexReport) *int { return &r.Components }, func(it store.Item) (search.Doc, error) {
			c, err := records.Decode[vp.Component](op, it)
			return component.Doc(tenant, c), err
		}},
	}
	for _, st := range vp.TaskStatuses { // there is no all-tasks index: one partition per status
		sources = append(sources, backfillSource{task.Table.Query(tenant, store.GSI2, table.Values{"status": st}), func(r *ReindexReport) *int { return &r.Tasks }, func(it store.Item) (search.Doc, error) {
			t, err := records.Decode[vp.Task](op, it)
			return task.Doc(tenant, t), err
		}})
	}
	return sources
}

// Reindex upserts every message, task, briefing note and component of a
// tenant, reading them with the list queries, then writes the marker. It
// resumes the tenant's unfinished run when the index still holds that
// run's document, and checkpoints after every batch. Deleted entities are
// not removed (their documents are dropped when a search reads them back).
func (s *Service) Reindex(ctx context.Context, tenant string) (ReindexReport, error) {
	if s.idx == nil {
		return ReindexReport{Tenant: tenant}, errors.New("keyword.Reindex: no search index configured")
	}
	run, err := s.startBackfill(ctx, tenant)
	if err != nil {
		return run.Report, fmt.Errorf("keyword.Reindex %s: %w", tenant, err)
	}
	sources := backfillSources(tenant)
	for i := run.Source; i < len(sources); i++ {
		src := sources[i]
		q := src.q
		if i == run.Source {
			q.After = run.After
		}
		var docs []search.Doc
		var last store.Item
		flush := func() error {
			if len(docs) == 0 {
				return nil
			}
			if err := s.idx.Upsert(ctx, docs...); err != nil {
				return err
			}
			*src.count(&run.Report) += len(docs)
			docs = docs[:0]
			pos := store.PositionOf(last, q.Index)
			run.Source, run.After = i, &pos
			return s.saveBackfill(ctx, tenant, run)
		}
		err := records.Scan(ctx, s.st, q, func(it store.Item) (bool, error) {
			d, err := src.doc(it)
			if err != nil {
				return false, err
			}
			docs, last = append(docs, d), it
			if len(docs) == backfillBatch {
				return true, flush()
			}
			return true, nil
		})
		if err == nil {
			err = flush()
		}
		if err != nil {
			return run.Report, fmt.Errorf("keyword.Reindex %s: %w", tenant, err)
		}
	}
	marker := search.Doc{Tenant: indexPartition(tenant, indexMarkerKind), ID: indexMarkerID, Kind: indexMarkerKind,
		Title: indexMarkerTitle, CreatedAt: s.nowMS()}
	if err := s.idx.Upsert(ctx, marker); err != nil {
		return run.Report, fmt.Errorf("keyword.Reindex %s: writing the marker: %w", tenant, err)
	}
	// The marker decides from now on; a leftover checkpoint or run document
	// would only cost a lookup, so failing to remove them fails nothing.
	if err := s.st.Write(ctx, store.Delete(backfillKey(tenant), store.Always)); err != nil {
		s.log.WarnContext(ctx, "removing the keyword backfill checkpoint", "tenant", tenant, "err", err)
	}
	if err := s.idx.Delete(ctx, indexPartition(tenant, indexMarkerKind), backfillRunDocID(run.Run)); err != nil {
		s.log.WarnContext(ctx, "removing the keyword backfill run document", "tenant", tenant, "err", err)
	}
	return run.Report, nil
}

// startBackfill returns the tenant's unfinished run when the index still
// holds its document, or begins a new one.
func (s *Service) startBackfill(ctx context.Context, tenant string) (backfillRun, error) {
	it, err := s.st.Get(ctx, backfillKey(tenant))
	switch {
	case err == nil:
		run, err := records.Decode[backfillRun]("keyword.reindex", it)
		if err == nil && run.Run != "" {
			same, err := s.indexHolds(ctx, tenant, backfillRunTitle, backfillRunDocID(run.Run))
			if err != nil {
				return backfillRun{Report: ReindexReport{Tenant: tenant}}, fmt.Errorf("reading the run document: %w", err)
			}
			if same {
				run.Report.Tenant, run.Report.Resumed = tenant, true
				return run, nil
			}
		}
	case !errors.Is(err, store.ErrNotFound):
		return backfillRun{Report: ReindexReport{Tenant: tenant}}, fmt.Errorf("reading the checkpoint: %w", err)
	}
	run := backfillRun{Run: s.ids.New("run"), Report: ReindexReport{Tenant: tenant}}
	doc := search.Doc{Tenant: indexPartition(tenant, indexMarkerKind), ID: backfillRunDocID(run.Run), Kind: indexMarkerKind,
		Title: backfillRunTitle, CreatedAt: s.nowMS()}
	if err := s.idx.Upsert(ctx, doc); err != nil {
		return run, fmt.Errorf("writing the run document: %w", err)
	}
	return run, s.saveBackfill(ctx, tenant, run)
}

func (s *Service) saveBackfill(ctx context.Context, tenant string, run backfillRun) error {
	it, err := checkpoints.Item("keyword.reindex", tenant, run)
	if err != nil {
		return err
	}
	if err := s.st.Write(ctx, store.Put(it, store.Always)); err != nil {
		return fmt.Errorf("saving the checkpoint: %w", err)
	}
	return nil
}
