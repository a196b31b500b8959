// Package briefing holds briefing notes: structured hand-offs between
// sessions or orchestrators (who was there, what was said, what was
// decided), listed by topic and searchable by keyword.
package briefing

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Notes declares where briefing notes live. Keyword search (shared/keyword)
// reads hits back by its primary key and the backfill lists its GSI1.
var Notes = table.Declare(table.Schema[vp.BriefingNote]{
	Entity:  "briefing note",
	Primary: table.Key{PK: "BRIEF#{id}", SK: "BRIEF", Pattern: "briefing note by id"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "BRIEFS", SK: "{id}", Pattern: "briefing notes, newest first"},
		{Index: store.GSI2, PK: "BRIEFTOPIC#{topic}", SK: "{id}", Pattern: "briefing notes of a topic"},
		{Index: store.GSI3, PK: "BRIEFCHG", SK: "{changed}#{id}", Pattern: "briefing notes changed since",
			Note: "changed = max(createdAt,updatedAt), 13 digits; moved on every update"},
	},
	Fields: func(n vp.BriefingNote) table.Values {
		return table.Values{"id": n.ID, "topic": n.Topic, "changed": table.Millis(max(n.CreatedAt, n.UpdatedAt))}
	},
})

// Tables describes the briefing keys for shared/store/KEYS.md.
func Tables() []table.Doc { return []table.Doc{Notes.Doc()} }

// Kind is the search kind of briefing documents.
const Kind = "briefing"

// Doc is a note's keyword-search document: the title (weighted), content
// and decisions are text, the topic is a filter.
func Doc(tenant string, n vp.BriefingNote) search.Doc {
	text := n.Content
	if len(n.Decisions) > 0 {
		text += "\n" + strings.Join(n.Decisions, "\n")
	}
	return search.Doc{Tenant: search.KindPartition(tenant, Kind), ID: n.ID, Kind: Kind,
		Type: n.Topic, Owner: n.CreatedBy, Title: n.Title, Text: text, CreatedAt: n.CreatedAt}
}

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	// Search, when set, indexes every note written for keyword search.
	Search *search.Writer
}

// Service writes and reads briefing notes.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
	search  *search.Writer
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now), search: o.Search}
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// Input is a new briefing note.
type Input struct {
	Title           string
	Topic           string
	Participants    []string
	Content         string
	Decisions       []string
	LinkedMemoryIDs []string
	CreatedBy       string
}

// CreateBriefingNote stores a new note; createdBy defaults to the caller.
func (s *Service) CreateBriefingNote(ctx context.Context, p vp.Principal, in Input) (vp.BriefingNote, error) {
	const op = "create_briefing_note"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		return vp.BriefingNote{}, err
	}
	n := vp.BriefingNote{}
	if err := apply(op, &n, Update{Title: &in.Title, Topic: &in.Topic, Participants: orEmpty(in.Participants),
		Content: &in.Content, Decisions: in.Decisions, LinkedMemoryIDs: in.LinkedMemoryIDs}); err != nil {
		return vp.BriefingNote{}, err
	}
	who, err := p.ActAs(op, "createdBy", in.CreatedBy)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	now := s.nowMS()
	n.ID, n.CreationTime, n.CreatedAt, n.CreatedBy = s.ids.New("brf"), now, now, who
	it, err := Notes.Item(op, tenant, n)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	ix, err := s.search.Prepare(ctx, tenant, Kind, n.ID)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	if err := s.st.Write(ctx, append([]store.Op{store.Put(it, store.IfNotExists)}, ix.Ops()...)...); err != nil {
		return vp.BriefingNote{}, records.Err(op, err)
	}
	s.search.Done(ctx, op, ix, Doc(tenant, n))
	return n, nil
}

// Update is a partial update. Nil pointers and nil slices leave the field
// as it is; a non-nil empty slice clears decisions or linked memories.
type Update struct {
	NoteID             string
	CallerOrchestrator string
	Title              *string
	Topic              *string
	Participants       []string
	Content            *string
	Decisions          []string
	LinkedMemoryIDs    []string
}

