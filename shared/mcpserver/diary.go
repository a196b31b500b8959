package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type writeDiaryIn struct {
	Date         string   `json:"date" jsonschema:"the day, YYYY-MM-DD, e.g. 2026-05-29"`
	Orchestrator string   `json:"orchestrator,omitempty" jsonschema:"whose diary; defaults to you"`
	InstanceID   string   `json:"instanceId,omitempty" jsonschema:"the instance writing, e.g. sigma-vps-01"`
	Content      string   `json:"content" jsonschema:"the day's narrative, at most 64 KiB"`
	Highlights   []string `json:"highlights,omitempty" jsonschema:"key events of the day (at most 100)"`
	Blockers     []string `json:"blockers,omitempty" jsonschema:"what is blocking (at most 100)"`
}

type getDiaryIn struct {
	Orchestrator string `json:"orchestrator,omitempty" jsonschema:"whose diary; defaults to you"`
	Date         string `json:"date" jsonschema:"the day, YYYY-MM-DD"`
}

type listDiariesIn struct {
	listing.Params
	Orchestrator string `json:"orchestrator,omitempty" jsonschema:"only this orchestrator's entries; omit for everyone's"`
	From         string `json:"from,omitempty" jsonschema:"first day, YYYY-MM-DD, inclusive"`
	To           string `json:"to,omitempty" jsonschema:"last day, YYYY-MM-DD, inclusive"`
}

type listDiaryRangeIn struct {
	listing.Params
	From         string `json:"from" jsonschema:"first day, YYYY-MM-DD, inclusive"`
	To           string `json:"to" jsonschema:"last day, YYYY-MM-DD, inclusive"`
	Orchestrator string `json:"orchestrator,omitempty" jsonschema:"only this orchestrator's entries; omit for everyone's"`
}

func (s *server) addDiaryTools(m *mcp.Server) {
	c := s.opts.Diary
	add(s, m, tool{Name: "write_diary", Core: true, Annotations: idempotent,
		Limits: limits{
			"content": maxLen(vp.MaxDiaryContentBytes), "highlights": maxItems(vp.MaxDiaryListItems),
			"highlights[]": maxLen(vp.MaxDiaryItemBytes), "blockers": maxItems(vp.MaxDiaryListItems),
			"blockers[]": maxLen(vp.MaxDiaryItemBytes), "orchestrator": maxLen(vp.MaxNameBytes),
			"instanceId": maxLen(vp.MaxNameBytes),
		},
		Description: "Write your diary entry for a day at the end of a session: one entry per orchestrator and date, so writing the same day " +
			"again overwrites it (content, highlights and blockers are replaced). " +
			"Example: {\"date\":\"2026-05-29\",\"content\":\"Shipped M3.\",\"highlights\":[\"M3 on time\"]}"},
		func(ctx context.Context, p vp.Principal, in writeDiaryIn) (diary.WriteResult, error) {
			return c.WriteDiary(ctx, p, diary.WriteInput{Date: in.Date, Orchestrator: in.Orchestrator, InstanceID: in.InstanceID,
				Content: in.Content, Highlights: in.Highlights, Blockers: in.Blockers})
		})

	add(s, m, tool{Name: "get_diary", Annotations: readOnly,
		Description: "Read one diary entry by orchestrator and date, e.g. to recall what a peer did yesterday. " +
			"Example: {\"orchestrator\":\"sigma\",\"date\":\"2026-05-29\"}"},
		func(ctx context.Context, p vp.Principal, in getDiaryIn) (vp.DiaryEntry, error) {
			return c.GetDiary(ctx, p, in.Orchestrator, in.Date)
		})

	add(s, m, tool{Name: "list_diaries", Annotations: readOnly,
		Description: "Browse diary entries, newest date first, for one orchestrator or everyone, optionally within from..to. " +
			"Paginated: {items, nextCursor?}; pass nextCursor back as cursor. Example: {\"orchestrator\":\"sigma\",\"limit\":7,\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listDiariesIn) (listing.Page[any], error) {
			return c.ListDiaries(ctx, p, diary.ListInput{Orchestrator: in.Orchestrator, From: in.From, To: in.To, Params: in.Params})
		})

	add(s, m, tool{Name: "list_diary_by_date_range", Annotations: readOnly,
		Description: "Read the diary entries between two dates (inclusive) in date order, oldest first: for weekly reviews or replaying a period. " +
			"Paginated like list_diaries. Example: {\"from\":\"2026-05-20\",\"to\":\"2026-05-29\",\"orchestrator\":\"sigma\"}"},
		func(ctx context.Context, p vp.Principal, in listDiaryRangeIn) (listing.Page[any], error) {
			return c.ListDiaryByDateRange(ctx, p, diary.ListInput{Orchestrator: in.Orchestrator, From: in.From, To: in.To, Params: in.Params})
		})
}
