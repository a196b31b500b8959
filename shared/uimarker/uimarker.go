// Package uimarker builds and reads the stream marker of platform spec
// §15.3: Start + a minified VpToolResult JSON object + End, appended to a
// tool's text response so that a consumer can render the result as a UI
// primitive (a tasks table, a messages feed, ...).
//
// Wrap validates a Result and serialises it; Parse finds, decodes and
// validates the marker in a text and never fails (nil when there is none).
package uimarker

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The delimiters of the marker, stable in v2.x.
const (
	Start = "__VP_TOOL_RESULT__"
	End   = "__END__"
)

// The kinds of VpToolResult.
const (
	KindTasksTable      = "tasks-table"
	KindMessagesFeed    = "messages-feed"
	KindDiaryEntry      = "diary-entry"
	KindMissionTimeline = "mission-timeline"
	KindBriefingNote    = "briefing-note"
	KindMemoryQuote     = "memory-quote"
)

// Result is one VpToolResult: Kind and the one payload field of that kind
// (the others nil). On the wire the list kinds carry "items", diary-entry
// and briefing-note a singular "item".
type Result struct {
	Kind string

	TasksTable      []TasksTable      // tasks-table: items
	MessagesFeed    []MessagesFeed    // messages-feed: items
	DiaryEntry      *DiaryEntry       // diary-entry: item
	MissionTimeline []MissionTimeline // mission-timeline: items
	BriefingNote    *BriefingNote     // briefing-note: item
	MemoryQuote     []MemoryQuote     // memory-quote: items
}

// TasksTable is one row of a tasks-table.
type TasksTable struct {
	ID           string   `json:"_id"`
	Title        string   `json:"title"`
	Status       string   `json:"status"`
	Priority     string   `json:"priority,omitempty"`
	AssignedTo   string   `json:"assignedTo,omitempty"`
	CreationTime *float64 `json:"_creationTime,omitempty"`
}

// MessagesFeed is one message of a messages-feed.
type MessagesFeed struct {
	ID        string  `json:"_id"`
	From      string  `json:"from"`
	Channel   string  `json:"channel,omitempty"`
	Content   string  `json:"content"`
	CreatedAt float64 `json:"createdAt"`
}

// DiaryEntry is the item of a diary-entry; Date is YYYY-MM-DD.
type DiaryEntry struct {
	ID           string   `json:"_id"`
	Date         string   `json:"date"`
	Orchestrator string   `json:"orchestrator"`
	Content      string   `json:"content"`
	Highlights   []string `json:"highlights,omitempty"`
	Blockers     []string `json:"blockers,omitempty"`
}

// MissionTimeline is one mission of a mission-timeline; Progress is 0-100.
type MissionTimeline struct {
	ID       string   `json:"_id"`
	Name     string   `json:"name"`
	Project  string   `json:"project,omitempty"`
	Status   string   `json:"status"`
	Pilot    string   `json:"pilot,omitempty"`
	Priority string   `json:"priority,omitempty"`
	Progress *float64 `json:"progress,omitempty"`
}

// BriefingNote is the item of a briefing-note.
type BriefingNote struct {
	ID           string   `json:"_id"`
	Topic        string   `json:"topic"`
	Title        string   `json:"title"`
	Participants []string `json:"participants,omitempty"`
	Content      string   `json:"content,omitempty"`
	CreatedBy    string   `json:"createdBy,omitempty"`
}

// MemoryQuote is one memory of a memory-quote.
type MemoryQuote struct {
	ID        string   `json:"_id"`
	Namespace string   `json:"namespace"`
	Type      string   `json:"type"`
	Content   string   `json:"content"`
	Score     *float64 `json:"score,omitempty"`
}

// wire is a Result as JSON.
type wire struct {
	Kind  string          `json:"kind"`
	Items json.RawMessage `json:"items,omitempty"`
	Item  json.RawMessage `json:"item,omitempty"`
}

