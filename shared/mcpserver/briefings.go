package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createBriefingIn struct {
	Title           string   `json:"title" jsonschema:"what the briefing is about"`
	Topic           string   `json:"topic" jsonschema:"category key used to find it again, e.g. sprint-review, vp-release, standup"`
	Participants    []string `json:"participants" jsonschema:"orchestrator ids present, e.g. [\"pi\",\"sigma\"]"`
	Content         string   `json:"content" jsonschema:"the briefing itself, at most 64 KiB"`
	Decisions       []string `json:"decisions,omitempty" jsonschema:"decisions taken"`
	LinkedMemoryIDs []string `json:"linkedMemoryIds,omitempty" jsonschema:"ids of related memories"`
	CreatedBy       string   `json:"createdBy,omitempty" jsonschema:"author; defaults to you"`
}

type updateBriefingIn struct {
	NoteID             string   `json:"noteId" jsonschema:"the note to change"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty" jsonschema:"who is updating; must be the note's creator or system; defaults to you"`
	Title              *string  `json:"title,omitempty" jsonschema:"new title"`
	Topic              *string  `json:"topic,omitempty" jsonschema:"new topic"`
	Participants       []string `json:"participants,omitempty" jsonschema:"replaces the participants (not empty)"`
	Content            *string  `json:"content,omitempty" jsonschema:"replaces the content"`
	Decisions          []string `json:"decisions,omitempty" jsonschema:"replaces the decisions; [] clears them"`
	LinkedMemoryIDs    []string `json:"linkedMemoryIds,omitempty" jsonschema:"replaces the linked memories; [] clears them"`
}

type noteIDIn struct {
	NoteID string `json:"noteId" jsonschema:"the _id create_briefing_note returned"`
}

type listBriefingsIn struct {
	listing.Params
	Topic        string `json:"topic,omitempty" jsonschema:"only notes of this topic"`
	UpdatedSince *int64 `json:"updatedSince,omitempty" jsonschema:"Unix ms: only notes created or updated at or after it (most recently changed first)"`
}

func (s *server) addBriefingTools(m *mcp.Server) {
	c := s.opts.Briefings
	add(s, m, tool{Name: "create_briefing_note", Annotations: write,
		Limits: limits{
			"title": maxLen(vp.MaxShortTextBytes), "topic": maxLen(vp.MaxShortTextBytes),
			"content": maxLen(vp.MaxBriefingContentBytes), "participants": maxItems(vp.MaxBriefingListItems),
			"participants[]": maxLen(vp.MaxNameBytes), "decisions": maxItems(vp.MaxBriefingListItems),
			"decisions[]": maxLen(vp.MaxBriefingItemBytes), "linkedMemoryIds": maxItems(vp.MaxBriefingListItems),
		},
		Description: "Record a briefing or hand-off: who was there, what was said, what was decided. Write one at the end of a session so the " +
			"next session (yours or a peer's) starts from it. Example: {\"title\":\"Day 82 close\",\"topic\":\"sprint-review\"," +
			"\"participants\":[\"pi\",\"sigma\"],\"content\":\"M3 done.\",\"decisions\":[\"ship M4 Monday\"]}"},
		func(ctx context.Context, p vp.Principal, in createBriefingIn) (vp.BriefingNote, error) {
			return c.CreateBriefingNote(ctx, p, briefing.Input{Title: in.Title, Topic: in.Topic, Participants: in.Participants,
				Content: in.Content, Decisions: in.Decisions, LinkedMemoryIDs: in.LinkedMemoryIDs, CreatedBy: in.CreatedBy})
		})

	add(s, m, tool{Name: "update_briefing_note", Annotations: idempotent,
		Limits: limits{
			"title": maxLen(vp.MaxShortTextBytes), "topic": maxLen(vp.MaxShortTextBytes),
			"content": maxLen(vp.MaxBriefingContentBytes), "participants": maxItems(vp.MaxBriefingListItems),
			"participants[]": maxLen(vp.MaxNameBytes), "decisions": maxItems(vp.MaxBriefingListItems),
			"decisions[]": maxLen(vp.MaxBriefingItemBytes), "linkedMemoryIds": maxItems(vp.MaxBriefingListItems),
		},
		Description: "Change fields of a briefing note you created (creator or system only); omitted fields keep their value. " +
			"Example: {\"noteId\":\"brf_01jd...\",\"decisions\":[\"ship M4 Tuesday\"]}"},
		func(ctx context.Context, p vp.Principal, in updateBriefingIn) (vp.BriefingNote, error) {
			return c.UpdateBriefingNote(ctx, p, briefing.Update{NoteID: in.NoteID, CallerOrchestrator: in.CallerOrchestrator,
				Title: in.Title, Topic: in.Topic, Participants: in.Participants, Content: in.Content, Decisions: in.Decisions,
				LinkedMemoryIDs: in.LinkedMemoryIDs})
		})

	add(s, m, tool{Name: "get_briefing_note", Annotations: readOnly,
		Description: "Read one briefing note with all its fields. Example: {\"noteId\":\"brf_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in noteIDIn) (vp.BriefingNote, error) {
			return c.GetBriefingNote(ctx, p, in.NoteID)
		})

	add(s, m, tool{Name: "list_briefing_notes", Annotations: readOnly,
		Description: "Browse briefing notes, newest first, optionally of one topic or changed since a time; read the latest before claiming " +
			"anything about the team's state. Paginated: {items, nextCursor?}. Example: {\"topic\":\"sprint-review\",\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listBriefingsIn) (listing.Page[any], error) {
			return c.ListBriefingNotes(ctx, p, briefing.ListInput{Topic: in.Topic, UpdatedSince: in.UpdatedSince, Params: in.Params})
		})
}
