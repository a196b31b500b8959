package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/uimarker"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type writeDiaryIn struct {
	Date         string   `json:"date" jsonschema:"YYYY-MM-DD"`
	Orchestrator string   `json:"orchestrator,omitempty"`
	InstanceID   string   `json:"instanceId,omitempty"`
	Content      string   `json:"content"`
	Highlights   []string `json:"highlights,omitempty"`
	Blockers     []string `json:"blockers,omitempty"`
}

type getDiaryIn struct {
	Orchestrator string `json:"orchestrator,omitempty"`
	Date         string `json:"date" jsonschema:"YYYY-MM-DD"`
}

type listDiariesIn struct {
	listing.Params
	Orchestrator string `json:"orchestrator,omitempty" jsonschema:"omit for everyone"`
	From         string `json:"from,omitempty" jsonschema:"YYYY-MM-DD, inclusive"`
	To           string `json:"to,omitempty" jsonschema:"YYYY-MM-DD, inclusive"`
}

type listDiaryRangeIn struct {
	listing.Params
	From         string `json:"from" jsonschema:"YYYY-MM-DD, inclusive"`
	To           string `json:"to" jsonschema:"YYYY-MM-DD, inclusive"`
	Orchestrator string `json:"orchestrator,omitempty" jsonschema:"omit for everyone"`
}

// DiaryTools are the tools of the diaries over c; none when c is nil.
func DiaryTools(c *diary.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addDiaryTools(m, c) }}
}

func (s *server) addDiaryTools(m *mcp.Server, c *diary.Service) {
	add(s, m, tool{Name: "write_diary", Title: "Write diary", Core: true, Annotations: idempotent,
		Limits:      diary.WriteInput{}.Limits(),
		Description: "Write your diary entry for a day as a session ends; writing it again replaces it. Example: {\"date\":\"2026-05-29\",\"content\":\"Shipped M3.\"}"},
		func(ctx context.Context, p vp.Principal, in writeDiaryIn) (diary.WriteResult, error) {
			return c.WriteDiary(ctx, p, diary.WriteInput{Date: in.Date, Orchestrator: in.Orchestrator, InstanceID: in.InstanceID,
				Content: in.Content, Highlights: in.Highlights, Blockers: in.Blockers})
		})

	add(s, m, tool{Name: "get_diary", Title: "Get diary", Marker: markDiary, UI: uimarker.KindDiaryEntry, Annotations: readOnly,
		Description: "Read an orchestrator's diary entry for a date. Example: {\"orchestrator\":\"alice\",\"date\":\"2026-05-29\"}"},
		func(ctx context.Context, p vp.Principal, in getDiaryIn) (vp.DiaryEntry, error) {
			return c.GetDiary(ctx, p, in.Orchestrator, in.Date)
		})

	add(s, m, tool{Name: "list_diaries", Title: "List diaries", Annotations: readOnly,
		Description: "List diary entries, newest date first. Example: {\"orchestrator\":\"alice\",\"limit\":7}"},
		func(ctx context.Context, p vp.Principal, in listDiariesIn) (listing.Page[any], error) {
			return c.ListDiaries(ctx, p, diary.ListInput{Orchestrator: in.Orchestrator, From: in.From, To: in.To, Params: in.Params})
		})

	add(s, m, tool{Name: "list_diary_by_date_range", Title: "Diaries by date range", Annotations: readOnly,
		Description: "List diary entries from..to, oldest first, e.g. for a weekly review. Example: {\"from\":\"2026-05-20\",\"to\":\"2026-05-29\"}"},
		func(ctx context.Context, p vp.Principal, in listDiaryRangeIn) (listing.Page[any], error) {
			return c.ListDiaryByDateRange(ctx, p, diary.ListInput{Orchestrator: in.Orchestrator, From: in.From, To: in.To, Params: in.Params})
		})
}