// Wrap validates r and returns Start + its minified JSON + End. The error
// names the invalid field: "uimarker: Wrap: invalid payload — items[2].title is required".
func Wrap(r Result) (string, error) {
	if err := r.validate(); err != nil {
		return "", fmt.Errorf("uimarker: Wrap: invalid payload — %w", err)
	}
	w := wire{Kind: r.Kind}
	var err error
	switch r.Kind {
	case KindTasksTable:
		w.Items, err = marshalItems(r.TasksTable)
	case KindMessagesFeed:
		w.Items, err = marshalItems(r.MessagesFeed)
	case KindDiaryEntry:
		w.Item, err = marshal(r.DiaryEntry)
	case KindMissionTimeline:
		w.Items, err = marshalItems(r.MissionTimeline)
	case KindBriefingNote:
		w.Item, err = marshal(r.BriefingNote)
	case KindMemoryQuote:
		w.Items, err = marshalItems(r.MemoryQuote)
	}
	if err != nil {
		return "", fmt.Errorf("uimarker: Wrap: %w", err)
	}
	b, err := marshal(w)
	if err != nil {
		return "", fmt.Errorf("uimarker: Wrap: %w", err)
	}
	return Start + string(b) + End, nil
}

// marshal is json.Marshal without HTML escaping (the marker is not HTML).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// marshalItems marshals a list, nil as [] (items is required).
func marshalItems[T any](items []T) ([]byte, error) {
	if items == nil {
		items = []T{}
	}
	return marshal(items)
}

// Parse returns the result of the last valid marker in text: text that is
// the marker or contains it among other content. It returns nil when there
// is no marker or it is not valid JSON or not a valid payload; it never
// panics.
func Parse(text string) *Result {
	// From the last Start back: a Start inside the payload's own strings
	// (a task titled "__VP_TOOL_RESULT__") is never followed by a valid
	// payload, its quotes being escaped, so an earlier Start is tried.
	for end := len(text); ; {
		i := strings.LastIndex(text[:end], Start)
		if i < 0 {
			return nil
		}
		if r := parseAt(text[i+len(Start):]); r != nil {
			return r
		}
		end = i
	}
}

// parseAt decodes the payload at the start of s, which must be followed
// by End. The decoder, not a search for End, delimits the JSON: content
// may itself contain "__END__".
func parseAt(s string) *Result {
	if !strings.HasPrefix(s, "{") {
		return nil
	}
	dec := json.NewDecoder(strings.NewReader(s))
	var raw json.RawMessage
	if dec.Decode(&raw) != nil || !strings.HasPrefix(s[dec.InputOffset():], End) {
		return nil
	}
	r, err := decode(raw)
	if err != nil || r.validate() != nil {
		return nil
	}
	return r
}

func decode(raw []byte) (*Result, error) {
	var w wire
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	r := &Result{Kind: w.Kind}
	var err error
	switch w.Kind {
	case KindTasksTable:
		r.TasksTable, err = decodeItems[TasksTable](w.Items)
	case KindMessagesFeed:
		r.MessagesFeed, err = decodeItems[MessagesFeed](w.Items)
	case KindDiaryEntry:
		r.DiaryEntry, err = decodeItem[DiaryEntry](w.Item)
	case KindMissionTimeline:
		r.MissionTimeline, err = decodeItems[MissionTimeline](w.Items)
	case KindBriefingNote:
		r.BriefingNote, err = decodeItem[BriefingNote](w.Item)
	case KindMemoryQuote:
		r.MemoryQuote, err = decodeItems[MemoryQuote](w.Items)
	default:
		return nil, errors.New("unknown kind")
	}
	// An empty optional list is absent, as Wrap writes it (omitempty).
	if e := r.DiaryEntry; e != nil {
		e.Highlights, e.Blockers = nilIfEmpty(e.Highlights), nilIfEmpty(e.Blockers)
	}
	if n := r.BriefingNote; n != nil {
		n.Participants = nilIfEmpty(n.Participants)
	}
	return r, err
}

