package uimarker

import (
	"reflect"
	"strings"
	"testing"
)

func ptr(f float64) *float64 { return &f }

// examples is one valid result per kind, every optional field set.
var examples = []Result{
	{Kind: KindTasksTable, TasksTable: []TasksTable{
		{ID: "tsk_1", Title: "Fix login <#142> & more", Status: "todo", Priority: "high", AssignedTo: "bob", CreationTime: ptr(1.7e12)},
		{ID: "tsk_2", Title: "Ship __END__ safely", Status: "done"},
	}},
	{Kind: KindMessagesFeed, MessagesFeed: []MessagesFeed{{ID: "msg_1", From: "alice", Channel: "general", Content: "hi\n" + Start, CreatedAt: 1.7e12}}},
	{Kind: KindDiaryEntry, DiaryEntry: &DiaryEntry{ID: "dia_1", Date: "2026-05-29", Orchestrator: "sigma", Content: "Shipped M3.",
		Highlights: []string{"M3 on time"}, Blockers: []string{"none"}}},
	{Kind: KindMissionTimeline, MissionTimeline: []MissionTimeline{{ID: "msn_1", Name: "Login", Project: "web", Status: "execute",
		Pilot: "pi", Priority: "high", Progress: ptr(0)}}},
	{Kind: KindBriefingNote, BriefingNote: &BriefingNote{ID: "brf_1", Topic: "sprint", Title: "Review", Participants: []string{"a", "b"},
		Content: "notes", CreatedBy: "a"}},
	{Kind: KindMemoryQuote, MemoryQuote: []MemoryQuote{{ID: "mem_1", Namespace: "global", Type: "fact", Content: "x", Score: ptr(0.5)}}},
}

func TestRoundTrip(t *testing.T) {
	for _, r := range examples {
		t.Run(r.Kind, func(t *testing.T) {
			s, err := Wrap(r)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(s, Start+`{"kind":"`+r.Kind+`"`) || !strings.HasSuffix(s, "}"+End) || strings.ContainsAny(s, "\n\t") && r.Kind != KindMessagesFeed {
				t.Fatalf("not a minified marker: %s", s)
			}
			for _, text := range []string{s, "Here are the results.\n" + s, "before " + s + " after", Start + "{broken" + End + "\n" + s} {
				if got := Parse(text); !reflect.DeepEqual(got, &r) {
					t.Fatalf("Parse(%q) = %+v, want %+v", text, got, r)
				}
			}
		})
	}
}

func TestWrapEmptyList(t *testing.T) {
	s, err := Wrap(Result{Kind: KindTasksTable})
	if err != nil || s != Start+`{"kind":"tasks-table","items":[]}`+End {
		t.Fatalf("Wrap = %q, %v", s, err)
	}
	if r := Parse(s); r == nil || r.TasksTable == nil || len(r.TasksTable) != 0 {
		t.Fatalf("Parse = %+v", r)
	}
}

