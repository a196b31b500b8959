package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/uimarker"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createBriefingIn struct {
	Title           string   `json:"title"`
	Topic           string   `json:"topic" jsonschema:"category key, e.g. sprint-review, standup"`
	Participants    []string `json:"participants" jsonschema:"orchestrator ids"`
	Content         string   `json:"content"`
	Decisions       []string `json:"decisions,omitempty"`
	LinkedMemoryIDs []string `json:"linkedMemoryIds,omitempty"`
	CreatedBy       string   `json:"createdBy,omitempty"`
}

type updateBriefingIn struct {
	NoteID             string   `json:"noteId"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty"`
	Title              *string  `json:"title,omitempty"`
	Topic              *string  `json:"topic,omitempty"`
	Participants       []string `json:"participants,omitempty" jsonschema:"not empty"`
	Content            *string  `json:"content,omitempty"`
	Decisions          []string `json:"decisions,omitempty" jsonschema:"[] clears"`
	LinkedMemoryIDs    []string `json:"linkedMemoryIds,omitempty" jsonschema:"[] clears"`
}

type noteIDIn struct {
	NoteID string `json:"noteId"`
}

type listBriefingsIn struct {
	listing.Params
	Topic        string `json:"topic,omitempty"`
	UpdatedSince *int64 `json:"updatedSince,omitempty" jsonschema:"Unix ms; then last changed first"`
}

// BriefingTools are the tools of the briefing notes over c; none when c is nil.
func BriefingTools(c *briefing.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addBriefingTools(m, c) }}
}

func (s *server) addBriefingTools(m *mcp.Server, c *briefing.Service) {
	add(s, m, tool{Name: "create_briefing_note", Title: "Create briefing note", Annotations: write,
		Limits:      briefing.Input{}.Limits(),
		Description: "Record a briefing or hand-off (who, what was said, decisions) as a session ends. Example: {\"title\":\"Friday hand-off\",\"topic\":\"sprint-review\",\"participants\":[\"alice\"],\"content\":\"Search shipped.\"}"},
		func(ctx context.Context, p vp.Principal, in createBriefingIn) (vp.BriefingNote, error) {
			return c.CreateBriefingNote(ctx, p, briefing.Input{Title: in.Title, Topic: in.Topic, Participants: in.Participants,
				Content: in.Content, Decisions: in.Decisions, LinkedMemoryIDs: in.LinkedMemoryIDs, CreatedBy: in.CreatedBy})
		})

	add(s, m, tool{Name: "update_briefing_note", Title: "Update briefing note", Annotations: idempotent,
		Limits:      briefing.Update{}.Limits(),
		Description: "Change a briefing note (creator or system); omitted fields kept, given lists replaced. Example: {\"noteId\":\"brf_01jd...\",\"decisions\":[\"ship M4\"]}"},
		func(ctx context.Context, p vp.Principal, in updateBriefingIn) (vp.BriefingNote, error) {
			return c.UpdateBriefingNote(ctx, p, briefing.Update{NoteID: in.NoteID, CallerOrchestrator: in.CallerOrchestrator,
				Title: in.Title, Topic: in.Topic, Participants: in.Participants, Content: in.Content, Decisions: in.Decisions,
				LinkedMemoryIDs: in.LinkedMemoryIDs})
		})

	add(s, m, tool{Name: "get_briefing_note", Title: "Get briefing note", Marker: markBriefing, UI: uimarker.KindBriefingNote, Annotations: readOnly,
		Description: "Read a briefing note. Example: {\"noteId\":\"brf_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in noteIDIn) (vp.BriefingNote, error) {
			return c.GetBriefingNote(ctx, p, in.NoteID)
		})

	add(s, m, tool{Name: "list_briefing_notes", Title: "List briefing notes", Annotations: readOnly,
		Description: "List briefing notes, newest first; read the latest before claiming anything about the team's state. Example: {\"topic\":\"sprint-review\"}"},
		func(ctx context.Context, p vp.Principal, in listBriefingsIn) (listing.Page[any], error) {
			return c.ListBriefingNotes(ctx, p, briefing.ListInput{Topic: in.Topic, UpdatedSince: in.UpdatedSince, Params: in.Params})
		})
}