func nilIfEmpty(l []string) []string {
	if len(l) == 0 {
		return nil
	}
	return l
}

func decodeItems[T any](raw json.RawMessage) ([]T, error) {
	if !bytes.HasPrefix(raw, []byte("[")) {
		return nil, errors.New("items is not an array")
	}
	items := []T{}
	return items, json.Unmarshal(raw, &items)
}

func decodeItem[T any](raw json.RawMessage) (*T, error) {
	if !bytes.HasPrefix(raw, []byte("{")) {
		return nil, errors.New("item is not an object")
	}
	item := new(T)
	return item, json.Unmarshal(raw, item)
}

// validate checks r against VpToolResultSchema: a known kind, only its
// payload set, the required fields non-empty, a diary date YYYY-MM-DD and
// a progress within 0-100.
func (r *Result) validate() error {
	set := map[string]bool{
		KindTasksTable: r.TasksTable != nil, KindMessagesFeed: r.MessagesFeed != nil,
		KindDiaryEntry: r.DiaryEntry != nil, KindMissionTimeline: r.MissionTimeline != nil,
		KindBriefingNote: r.BriefingNote != nil, KindMemoryQuote: r.MemoryQuote != nil,
	}
	if _, ok := set[r.Kind]; !ok {
		return fmt.Errorf("kind %q is not one of tasks-table, messages-feed, diary-entry, mission-timeline, briefing-note, memory-quote", r.Kind)
	}
	for k, isSet := range set {
		if isSet && k != r.Kind {
			return fmt.Errorf("kind is %q but the %s payload is set", r.Kind, k)
		}
	}
	switch r.Kind {
	case KindTasksTable:
		for i, it := range r.TasksTable {
			if err := required(fmt.Sprintf("items[%d]", i), "_id", it.ID, "title", it.Title, "status", it.Status); err != nil {
				return err
			}
		}
	case KindMessagesFeed:
		for i, it := range r.MessagesFeed {
			if err := required(fmt.Sprintf("items[%d]", i), "_id", it.ID, "from", it.From, "content", it.Content); err != nil {
				return err
			}
		}
	case KindDiaryEntry:
		it := r.DiaryEntry
		if it == nil {
			return errors.New("item is required")
		}
		if err := required("item", "_id", it.ID, "date", it.Date, "orchestrator", it.Orchestrator, "content", it.Content); err != nil {
			return err
		}
		if _, err := time.Parse(time.DateOnly, it.Date); err != nil || len(it.Date) != len(time.DateOnly) {
			return fmt.Errorf("item.date %q is not a YYYY-MM-DD date", it.Date)
		}
	case KindMissionTimeline:
		for i, it := range r.MissionTimeline {
			if err := required(fmt.Sprintf("items[%d]", i), "_id", it.ID, "name", it.Name, "status", it.Status); err != nil {
				return err
			}
			if it.Progress != nil && (*it.Progress < 0 || *it.Progress > 100) {
				return fmt.Errorf("items[%d].progress %v is not within 0-100", i, *it.Progress)
			}
		}
	case KindBriefingNote:
		it := r.BriefingNote
		if it == nil {
			return errors.New("item is required")
		}
		if err := required("item", "_id", it.ID, "topic", it.Topic, "title", it.Title); err != nil {
			return err
		}
	case KindMemoryQuote:
		for i, it := range r.MemoryQuote {
			if err := required(fmt.Sprintf("items[%d]", i), "_id", it.ID, "namespace", it.Namespace, "type", it.Type, "content", it.Content); err != nil {
				return err
			}
		}
	}
	return nil
}

// required checks name/value pairs: the first empty value is an error
// naming prefix.name.
func required(prefix string, pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] == "" {
			return fmt.Errorf("%s.%s is required", prefix, pairs[i])
		}
	}
	return nil
}
