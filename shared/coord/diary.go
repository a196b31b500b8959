package coord

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Diary keys. The table key is the unique key (orchestrator, date): a write
// for the same day addresses the same item, so upsert is a conditional put.
//
//	table  T#t#DIARY#<orch>  <date>          get_diary; one orchestrator's days, in date order
//	gsi1   T#t#DIARIES       <date>#<orch>   every orchestrator's days, in date order

func diaryKey(tenant, orch, date string) store.Key {
	return store.Key{PK: tp(tenant) + "DIARY#" + orch, SK: date}
}

func diariesIndex(tenant, date, orch string) store.Key {
	return store.Key{PK: tp(tenant) + "DIARIES", SK: date + "#" + orch}
}

// WriteDiaryInput is one day's entry.
type WriteDiaryInput struct {
	Date         string
	Orchestrator string
	InstanceID   string
	Content      string
	Highlights   []string
	Blockers     []string
}

// WriteDiaryResult reports an upsert.
type WriteDiaryResult struct {
	DiaryID      string `json:"diaryId"`
	Created      bool   `json:"created"`
	Date         string `json:"date"`
	Orchestrator string `json:"orchestrator"`
	UpdatedAt    int64  `json:"updatedAt"`
}

// maxUpsertAttempts bounds the optimistic-concurrency loop of an upsert
// that many writers may race on (write_diary on one day).
const maxUpsertAttempts = 40

// WriteDiary creates or overwrites the entry of (orchestrator, date). An
// overwrite replaces content, highlights and blockers and keeps _id and
// createdAt; concurrent writers never produce two entries for one day.
func (s *Service) WriteDiary(ctx context.Context, p vp.Principal, in WriteDiaryInput) (WriteDiaryResult, error) {
	const op = "write_diary"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return WriteDiaryResult{}, err
	}
	if err := checkDate(op, "date", in.Date, true); err != nil {
		return WriteDiaryResult{}, err
	}
	if err := vp.CheckName(op, "orchestrator", in.Orchestrator, false); err != nil {
		return WriteDiaryResult{}, err
	}
	if err := vp.CheckName(op, "instanceId", in.InstanceID, false); err != nil {
		return WriteDiaryResult{}, err
	}
	if err := vp.CheckText(op, "content", in.Content, vp.MaxDiaryContentBytes, true); err != nil {
		return WriteDiaryResult{}, err
	}
	if err := checkTextList(op, "highlights", in.Highlights, vp.MaxDiaryListItems, vp.MaxDiaryItemBytes); err != nil {
		return WriteDiaryResult{}, err
	}
	if err := checkTextList(op, "blockers", in.Blockers, vp.MaxDiaryListItems, vp.MaxDiaryItemBytes); err != nil {
		return WriteDiaryResult{}, err
	}
	orch, err := p.ActAs(op, "orchestrator", in.Orchestrator)
	if err != nil {
		return WriteDiaryResult{}, err
	}
	k := diaryKey(tenant, orch, in.Date)
	for attempt := 0; attempt < maxUpsertAttempts; attempt++ {
		if err := pause(ctx, attempt); err != nil {
			return WriteDiaryResult{}, vp.Wrap(op, vp.KindInternal, err)
		}
		now := s.nowMS()
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
			return WriteDiaryResult{}, storeErr(op, err)
		default:
			old, err := decode[vp.DiaryEntry](op, cur)
			if err != nil {
				return WriteDiaryResult{}, err
			}
			e.ID, e.CreationTime, e.CreatedAt = old.ID, old.CreationTime, old.CreatedAt
			cond = store.IfVersion(cur.Version)
		}
		it := store.Item{Key: k, Data: encode(op, e)}
		it.GSI[0] = diariesIndex(tenant, e.Date, orch)
		err = s.st.Write(ctx, store.Put(it, cond))
		if errors.Is(err, store.ErrConditionFailed) {
			continue // someone else wrote the day meanwhile: read again
		}
		if err != nil {
			return WriteDiaryResult{}, storeErr(op, err)
		}
		return WriteDiaryResult{DiaryID: e.ID, Created: cond == store.IfNotExists, Date: e.Date, Orchestrator: orch, UpdatedAt: now}, nil
	}
	return WriteDiaryResult{}, vp.E(op, vp.KindConflict, "date", "this day's entry is being written by others at the same time; retry")
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
	e, _, err := get[vp.DiaryEntry](ctx, s, op, "orchestrator", orch, diaryKey(tenant, orch, date))
	if vp.IsKind(err, vp.KindNotFound) {
		return e, vp.Errorf(op, vp.KindNotFound, "date", "%q has no diary entry for %s; write_diary creates it", orch, date)
	}
	return e, err
}

// ListDiariesInput selects diary entries. Orchestrator empty means every
// orchestrator of the tenant; From and To (YYYY-MM-DD, inclusive) bound the
// dates and may be empty.
type ListDiariesInput struct {
	Orchestrator string
	From, To     string
	Params       listing.Params
}

// ListDiaries lists entries newest date first (list_diaries).
func (s *Service) ListDiaries(ctx context.Context, p vp.Principal, in ListDiariesInput) (listing.Page[any], error) {
	return s.listDiaries(ctx, "list_diaries", p, in, false)
}

// ListDiaryByDateRange lists the entries of a date range, oldest first
// (list_diary_by_date_range); From and To are required.
func (s *Service) ListDiaryByDateRange(ctx context.Context, p vp.Principal, in ListDiariesInput) (listing.Page[any], error) {
	return s.listDiaries(ctx, "list_diary_by_date_range", p, in, true)
}

func (s *Service) listDiaries(ctx context.Context, op string, p vp.Principal, in ListDiariesInput, byRange bool) (listing.Page[any], error) {
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
	q := store.Query{Index: store.GSI1, PK: diariesIndex(tenant, "", "").PK, Reverse: !byRange, SKFrom: in.From}
	if in.To != "" {
		q.SKTo = in.To + "$" // '$' sorts after "#<orch>": the whole last day is in range
	}
	if orch != "" {
		q = store.Query{PK: diaryKey(tenant, orch, "").PK, Reverse: !byRange, SKFrom: in.From, SKTo: in.To}
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + orch + "\x00" + in.From + "\x00" + in.To, Params: in.Params, Query: q,
		LiteKeys: []string{"date", "orchestrator", "highlights"},
	}, func(it store.Item) (vp.DiaryEntry, bool, error) {
		e, err := decode[vp.DiaryEntry](op, it)
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

// checkTextList validates a list of short texts: at most maxItems entries,
// each non-empty and within maxBytes.
func checkTextList(op, field string, items []string, maxItems, maxBytes int) error {
	if len(items) > maxItems {
		return vp.Errorf(op, vp.KindTooLarge, field, "has %d entries; the limit is %d", len(items), maxItems)
	}
	for _, v := range items {
		if err := vp.CheckText(op, field, v, maxBytes, true); err != nil {
			return err
		}
	}
	return nil
}

// pause waits before retry attempt n of an optimistic write (none before
// the first), with jitter so that racing writers spread out.
func pause(ctx context.Context, attempt int) error {
	if attempt == 0 {
		return nil
	}
	d := time.Duration(rand.IntN(min(attempt, 10)*2+1)) * time.Millisecond
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}