// UpdateBriefingNote changes a note. Deny by default: the caller (who
// defaults to the principal) must be the note's creator or system.
func (s *Service) UpdateBriefingNote(ctx context.Context, p vp.Principal, u Update) (vp.BriefingNote, error) {
	const op = "update_briefing_note"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	if err := vp.CheckName(op, "noteId", u.NoteID, true); err != nil {
		return vp.BriefingNote{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", u.CallerOrchestrator, false); err != nil {
		return vp.BriefingNote{}, err
	}
	if u.Title == nil && u.Topic == nil && u.Participants == nil && u.Content == nil && u.Decisions == nil && u.LinkedMemoryIDs == nil {
		return vp.BriefingNote{}, vp.E(op, vp.KindInvalid, "", "nothing to update: pass at least one of title, topic, participants, content, decisions, linkedMemoryIds")
	}
	if err := apply(op, &vp.BriefingNote{}, u); err != nil { // validate before reading
		return vp.BriefingNote{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", u.CallerOrchestrator)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	k := Notes.KeyOf(tenant, table.Values{"id": u.NoteID})
	ix, err := s.search.Prepare(ctx, tenant, Kind, u.NoteID)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	n, _, err := Notes.Update(ctx, s.st, op, tenant, "noteId", u.NoteID, k, func(n *vp.BriefingNote, _ store.Item) ([]store.Op, error) {
		if who != n.CreatedBy && who != vp.SystemCaller {
			return nil, vp.Errorf(op, vp.KindForbidden, "callerOrchestrator",
				"only the note's creator (%q) or system may update it; %q may not — ask %q, or create your own note", n.CreatedBy, who, n.CreatedBy)
		}
		_ = apply(op, n, u) // validated above
		n.UpdatedAt, n.UpdatedBy = max(s.nowMS(), n.CreatedAt), who
		return ix.Ops(), nil
	})
	if vp.IsKind(err, vp.KindConflict) { // the retries ran out: say it as this tool always has
		return vp.BriefingNote{}, vp.E(op, vp.KindConflict, "noteId", "the note is being updated by others at the same time; retry")
	}
	if err != nil {
		return vp.BriefingNote{}, err
	}
	s.search.Done(ctx, op, ix, Doc(tenant, n))
	return n, nil
}

// Limits bound a briefing note's fields, declared once for
// create_briefing_note and update_briefing_note. Names and ids are bounded
// by vp.CheckName.
type Limits struct {
	Title, Topic, Participants, Content, Decisions, LinkedMemoryIDs vp.Limit
}

func noteLimits() Limits {
	return Limits{
		Title:           vp.MaxBytes("title", vp.MaxShortTextBytes),
		Topic:           vp.MaxBytes("topic", vp.MaxShortTextBytes),
		Participants:    vp.MaxItems("participants", vp.MaxBriefingListItems, vp.MaxNameBytes),
		Content:         vp.MaxBytes("content", vp.MaxBriefingContentBytes),
		Decisions:       vp.MaxItems("decisions", vp.MaxBriefingListItems, vp.MaxBriefingItemBytes),
		LinkedMemoryIDs: vp.MaxItems("linkedMemoryIds", vp.MaxBriefingListItems, 0),
	}
}

// Limits are create_briefing_note's limits.
func (Input) Limits() Limits { return noteLimits() }

// Limits are update_briefing_note's limits.
func (Update) Limits() Limits { return noteLimits() }

// apply validates u and applies it to n.
func apply(op string, n *vp.BriefingNote, u Update) error {
	lim := u.Limits()
	if u.Title != nil {
		if err := lim.Title.Text(op, *u.Title, true); err != nil {
			return err
		}
		n.Title = *u.Title
	}
	if u.Topic != nil {
		topic := strings.TrimSpace(*u.Topic)
		if err := lim.Topic.KeyText(op, topic, true); err != nil {
			return err
		}
		n.Topic = topic
	}
	if u.Participants != nil {
		if len(u.Participants) == 0 {
			return vp.E(op, vp.KindInvalid, "participants", "is required: list the orchestrator ids present, e.g. [\"pi\",\"sigma\"]")
		}
		ps, err := orchestratorList(op, lim.Participants.Field, u.Participants, lim.Participants.Items)
		if err != nil {
			return err
		}
		n.Participants = ps
	}
	if u.Content != nil {
		if err := lim.Content.Text(op, *u.Content, true); err != nil {
			return err
		}
		n.Content = *u.Content
	}
	if u.Decisions != nil {
		if err := lim.Decisions.List(op, u.Decisions); err != nil {
			return err
		}
		n.Decisions = u.Decisions
	}
	if u.LinkedMemoryIDs != nil {
		if l := lim.LinkedMemoryIDs; len(u.LinkedMemoryIDs) > l.Items {
			return vp.Errorf(op, vp.KindTooLarge, l.Field, "has %d entries; the limit is %d", len(u.LinkedMemoryIDs), l.Items)
		}
		for _, id := range u.LinkedMemoryIDs {
			if err := vp.CheckName(op, "linkedMemoryIds", id, true); err != nil {
				return err
			}
		}
		n.LinkedMemoryIDs = u.LinkedMemoryIDs
	}
	return nil
}

// GetBriefingNote returns one note of the tenant.
func (s *Service) GetBriefingNote(ctx context.Context, p vp.Principal, id string) (vp.BriefingNote, error) {
	const op = "get_briefing_note"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	if err := vp.CheckName(op, "noteId", id, true); err != nil {
		return vp.BriefingNote{}, err
	}
	n, _, err := Notes.Get(ctx, s.st, op, "noteId", id, Notes.KeyOf(tenant, table.Values{"id": id}))
	return n, err
}

// ListInput filters briefing notes.
type ListInput struct {
	Topic string
	// UpdatedSince (Unix ms) keeps notes created or updated at or after it.
	UpdatedSince *int64
	Params       listing.Params
}

// ListBriefingNotes lists notes newest first (by creation), optionally of
// one topic. With updatedSince and no topic they come most recently
// changed first.
func (s *Service) ListBriefingNotes(ctx context.Context, p vp.Principal, in ListInput) (listing.Page[any], error) {
	const op = "list_briefing_notes"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	topic := strings.TrimSpace(in.Topic)
	if err := vp.CheckKeyText(op, "topic", topic, vp.MaxShortTextBytes, false); err != nil {
		return listing.Page[any]{}, err
	}
	binding := op + "\x00" + topic
	q := Notes.Query(tenant, store.GSI1, nil)
	if topic != "" {
		q = Notes.Query(tenant, store.GSI2, table.Values{"topic": topic})
	}
	q.Reverse = true
	var since int64
	if in.UpdatedSince != nil {
		if since = *in.UpdatedSince; since < 0 {
			return listing.Page[any]{}, vp.E(op, vp.KindInvalid, "updatedSince", "must be a Unix time in milliseconds, not negative")
		}
		binding += "\x00" + strconv.FormatInt(since, 10)
		if topic == "" {
			q = Notes.Query(tenant, store.GSI3, nil)
			q.Reverse, q.SKFrom = true, table.Millis(since)
		}
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: binding, Params: in.Params, Query: q,
		LiteKeys: []string{"topic", "title", "participants", "createdBy"},
	}, func(it store.Item) (vp.BriefingNote, bool, error) {
		n, err := records.Decode[vp.BriefingNote](op, it)
		if err != nil {
			return n, false, err
		}
		return n, max(n.CreatedAt, n.UpdatedAt) >= since, nil
	})
}

// orchestratorList validates and normalises a list of orchestrator ids,
// dropping duplicates.
func orchestratorList(op, field string, ids []string, maxItems int) ([]string, error) {
	if len(ids) > maxItems {
		return nil, vp.Errorf(op, vp.KindTooLarge, field, "has %d entries; the limit is %d", len(ids), maxItems)
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if err := vp.CheckName(op, field, id, true); err != nil {
			return nil, err
		}
		n := vp.NormalizeOrchestrator(id)
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out, nil
}

func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
