// Package diary holds the orchestrators' daily journals: one entry per
// orchestrator and date, written with write_diary and read by everyone in
// the tenant.
package diary

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// entries declares where diary entries live. The table key is the unique
// key (orchestrator, date): a write for the same day addresses the same
// item, so upsert is a conditional put.
var entries = table.Declare(table.Schema[vp.DiaryEntry]{
	Entity: "diary entry",
	Primary: table.Key{PK: "DIARY#{orch}", SK: "{date}",
		Pattern: "diary entry by (orchestrator, date); an orchestrator's days", Note: "date = YYYY-MM-DD; unique key: write_diary is a conditional put"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "DIARIES", SK: "{date}#{orch}", Pattern: "every orchestrator's diary days in date order"},
	},
	Fields: func(e vp.DiaryEntry) table.Values { return table.Values{"orch": e.Orchestrator, "date": e.Date} },
})

// Tables describes the diary's keys for shared/store/KEYS.md.
func Tables() []table.Doc { return []table.Doc{entries.Doc()} }

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
}

// Service writes and reads diary entries.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now)}
}

// WriteInput is one day's entry.
type WriteInput struct {
	Date         string
	Orchestrator string
	InstanceID   string
	Content      string
	Highlights   []string
	Blockers     []string
}

// WriteLimits bound write_diary's texts; names are bounded by vp.CheckName.
type WriteLimits struct{ Content, Highlights, Blockers vp.Limit }

// Limits are write_diary's limits.
func (WriteInput) Limits() WriteLimits {
	return WriteLimits{
		Content:    vp.MaxBytes("content", vp.MaxDiaryContentBytes),
		Highlights: vp.MaxItems("highlights", vp.MaxDiaryListItems, vp.MaxDiaryItemBytes),
		Blockers:   vp.MaxItems("blockers", vp.MaxDiaryListItems, vp.MaxDiaryItemBytes),
	}
}

// WriteResult reports an upsert.
type WriteResult struct {
	DiaryID      string `json:"diaryId"`
	Created      bool   `json:"created"`
	Date         string `json:"date"`
	Orchestrator string `json:"orchestrator"`
	UpdatedAt    int64  `json:"updatedAt"`
}

// maxUpsertAttempts bounds the optimistic-concurrency loop of an upsert
// that many writers may race on (write_diary on one day): the first write
// is a create (IfNotExists), not an update, and fifty writers on one day
// must all succeed, which takes more attempts than an update allows and a
// jittered pause between them (table.Conflicts' Max and Pause).
const maxUpsertAttempts = 40

// WriteDiary creates or overwrites the entry of (orchestrator, date). An
// overwrite replaces content, highlights and blockers and keeps _id and
// createdAt; concurrent writers never produce two entries for one day.
func (s *Service) WriteDiary(ctx context.Context, p vp.Principal, in WriteInput) (WriteResult, error) {
	const op = "write_diary"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return WriteResult{}, err
	}
	if err := checkDate(op, "date", in.Date, true); err != nil {
		return WriteResult{}, err
	}
	if err := vp.CheckName(op, "orchestrator", in.Orchestrator, false); err != nil {
		return WriteResult{}, err
	}
	if err := vp.CheckName(op, "instanceId", in.InstanceID, false); err != nil {
		return WriteResult{}, err
	}
	lim := in.Limits()
	if err := lim.Content.Text(op, in.Content, true); err != nil {
		return WriteResult{}, err
	}
	if err := lim.Highlights.List(op, in.Highlights); err != nil {
		return WriteResult{}, err
	}
	if err := lim.Blockers.List(op, in.Blockers); err != nil {
		return WriteResult{}, err
	}
	orch, err := p.ActAs(op, "orchestrator", in.Orchestrator)
	if err != nil {
		return WriteResult{}, err
	}
	k := entries.KeyOf(tenant, table.Values{"orch": orch, "date": in.Date})
	var res WriteResult
	err = table.Conflicts{Op: op, Max: maxUpsertAttempts,
		Pause: func(ctx context.Context, attempt int) error {
			return vp.Wrap(op, vp.KindInternal, pause(ctx, attempt))
		},
		Exhausted: func() error {
			return vp.E(op, vp.KindConflict, "date", "this day's entry is being written by others at the same time; retry")
		},
	}.Retry(ctx, func() error {
		now := s.now().UnixMilli()
		e := vp.DiaryEntry{
			Date: in.Date, Orchestrator: orch, InstanceID: in.InstanceID, Content: in.Content,
			Highlights: in.Highlights, Blockers: in.Blockers, UpdatedAt: now,
		}
		cond := store.IfNotExists
		cur, err := s.st.Get(ctx, k)
		switch {
		case errors.Is(err, store.ErrNotFound):
			e.ID, e.CreationTime, e.CreatedAt = s.ids.New("dia"), now, now
		case err != nil:
			return records.Err(op, err)
		default:
			old, err := records.Decode[vp.DiaryEntry](op, cur)
			if err != nil {
				return err
			}
			e.ID, e.CreationTime, e.CreatedAt = old.ID, old.CreationTime, old.CreatedAt
			cond = store.IfVersion(cur.Version)
		}
		it, err := entries.Item(op, tenant, e)
		if err != nil {
			return err
		}
		// A lost write (someone else wrote the day meanwhile) stays a
		// condition failure: the next attempt reads again.
		if err := records.Err(op, s.st.Write(ctx, store.Put(it, cond))); err != nil {
			return err
		}
		res = WriteResult{DiaryID: e.ID, Created: cond == store.IfNotExists, Date: e.Date, Orchestrator: orch, UpdatedAt: now}
		return nil
	})
	if err != nil {
		return WriteResult{}, err
	}
	return res, nil
}

