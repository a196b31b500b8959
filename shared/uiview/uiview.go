// Package uiview renders the six MCP Apps views of platform spec §15.2
// (tasks-table, messages-feed, diary-entry, mission-timeline,
// briefing-note, memory-quote) as complete HTML5 documents of MIME type
// text/html;profile=mcp-app.
//
// A page is either a shell, which waits for the host to send it a tool
// result over the MCP Apps ui/* postMessage bridge (view.js) and renders
// it in the browser, or server-rendered with Data read by the caller. Both
// renderers escape every piece of user content: html/template on the
// server, textContent in the browser. Nothing is fetched from outside:
// the CSS and the script are inline.
package uiview

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/uimarker"
)

// MIMEType is the MCP Apps resource type (SEP-1865).
const MIMEType = "text/html;profile=mcp-app"

// ProtocolVersion is the MCP Apps version the script initializes with.
const ProtocolVersion = "2026-01-26"

// Primitives are the views, in the order of §15.2.
var Primitives = []string{
	uimarker.KindTasksTable, uimarker.KindMessagesFeed, uimarker.KindDiaryEntry,
	uimarker.KindMissionTimeline, uimarker.KindBriefingNote, uimarker.KindMemoryQuote,
}

// Known reports whether p is one of Primitives.
func Known(p string) bool { return slices.Contains(Primitives, p) }

// Title is p's title in lang (English for an unknown language).
func Title(p, lang string) string { return lookup(lang, p, "title") }

// Data is what a server-rendered page shows: the list of its primitive
// (diary entries and briefing notes as a list of one or more).
type Data struct {
	Tasks     []uimarker.TasksTable
	Messages  []uimarker.MessagesFeed
	Diary     []uimarker.DiaryEntry
	Missions  []uimarker.MissionTimeline
	Briefings []uimarker.BriefingNote
	Memories  []uimarker.MemoryQuote
}

// Page is one view to render.
type Page struct {
	Primitive string
	// Lang is LangEN (also when empty) or LangFR.
	Lang string
	// Data nil renders the shell that waits for the host's tool result.
	Data *Data
	// Err, when set, is shown in an error box (role=alert) instead of
	// data: a view never fails, it says why it has nothing to show.
	Err string
}

var (
	//go:embed page.html.tmpl
	pageSrc string
	//go:embed view.js
	script string
	//go:embed view.css
	style string

	pageTmpl = template.Must(template.New("page").Parse(pageSrc))
)

// Render returns the complete HTML document of p.
func Render(p Page) ([]byte, error) {
	if !Known(p.Primitive) {
		return nil, fmt.Errorf("uiview: %q is not a view (one of %s)", p.Primitive, strings.Join(Primitives, ", "))
	}
	if p.Lang == "" {
		p.Lang = LangEN
	}
	if _, ok := texts[p.Lang]; !ok {
		return nil, fmt.Errorf("uiview: lang %q is not en or fr", p.Lang)
	}
	v := &view{Page: p, Script: template.JS(script), CSS: template.CSS(style), Texts: texts}
	if p.Data != nil && p.Err == "" {
		v.Items, v.n = v.items()
	}
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, v); err != nil {
		return nil, fmt.Errorf("uiview: %s: %w", p.Primitive, err)
	}
	return buf.Bytes(), nil
}

// view is the template's data.
type view struct {
	Page
	// Items is the list of the primitive's Data (nil for a shell), which
	// the script re-renders when the host's locale changes.
	Items  any
	Script template.JS
	CSS    template.CSS
	Texts  map[string]map[string]string
	n      int
}

// items is the list of the page's primitive and its length.
func (v *view) items() (any, int) {
	d := v.Data
	switch v.Primitive {
	case uimarker.KindTasksTable:
		return nonNil(d.Tasks)
	case uimarker.KindMessagesFeed:
		return nonNil(d.Messages)
	case uimarker.KindDiaryEntry:
		return nonNil(d.Diary)
	case uimarker.KindMissionTimeline:
		return nonNil(d.Missions)
	case uimarker.KindBriefingNote:
		return nonNil(d.Briefings)
	default:
		return nonNil(d.Memories)
	}
}

func nonNil[T any](l []T) (any, int) {
	if l == nil {
		l = []T{}
	}
	return l, len(l)
}

// Loaded: server-rendered with data.
func (v *view) Loaded() bool { return v.Items != nil }

// N is the number of items shown.
func (v *view) N() int { return v.n }

// T is the label key in the page's language.
func (v *view) T(key string) string { return lookup(v.Lang, v.Primitive, key) }

func lookup(lang, primitive, key string) string {
	t, ok := texts[lang]
	if !ok {
		t = texts[LangEN]
	}
	if s, ok := t[primitive+"."+key]; ok {
		return s
	}
	return t[key]
}

// Count is "3 tasks" (French: 0 and 1 are singular, as in the script).
func (v *view) Count() string {
	n, form := v.N(), "other"
	if n == 1 || (n == 0 && v.Lang == LangFR) {
		form = "one"
	}
	return strings.Replace(v.T(form), "%d", fmt.Sprint(n), 1)
}

// Status is the text of the live status region.
func (v *view) Status() string {
	switch {
	case v.Err != "":
		return v.T("failed")
	case v.Loaded():
		return v.Count()
	default:
		return v.T("waiting")
	}
}

// StatusClass is the badge class of a task or mission status; a status
// the CSS does not know gets the neutral one.
func (v *view) StatusClass(s string) string {
	if _, ok := texts[LangEN]["status."+s]; ok {
		return "vp-status-" + s
	}
	return "vp-status-other"
}

// StatusLabel and PriorityLabel translate the known values and show any
// other as is.
func (v *view) StatusLabel(s string) string   { return v.label("status.", s) }
func (v *view) PriorityLabel(s string) string { return v.label("priority.", s) }

func (v *view) label(prefix, s string) string {
	if l, ok := texts[v.Lang][prefix+s]; ok {
		return l
	}
	return s
}

// When and ISO format a Unix ms time (UTC, as the script does).
func (v *view) When(ms float64) string { return msTime(ms).Format("2006-01-02 15:04") + " UTC" }
func (v *view) ISO(ms float64) string  { return msTime(ms).Format("2006-01-02T15:04:05.000Z") }

func msTime(ms float64) time.Time { return time.UnixMilli(int64(ms)).UTC() }

// Num formats a score or a progress: at most two decimals.
func (v *view) Num(f *float64) string {
	if f == nil {
		return ""
	}
	return fmt.Sprint(math.Round(*f*100) / 100)
}