func TestWrapInvalid(t *testing.T) {
	for _, c := range []struct {
		name  string
		r     Result
		field string
	}{
		{"unknown kind", Result{Kind: "pie-chart"}, "kind"},
		{"no kind", Result{}, "kind"},
		{"other payload", Result{Kind: KindTasksTable, MemoryQuote: []MemoryQuote{}}, "memory-quote"},
		{"task title", Result{Kind: KindTasksTable, TasksTable: []TasksTable{{ID: "a", Title: "t", Status: "s"}, {ID: "b", Status: "s"}}}, "items[1].title"},
		{"task id", Result{Kind: KindTasksTable, TasksTable: []TasksTable{{Title: "t", Status: "s"}}}, "items[0]._id"},
		{"message content", Result{Kind: KindMessagesFeed, MessagesFeed: []MessagesFeed{{ID: "a", From: "b"}}}, "items[0].content"},
		{"no diary item", Result{Kind: KindDiaryEntry}, "item is required"},
		{"diary date", Result{Kind: KindDiaryEntry, DiaryEntry: &DiaryEntry{ID: "a", Date: "2026-5-29", Orchestrator: "o", Content: "c"}}, "item.date"},
		{"diary date not a day", Result{Kind: KindDiaryEntry, DiaryEntry: &DiaryEntry{ID: "a", Date: "2026-02-30", Orchestrator: "o", Content: "c"}}, "item.date"},
		{"diary orchestrator", Result{Kind: KindDiaryEntry, DiaryEntry: &DiaryEntry{ID: "a", Date: "2026-05-29", Content: "c"}}, "item.orchestrator"},
		{"progress high", Result{Kind: KindMissionTimeline, MissionTimeline: []MissionTimeline{{ID: "a", Name: "n", Status: "s", Progress: ptr(101)}}}, "items[0].progress"},
		{"progress low", Result{Kind: KindMissionTimeline, MissionTimeline: []MissionTimeline{{ID: "a", Name: "n", Status: "s", Progress: ptr(-1)}}}, "items[0].progress"},
		{"mission status", Result{Kind: KindMissionTimeline, MissionTimeline: []MissionTimeline{{ID: "a", Name: "n"}}}, "items[0].status"},
		{"briefing topic", Result{Kind: KindBriefingNote, BriefingNote: &BriefingNote{ID: "a", Title: "t"}}, "item.topic"},
		{"memory type", Result{Kind: KindMemoryQuote, MemoryQuote: []MemoryQuote{{ID: "a", Namespace: "n", Content: "c"}}}, "items[0].type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := Wrap(c.r)
			if err == nil {
				t.Fatalf("Wrap = %q, want an error", s)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "uimarker: Wrap: invalid payload — ") || !strings.Contains(msg, c.field) {
				t.Fatalf("error %q does not name %q", msg, c.field)
			}
		})
	}
}

func TestParseNil(t *testing.T) {
	for _, text := range []string{
		"",
		"plain text",
		Start,
		Start + End,
		Start + `{"kind":"tasks-table","items":[]}`, // no End
		Start + ` {"kind":"tasks-table","items":[]}` + End,
		Start + `{"kind":"tasks-table","items":[]}` + " " + End,
		Start + `{"kind":"tasks-table","items":[]` + End,
		Start + `{"kind":"pie-chart","items":[]}` + End,
		Start + `{"kind":"tasks-table"}` + End,
		Start + `{"kind":"tasks-table","items":null}` + End,
		Start + `{"kind":"tasks-table","items":{}}` + End,
		Start + `{"kind":"tasks-table","items":[{"_id":"a","title":"t"}]}` + End,
		Start + `{"kind":"tasks-table","items":[{"_id":"a","title":"t","status":3}]}` + End,
		Start + `{"kind":"diary-entry","items":[]}` + End,
		Start + `{"kind":"diary-entry","item":{"_id":"a","date":"29/05/2026","orchestrator":"o","content":"c"}}` + End,
		Start + `{"kind":"mission-timeline","items":[{"_id":"a","name":"n","status":"s","progress":200}]}` + End,
		Start + `[]` + End,
		End + Start,
	} {
		if r := Parse(text); r != nil {
			t.Errorf("Parse(%q) = %+v, want nil", text, r)
		}
	}
}

func TestParseTakesTheLastMarker(t *testing.T) {
	first, _ := Wrap(examples[0])
	last, _ := Wrap(examples[5])
	if r := Parse(first + "\n" + last + "\ntrailing"); r == nil || r.Kind != KindMemoryQuote {
		t.Fatalf("Parse = %+v, want the memory-quote", r)
	}
	// A later invalid marker does not hide the valid one before it.
	if r := Parse(first + "\n" + Start + `{"kind":"x"}` + End); r == nil || r.Kind != KindTasksTable {
		t.Fatalf("Parse = %+v, want the tasks-table", r)
	}
}

func FuzzParse(f *testing.F) {
	for _, r := range examples {
		s, _ := Wrap(r)
		f.Add(s)
		f.Add("text\n" + s + "\nmore")
	}
	f.Add(Start + `{"kind":"tasks-table","items":null}` + End)
	f.Add(Start + `{"kind":"diary-entry","item":{"_id":"a","date":"2026-01-01","orchestrator":"o","content":"c"}}` + End)
	f.Fuzz(func(t *testing.T, text string) {
		r := Parse(text)
		if r == nil {
			return
		}
		s, err := Wrap(*r)
		if err != nil {
			t.Fatalf("Wrap(Parse(%q)): %v", text, err)
		}
		if again := Parse(s); !reflect.DeepEqual(again, r) {
			t.Fatalf("Parse(Wrap(x)) = %+v, want %+v", again, r)
		}
	})
}