// GetDiary returns the entry of (orchestrator, date); the orchestrator
// defaults to the caller. Everyone in the tenant may read every diary.
func (s *Service) GetDiary(ctx context.Context, p vp.Principal, orchArg, date string) (vp.DiaryEntry, error) {
	const op = "get_diary"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.DiaryEntry{}, err
	}
	if err := checkDate(op, "date", date, true); err != nil {
		return vp.DiaryEntry{}, err
	}
	orch, err := readerOrchestrator(op, "orchestrator", p, orchArg)
	if err != nil {
		return vp.DiaryEntry{}, err
	}
	e, _, err := entries.Get(ctx, s.st, op, "orchestrator", orch, entries.KeyOf(tenant, table.Values{"orch": orch, "date": date}))
	if vp.IsKind(err, vp.KindNotFound) {
		return e, s.missingEntry(ctx, op, tenant, orch, date)
	}
	return e, err
}

// missingEntry words a get_diary miss: an orchestrator with no diary at
// all is the argument at fault (often a typo), not the date.
func (s *Service) missingEntry(ctx context.Context, op, tenant, orch, date string) error {
	q := entries.Query(tenant, store.Primary, table.Values{"orch": orch})
	q.Limit = 1
	items, err := s.st.Query(ctx, q)
	if err != nil {
		return vp.Wrap(op, vp.KindOf(err), err)
	}
	if len(items) == 0 {
		return vp.Errorf(op, vp.KindNotFound, "orchestrator", "%q has no diary entries at all; check the orchestrator id (list_peers), or write_diary creates one", orch)
	}
	return vp.Errorf(op, vp.KindNotFound, "date", "%q has no diary entry for %s; write_diary creates it (list_diaries shows the days it has)", orch, date)
}

// ListInput selects diary entries. Orchestrator empty means every
// orchestrator of the tenant; From and To (YYYY-MM-DD, inclusive) bound the
// dates and may be empty.
type ListInput struct {
	Orchestrator string
	From, To     string
	Params       listing.Params
}

// ListDiaries lists entries newest date first (list_diaries).
func (s *Service) ListDiaries(ctx context.Context, p vp.Principal, in ListInput) (listing.Page[any], error) {
	return s.listDiaries(ctx, "list_diaries", p, in, false)
}

// ListDiaryByDateRange lists the entries of a date range, oldest first
// (list_diary_by_date_range); From and To are required.
func (s *Service) ListDiaryByDateRange(ctx context.Context, p vp.Principal, in ListInput) (listing.Page[any], error) {
	return s.listDiaries(ctx, "list_diary_by_date_range", p, in, true)
}

func (s *Service) listDiaries(ctx context.Context, op string, p vp.Principal, in ListInput, byRange bool) (listing.Page[any], error) {
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckName(op, "orchestrator", in.Orchestrator, false); err != nil {
		return listing.Page[any]{}, err
	}
	if err := checkDate(op, "from", in.From, byRange); err != nil {
		return listing.Page[any]{}, err
	}
	if err := checkDate(op, "to", in.To, byRange); err != nil {
		return listing.Page[any]{}, err
	}
	if in.From != "" && in.To != "" && in.From > in.To {
		return listing.Page[any]{}, vp.Errorf(op, vp.KindInvalid, "from", "%s is after to (%s): from must be on or before to", in.From, in.To)
	}
	orch := vp.NormalizeOrchestrator(in.Orchestrator)
	q := entries.Query(tenant, store.GSI1, nil)
	q.Reverse, q.SKFrom = !byRange, in.From
	if in.To != "" {
		q.SKTo = in.To + "$" // '$' sorts after "#<orch>": the whole last day is in range
	}
	if orch != "" {
		q = entries.Query(tenant, store.Primary, table.Values{"orch": orch})
		q.Reverse, q.SKFrom, q.SKTo = !byRange, in.From, in.To
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + orch + "\x00" + in.From + "\x00" + in.To, Params: in.Params, Query: q,
		LiteKeys: []string{"date", "orchestrator", "highlights"},
	}, func(it store.Item) (vp.DiaryEntry, bool, error) {
		e, err := records.Decode[vp.DiaryEntry](op, it)
		return e, err == nil, err
	})
}

// checkDate validates a YYYY-MM-DD calendar date (2026-02-30 is refused).
func checkDate(op, field, v string, required bool) error {
	if v == "" {
		if required {
			return vp.Errorf(op, vp.KindInvalid, field, "is required: a date in the form YYYY-MM-DD, e.g. %q", "2026-05-29")
		}
		return nil
	}
	t, err := time.Parse(vp.DiaryDateLayout, v)
	if err != nil || t.Format(vp.DiaryDateLayout) != v {
		if len(v) > 32 {
			v = v[:32] + "…"
		}
		return vp.Errorf(op, vp.KindInvalid, field, "%q is not a calendar date in the form YYYY-MM-DD (e.g. 2026-05-29)", v)
	}
	return nil
}

// readerOrchestrator resolves an orchestrator a read is about: the argument
// (anyone in the tenant may read) or, when empty, the caller's identity.
func readerOrchestrator(op, field string, p vp.Principal, arg string) (string, error) {
	if err := vp.CheckName(op, field, arg, false); err != nil {
		return "", err
	}
	if o := vp.NormalizeOrchestrator(arg); o != "" {
		return o, nil
	}
	return p.ActAs(op, field, "")
}

// pause waits before retry attempt n (from 1) of an optimistic write,
// with jitter so that racing writers spread out.
func pause(ctx context.Context, attempt int) error {
	d := time.Duration(rand.IntN(min(attempt, 10)*2+1)) * time.Millisecond
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
