package uiview

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/uimarker"
)

const xss = `<img src=x onerror=alert(1)>`

// every fills each primitive's text fields with s.
func every(s string) *Data {
	f := 42.0
	return &Data{
		Tasks:     []uimarker.TasksTable{{ID: s, Title: s, Status: s, Priority: s, AssignedTo: s}},
		Messages:  []uimarker.MessagesFeed{{ID: s, From: s, Channel: s, Content: s, CreatedAt: 1780000000000}},
		Diary:     []uimarker.DiaryEntry{{ID: s, Date: s, Orchestrator: s, Content: s, Highlights: []string{s}, Blockers: []string{s}}},
		Missions:  []uimarker.MissionTimeline{{ID: s, Name: s, Project: s, Status: s, Pilot: s, Priority: s, Progress: &f}},
		Briefings: []uimarker.BriefingNote{{ID: s, Topic: s, Title: s, Participants: []string{s}, Content: s, CreatedBy: s}},
		Memories:  []uimarker.MemoryQuote{{ID: s, Namespace: s, Type: s, Content: s, Score: &f}},
	}
}

func TestRenderEscapesEveryField(t *testing.T) {
	for _, p := range Primitives {
		for _, lang := range []string{LangEN, LangFR} {
			b, err := Render(Page{Primitive: p, Lang: lang, Data: every(xss)})
			if err != nil {
				t.Fatal(err)
			}
			html := string(b)
			if strings.Contains(html, "<img") {
				t.Errorf("%s/%s: the payload is markup", p, lang)
			}
			if !strings.Contains(html, "&lt;img src=x onerror=alert(1)&gt;") {
				t.Errorf("%s/%s: the payload is not shown as text", p, lang)
			}
			if strings.Contains(html, `class="vp-badge vp-status-&lt;`) {
				t.Errorf("%s/%s: an unknown status became a class", p, lang)
			}
		}
	}
}

func TestRenderLabelsAndCounts(t *testing.T) {
	one := &Data{Tasks: []uimarker.TasksTable{{ID: "t", Title: "x", Status: "in_progress", Priority: "urgent"}}}
	cases := []struct {
		page Page
		want []string
	}{
		{Page{Primitive: "tasks-table", Data: one}, []string{`<html lang="en">`, ">1 task</p>", ">In progress</span>", "<td>Urgent</td>", `vp-status-in_progress`}},
		{Page{Primitive: "tasks-table", Lang: LangFR, Data: one}, []string{`<html lang="fr">`, ">1 tâche</p>", ">En cours</span>", "<td>Urgente</td>"}},
		{Page{Primitive: "memory-quote", Data: &Data{}}, []string{">0 memories</p>", `<p class="vp-empty">No memories.</p>`}},
		{Page{Primitive: "memory-quote", Lang: LangFR, Data: &Data{}}, []string{">0 mémoire</p>", "Aucune mémoire."}},
		{Page{Primitive: "diary-entry", Lang: LangFR}, []string{"En attente du résultat de l’outil…", `id="vp-data"> null </script>`}},
		{Page{Primitive: "briefing-note", Err: "forbidden: <b>x</b>", Data: &Data{}}, []string{`role="alert"`, "forbidden: &lt;b&gt;x&lt;/b&gt;", "The data could not be read."}},
	}
	for _, c := range cases {
		b, err := Render(c.page)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s %s: no %q", c.page.Primitive, c.page.Lang, w)
			}
		}
	}
}

func TestRenderRefusesUnknownViewOrLang(t *testing.T) {
	if _, err := Render(Page{Primitive: "nope"}); err == nil || !strings.Contains(err.Error(), "tasks-table") {
		t.Errorf("unknown view: %v", err)
	}
	if _, err := Render(Page{Primitive: "tasks-table", Lang: "de"}); err == nil || !strings.Contains(err.Error(), "en or fr") {
		t.Errorf("unknown lang: %v", err)
	}
}

// TestTextsAreComplete: both languages have the same keys, each view its
// title, counts and empty state.
func TestTextsAreComplete(t *testing.T) {
	for k := range texts[LangEN] {
		if texts[LangFR][k] == "" {
			t.Errorf("fr has no %q", k)
		}
	}
	for k := range texts[LangFR] {
		if texts[LangEN][k] == "" {
			t.Errorf("en has no %q", k)
		}
	}
	for _, p := range Primitives {
		for _, k := range []string{"title", "one", "other", "empty"} {
			if _, ok := texts[LangEN][p+"."+k]; !ok {
				t.Errorf("no %s.%s", p, k)
			}
		}
	}
}
