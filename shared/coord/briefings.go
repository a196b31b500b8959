package coord

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Briefing note keys.
//
//	table  T#t#BRIEF#<id>          BRIEF                  the note
//	gsi1   T#t#BRIEFS              <id>                   every note, newest first
//	gsi2   T#t#BRIEFTOPIC#<topic>  <id>                   notes of a topic, newest first
//	gsi3   T#t#BRIEFCHG            <changed 13>#<id>      notes by last change (updatedSince)

func briefingKey(tenant, id string) store.Key {
	return store.Key{PK: tp(tenant) + "BRIEF#" + id, SK: "BRIEF"}
}

func briefingsPK(tenant string) string { return tp(tenant) + "BRIEFS" }

func briefingTopicPK(tenant, topic string) string { return tp(tenant) + "BRIEFTOPIC#" + topic }

func briefingChangedPK(tenant string) string { return tp(tenant) + "BRIEFCHG" }

func briefingItem(op, tenant string, n vp.BriefingNote) store.Item {
	changed := n.CreatedAt
	if n.UpdatedAt > changed {
		changed = n.UpdatedAt
	}
	it := store.Item{Key: briefingKey(tenant, n.ID), Data: encode(op, n)}
	it.GSI[0] = store.Key{PK: briefingsPK(tenant), SK: n.ID}
	it.GSI[1] = store.Key{PK: briefingTopicPK(tenant, n.Topic), SK: n.ID}
	it.GSI[2] = store.Key{PK: briefingChangedPK(tenant), SK: ms13(changed) + "#" + n.ID}
	return it
}

// BriefingInput is a new briefing note.
type BriefingInput struct {
	Title           string
	Topic           string
	Participants    []string
	Content         string
	Decisions       []string
	LinkedMemoryIDs []string
	CreatedBy       string
}

// CreateBriefingNote stores a new note; createdBy defaults to the caller.
func (s *Service) CreateBriefingNote(ctx context.Context, p vp.Principal, in BriefingInput) (vp.BriefingNote, error) {
	const op = "create_briefing_note"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		return vp.BriefingNote{}, err
	}
	n := vp.BriefingNote{}
	if err := applyBriefing(op, &n, BriefingUpdate{Title: &in.Title, Topic: &in.Topic, Participants: orEmpty(in.Participants),
		Content: &in.Content, Decisions: in.Decisions, LinkedMemoryIDs: in.LinkedMemoryIDs}); err != nil {
		return vp.BriefingNote{}, err
	}
	who, err := p.ActAs(op, "createdBy", in.CreatedBy)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	now := s.nowMS()
	n.ID, n.CreationTime, n.CreatedAt, n.CreatedBy = s.ids.New("brf"), now, now, who
	if err := s.st.Write(ctx, store.Put(briefingItem(op, tenant, n), store.IfNotExists)); err != nil {
		return vp.BriefingNote{}, storeErr(op, err)
	}
	s.index(ctx, op, briefingDoc(tenant, n))
	return n, nil
}

