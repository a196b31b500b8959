package mcpserver

import (
	"context"
	"encoding/json"

	"github.com/vantagepeers/vantagepeers/shared/uimarker"
)

// markerFunc maps a tool's result, as the JSON of its text content, to a
// UI marker (shared/uimarker); false: no marker. The result's JSON field
// names are those of VpToolResultSchema (_id, title, status, ...), so each
// mapper decodes the JSON into the marker's items; a field a projection
// (fields=lite) left out makes Wrap refuse the marker, and none is sent.
type markerFunc func(result []byte) (uimarker.Result, bool)

// marker is "\n" + the marker of t's result b, or "" when there is none or
// it cannot be built: a marker never fails a call.
func (s *server) marker(ctx context.Context, t tool, b []byte) (text string) {
	defer func() {
		if r := recover(); r != nil {
			s.log.WarnContext(ctx, "ui marker panicked", "tool", t.Name, "panic", r)
			text = ""
		}
	}()
	r, ok := t.Marker(b)
	if !ok {
		return ""
	}
	w, err := uimarker.Wrap(r)
	if err != nil {
		s.log.DebugContext(ctx, "no ui marker", "tool", t.Name, "err", err)
		return ""
	}
	return "\n" + w
}

// items decodes the items of a page ({items, nextCursor?}) or the results
// of a search ({results, count}).
func items[T any](b []byte, key string) ([]T, bool) {
	var page map[string]json.RawMessage
	if json.Unmarshal(b, &page) != nil {
		return nil, false
	}
	list := []T{}
	if json.Unmarshal(page[key], &list) != nil {
		return nil, false
	}
	return list, true
}

// item decodes a single record.
func item[T any](b []byte) (*T, bool) {
	v := new(T)
	return v, json.Unmarshal(b, v) == nil
}

// markTasks: list_tasks → tasks-table.
func markTasks(b []byte) (uimarker.Result, bool) {
	l, ok := items[uimarker.TasksTable](b, "items")
	return uimarker.Result{Kind: uimarker.KindTasksTable, TasksTable: l}, ok
}

// markMessages: list_messages → messages-feed.
func markMessages(b []byte) (uimarker.Result, bool) {
	l, ok := items[uimarker.MessagesFeed](b, "items")
	return uimarker.Result{Kind: uimarker.KindMessagesFeed, MessagesFeed: l}, ok
}

// markMissions: list_missions → mission-timeline.
func markMissions(b []byte) (uimarker.Result, bool) {
	l, ok := items[uimarker.MissionTimeline](b, "items")
	return uimarker.Result{Kind: uimarker.KindMissionTimeline, MissionTimeline: l}, ok
}

// markMemories: recall, hybrid_search → memory-quote.
func markMemories(b []byte) (uimarker.Result, bool) {
	l, ok := items[uimarker.MemoryQuote](b, "results")
	return uimarker.Result{Kind: uimarker.KindMemoryQuote, MemoryQuote: l}, ok
}

// markDiary: get_diary → diary-entry.
func markDiary(b []byte) (uimarker.Result, bool) {
	e, ok := item[uimarker.DiaryEntry](b)
	return uimarker.Result{Kind: uimarker.KindDiaryEntry, DiaryEntry: e}, ok
}

// markBriefing: get_briefing_note → briefing-note.
func markBriefing(b []byte) (uimarker.Result, bool) {
	n, ok := item[uimarker.BriefingNote](b)
	return uimarker.Result{Kind: uimarker.KindBriefingNote, BriefingNote: n}, ok
}