// BriefingUpdate is a partial update. Nil pointers and nil slices leave the
// field as it is; a non-nil empty slice clears decisions or linked memories.
type BriefingUpdate struct {
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
func (s *Service) UpdateBriefingNote(ctx context.Context, p vp.Principal, u BriefingUpdate) (vp.BriefingNote, error) {
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
	if err := applyBriefing(op, &vp.BriefingNote{}, u); err != nil { // validate before reading
		return vp.BriefingNote{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", u.CallerOrchestrator)
	if err != nil {
		return vp.BriefingNote{}, err
	}
	for attempt := 0; attempt < 8; attempt++ {
		if err := pause(ctx, attempt); err != nil {
			return vp.BriefingNote{}, vp.Wrap(op, vp.KindInternal, err)
		}
		n, cur, err := get[vp.BriefingNote](ctx, s, op, "noteId", u.NoteID, briefingKey(tenant, u.NoteID))
		if err != nil {
			return vp.BriefingNote{}, err
		}
		if who != n.CreatedBy && who != vp.SystemCaller {
			return vp.BriefingNote{}, vp.Errorf(op, vp.KindForbidden, "callerOrchestrator",
				"only the note's creator (%q) or system may update it; %q may not — ask %q, or create your own note", n.CreatedBy, who, n.CreatedBy)
		}
		_ = applyBriefing(op, &n, u) // validated above
		n.UpdatedAt, n.UpdatedBy = max(s.nowMS(), n.CreatedAt), who
		err = s.st.Write(ctx, store.Put(briefingItem(op, tenant, n), store.IfVersion(cur.Version)))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return vp.BriefingNote{}, storeErr(op, err)
		}
		s.index(ctx, op, briefingDoc(tenant, n))
		return n, nil
	}
	return vp.BriefingNote{}, vp.E(op, vp.KindConflict, "noteId", "the note is being updated by others at the same time; retry")
}

// applyBriefing validates u and applies it to n.
func applyBriefing(op string, n *vp.BriefingNote, u BriefingUpdate) error {
	if u.Title != nil {
		if err := vp.CheckText(op, "title", *u.Title, vp.MaxShortTextBytes, true); err != nil {
			return err
		}
		n.Title = *u.Title
	}
	if u.Topic != nil {
		topic := strings.TrimSpace(*u.Topic)
		if err := checkKeyText(op, "topic", topic, vp.MaxShortTextBytes, true); err != nil {
			return err
		}
		n.Topic = topic
	}
	if u.Participants != nil {
		if len(u.Participants) == 0 {
			return vp.E(op, vp.KindInvalid, "participants", "is required: list the orchestrator ids present, e.g. [\"pi\",\"sigma\"]")
		}
		ps, err := orchestratorList(op, "participants", u.Participants, vp.MaxBriefingListItems)
		if err != nil {
			return err
		}
		n.Participants = ps
	}
	if u.Content != nil {
		if err := vp.CheckText(op, "content", *u.Content, vp.MaxBriefingContentBytes, true); err != nil {
			return err
		}
		n.Content = *u.Content
	}
	if u.Decisions != nil {
		if err := checkTextList(op, "decisions", u.Decisions, vp.MaxBriefingListItems, vp.MaxBriefingItemBytes); err != nil {
			return err
		}
		n.Decisions = u.Decisions
	}
	if u.LinkedMemoryIDs != nil {
		if len(u.LinkedMemoryIDs) > vp.MaxBriefingListItems {
			return vp.Errorf(op, vp.KindTooLarge, "linkedMemoryIds", "has %d entries; the limit is %d", len(u.LinkedMemoryIDs), vp.MaxBriefingListItems)
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
	n, _, err := get[vp.BriefingNote](ctx, s, op, "noteId", id, briefingKey(tenant, id))
	return n, err
}

// ListBriefingsInput filters briefing notes.
type ListBriefingsInput struct {
	Topic string
	// UpdatedSince (Unix ms) keeps notes created or updated at or after it.
	UpdatedSince *int64
	Params       listing.Params
}

// ListBriefingNotes lists notes newest first (by creation), optionally of
// one topic. With updatedSince and no topic they come most recently
// changed first.
func (s *Service) ListBriefingNotes(ctx context.Context, p vp.Principal, in ListBriefingsInput) (listing.Page[any], error) {
	const op = "list_briefing_notes"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	topic := strings.TrimSpace(in.Topic)
	if err := checkKeyText(op, "topic", topic, vp.MaxShortTextBytes, false); err != nil {
		return listing.Page[any]{}, err
	}
	binding := op + "\x00" + topic
	q := store.Query{Index: store.GSI1, PK: briefingsPK(tenant), Reverse: true}
	if topic != "" {
		q.Index, q.PK = store.GSI2, briefingTopicPK(tenant, topic)
	}
	var since int64
	if in.UpdatedSince != nil {
		if since = *in.UpdatedSince; since < 0 {
			return listing.Page[any]{}, vp.E(op, vp.KindInvalid, "updatedSince", "must be a Unix time in milliseconds, not negative")
		}
		binding += "\x00" + itoa64(since)
		if topic == "" {
			q.Index, q.PK, q.SKFrom = store.GSI3, briefingChangedPK(tenant), ms13(since)
		}
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: binding, Params: in.Params, Query: q,
		LiteKeys: []string{"topic", "title", "participants", "createdBy"},
	}, func(it store.Item) (vp.BriefingNote, bool, error) {
		n, err := decode[vp.BriefingNote](op, it)
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

// checkKeyText validates text that becomes part of a store key: CheckText
// plus no control characters.
func checkKeyText(op, field, v string, max int, required bool) error {
	if err := vp.CheckText(op, field, v, max, required); err != nil {
		return err
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return vp.Errorf(op, vp.KindInvalid, field, "%q may not contain control characters", v)
		}
	}
	return nil
}

func orEmpty(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
