package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/uiview"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

var primitives = []string{"tasks-table", "messages-feed", "diary-entry", "mission-timeline", "briefing-note", "memory-quote"}

// readView reads uri and returns its one content, failing on a protocol error.
func readView(t *testing.T, cs *mcp.ClientSession, uri string) *mcp.ResourceContents {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d contents", uri, len(res.Contents))
	}
	return res.Contents[0]
}

// wantUIMeta: the empty CSP (no outside domain) and a border.
func wantUIMeta(t *testing.T, what string, meta mcp.Meta) {
	t.Helper()
	b, _ := json.Marshal(meta)
	if string(b) != `{"ui":{"csp":{},"prefersBorder":true}}` {
		t.Errorf("%s: _meta = %s", what, b)
	}
}

// wantDocument: a complete HTML5 document with the inline bridge and
// nothing loaded from elsewhere.
func wantDocument(t *testing.T, uri, html, lang string) {
	t.Helper()
	for _, w := range []string{"<!DOCTYPE html>", `<html lang="` + lang + `">`, "<title>", "</html>",
		"ui/initialize", "'" + uiview.ProtocolVersion + "'", "ui/notifications/initialized", "ui/notifications/size-changed",
		"ui/notifications/tool-result", "ui/notifications/host-context-changed", `role="status" aria-live="polite"`} {
		if !strings.Contains(html, w) {
			t.Errorf("%s: no %q in the document", uri, w)
		}
	}
	for _, bad := range []string{" src=", "<link", "http://", "https://", "innerHTML", "@import", "url("} {
		if strings.Contains(html, bad) {
			t.Errorf("%s: the document has %q (it must load nothing and never write data as HTML)", uri, bad)
		}
	}
}

func TestUIResourcesAreListed(t *testing.T) {
	cs := connect(t, auth.MasterPrincipal("acme"))
	ctx := context.Background()
	init := cs.InitializeResult()
	if init.Capabilities.Resources == nil || init.Capabilities.Extensions["io.modelcontextprotocol/ui"] == nil {
		t.Fatalf("capabilities %+v: no resources or no MCP Apps extension", init.Capabilities)
	}
	list, err := cs.ListResources(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range list.Resources {
		uris = append(uris, r.URI)
		if r.MIMEType != "text/html;profile=mcp-app" {
			t.Errorf("%s: MIME %q", r.URI, r.MIMEType)
		}
		wantUIMeta(t, r.URI, r.Meta)
	}
	var want []string
	for _, p := range primitives {
		want = append(want, "ui://vp/v1/"+p)
	}
	slices.Sort(uris)
	slices.Sort(want)
	if !slices.Equal(uris, want) {
		t.Fatalf("resources/list = %v, want %v", uris, want)
	}
	tl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, rt := range tl.ResourceTemplates {
		got[rt.URITemplate] = rt.MIMEType == uiview.MIMEType
	}
	for _, w := range []string{
		"ui://vp/v1/tasks-table{?assignedTo,status,limit,lang}", "ui://vp/v1/messages-feed{?from,channel,limit,lang}",
		"ui://vp/v1/diary-entry{?date,orchestrator,limit,lang}", "ui://vp/v1/mission-timeline{?pilot,project,status,limit,lang}",
		"ui://vp/v1/briefing-note{?noteId,topic,limit,lang}", "ui://vp/v1/memory-quote{?namespace,type,query,limit,lang}",
	} {
		if !got[w] {
			t.Errorf("no template %s with the MCP Apps MIME type in %v", w, got)
		}
	}
	if len(got) != 6 {
		t.Errorf("%d templates, want 6", len(got))
	}

	for _, uri := range want {
		c := readView(t, cs, uri)
		if c.URI != uri || c.MIMEType != uiview.MIMEType {
			t.Errorf("%s: contents uri %q MIME %q", uri, c.URI, c.MIMEType)
		}
		wantUIMeta(t, uri+" contents", c.Meta)
		wantDocument(t, uri, c.Text, "en")
		// The shell waits for the host's tool result.
		if !strings.Contains(c.Text, "Waiting for the tool result") || !strings.Contains(c.Text, `id="vp-data"> null </script>`) {
			t.Errorf("%s: not the waiting shell:\n%s", uri, c.Text[:min(len(c.Text), 1500)])
		}
	}
}

func TestUIUnknownViewIsResourceNotFound(t *testing.T) {
	cs := connect(t, auth.MasterPrincipal("acme"))
	for _, uri := range []string{"ui://vp/v1/nope", "ui://vp/v2/tasks-table", "ui://vp/v1/nope?limit=2", "ui://vp/v1/tasks-table/x"} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(strings.ToLower(err.Error()), "resource not found") {
			t.Errorf("read %s: err %v, want a resource-not-found error naming it", uri, err)
		}
	}
}

// rows counts the items a view shows.
func rows(primitive, html string) int {
	marker := map[string]string{
		"tasks-table": "<tr><td>", "messages-feed": `<li class="vp-card">`, "diary-entry": `<article class="vp-card">`,
		"mission-timeline": `<li class="vp-card vp-mission">`, "briefing-note": `<article class="vp-card">`,
		"memory-quote": `<blockquote class="vp-card vp-quote">`,
	}[primitive]
	return strings.Count(html, marker)
}

// seedViews writes n items of each view's data that its query keeps, and
// one of each that it filters out.
func seedViews(t *testing.T, cs *mcp.ClientSession, n int) (noteID string) {
	t.Helper()
	must := func(name string, args map[string]any) string {
		t.Helper()
		res, text := call(t, cs, name, args)
		if res.IsError {
			t.Fatalf("%s: %s", name, text)
		}
		return text
	}
	for i := range n {
		must("create_task", map[string]any{"title": fmt.Sprintf("Task %d", i), "assignedTo": "alice", "priority": "high", "createdBy": "alice"})
		must("send_message", map[string]any{"from": "alice", "channel": "bob", "content": fmt.Sprintf("Hello %d", i)})
		must("write_diary", map[string]any{"orchestrator": "alice", "date": fmt.Sprintf("2026-05-%02d", 10+i), "content": "Shipped.", "highlights": []string{"on time"}})
		must("create_mission", map[string]any{"name": fmt.Sprintf("mission-%d", i), "project": "studio/ws1", "priority": "high", "pilot": "alice", "createdBy": "alice"})
		text := must("create_briefing_note", map[string]any{"title": fmt.Sprintf("Review %d", i), "topic": "sprint-review", "participants": []string{"alice", "bob"}, "content": "Notes.", "createdBy": "alice"})
		var note struct {
			NoteID string `json:"noteId"`
			ID     string `json:"_id"`
		}
		_ = json.Unmarshal([]byte(text), &note)
		noteID = note.NoteID + note.ID
		must("store_memory", map[string]any{"namespace": "project/acme", "type": "decision", "content": fmt.Sprintf("Decision %d", i), "createdBy": "alice"})
	}
	// One of each that the queries below filter out.
	must("create_task", map[string]any{"title": "Other", "assignedTo": "bob", "priority": "low", "createdBy": "bob"})
	must("send_message", map[string]any{"from": "bob", "channel": "alice", "content": "Other"})
	must("write_diary", map[string]any{"orchestrator": "bob", "date": "2026-05-01", "content": "Other."})
	must("create_mission", map[string]any{"name": "other", "project": "studio/ws2", "priority": "low", "pilot": "bob", "createdBy": "bob"})
	must("create_briefing_note", map[string]any{"title": "Other", "topic": "standup", "participants": []string{"bob"}, "content": "Other.", "createdBy": "bob"})
	must("store_memory", map[string]any{"namespace": "project/acme", "type": "feedback", "content": "Other", "createdBy": "bob"})
	return noteID
}

func TestUITemplatesShowTheQueriedRows(t *testing.T) {
	const n = 3
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	noteID := seedViews(t, cs, n)
	cases := []struct {
		uri  string
		want int
	}{
		{"ui://vp/v1/tasks-table?assignedTo=alice&status=todo", n},
		{"ui://vp/v1/tasks-table?assignedTo=alice&limit=2", 2},
		{"ui://vp/v1/messages-feed?from=alice&channel=bob", n},
		{"ui://vp/v1/messages-feed?from=alice&limit=1", 1},
		{"ui://vp/v1/diary-entry?orchestrator=alice", n},
		{"ui://vp/v1/diary-entry?orchestrator=alice&date=2026-05-11", 1},
		{"ui://vp/v1/mission-timeline?pilot=alice", n},
		{"ui://vp/v1/mission-timeline?project=studio%2Fws1&limit=2", 2},
		{"ui://vp/v1/briefing-note?topic=sprint-review", n},
		{"ui://vp/v1/briefing-note?noteId=" + noteID, 1},
		{"ui://vp/v1/memory-quote?namespace=project%2Facme&type=decision", n},
		{"ui://vp/v1/memory-quote?namespace=project%2Facme&type=decision&limit=2", 2},
		{"ui://vp/v1/tasks-table?assignedTo=nobody", 0},
	}
	for _, c := range cases {
		t.Run(c.uri, func(t *testing.T) {
			content := readView(t, cs, c.uri)
			html := content.Text
			primitive := strings.TrimPrefix(strings.SplitN(c.uri, "?", 2)[0], "ui://vp/v1/")
			wantDocument(t, c.uri, html, "en")
			wantUIMeta(t, c.uri, content.Meta)
			if strings.Contains(html, `role="alert"`) {
				t.Fatalf("error box: %s", html[strings.Index(html, `role="alert"`):][:400])
			}
			if got := rows(primitive, html); got != c.want {
				t.Fatalf("%d rows, want %d:\n%s", got, c.want, html[:min(len(html), 6000)])
			}
			if c.want == 0 && !strings.Contains(html, `<p class="vp-empty">No tasks.</p>`) {
				t.Errorf("no empty state")
			}
			if c.want > 0 && !strings.Contains(html, fmt.Sprintf(">%d ", c.want)) {
				t.Errorf("no count %d in the status", c.want)
			}
		})
	}
}

func TestUITemplateEscapesContent(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	const xss = `<img src=x onerror=alert(1)><script>alert(2)</script>`
	if res, text := call(t, cs, "create_task", map[string]any{"title": xss, "assignedTo": "alice", "priority": "high"}); res.IsError {
		t.Fatal(text)
	}
	html := readView(t, cs, "ui://vp/v1/tasks-table?assignedTo=alice").Text
	if strings.Contains(html, "<img") || strings.Contains(html, "<script>alert") {
		t.Fatalf("the payload is markup:\n%s", html)
	}
	if !strings.Contains(html, "<tr><td>&lt;img src=x onerror=alert(1)&gt;&lt;script&gt;alert(2)&lt;/script&gt;</td>") {
		t.Fatalf("the title is not shown as text:\n%s", html)
	}
	// The copy the script re-renders from is JSON with < escaped.
	if !strings.Contains(html, `\u003cimg src=x onerror=alert(1)\u003e`) {
		t.Errorf("vp-data does not carry the escaped title")
	}
}

func TestUITemplateErrorBox(t *testing.T) {
	nothing := vp.Principal{Tenant: "acme"}
	reader := vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}, ReadPrefixes: []string{"project/a"}, WritePrefixes: []string{"project/a"}}
	cases := []struct {
		name string
		p    vp.Principal
		uri  string
		want []string
	}{
		{"forbidden namespace", reader, "ui://vp/v1/memory-quote?namespace=orchestrator%2Fbob", []string{"forbidden", "namespace", "orchestrator/bob"}},
		{"a token that grants nothing", nothing, "ui://vp/v1/tasks-table?assignedTo=alice", []string{"forbidden"}},
		{"limit over the maximum", reader, "ui://vp/v1/messages-feed?limit=201", []string{"limit", "1-200"}},
		{"limit not a number", reader, "ui://vp/v1/diary-entry?limit=five", []string{"limit", "1-50"}},
		{"unknown diary", reader, "ui://vp/v1/diary-entry?orchestrator=alice&date=2026-01-01", []string{"not_found"}},
		{"unknown parameter", reader, "ui://vp/v1/tasks-table?assignee=alice", []string{"assignee", "assignedTo, status, limit, lang"}},
		{"bad lang", reader, "ui://vp/v1/tasks-table?lang=de", []string{"lang", `"de"`, "en or fr"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cs, _ := connectMemory(t, c.p)
			html := readView(t, cs, c.uri).Text
			i := strings.Index(html, `<div class="vp-error" role="alert">`)
			if i < 0 {
				t.Fatalf("no error box:\n%s", html[:min(len(html), 3000)])
			}
			box := html[i:]
			box = box[:strings.Index(box, "</div>")]
			for _, w := range c.want {
				if !strings.Contains(box, strings.ReplaceAll(w, `"`, "&#34;")) {
					t.Errorf("error box %q does not say %q", box, w)
				}
			}
			if !strings.Contains(html, "The data could not be read.") {
				t.Errorf("the status region does not announce the failure")
			}
		})
	}
}

func TestUITemplateFrench(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	for i := range 3 {
		call(t, cs, "create_task", map[string]any{"title": fmt.Sprint("T", i), "assignedTo": "alice", "priority": "high"})
	}
	html := readView(t, cs, "ui://vp/v1/tasks-table?assignedTo=alice&lang=fr").Text
	wantDocument(t, "fr", html, "fr")
	for _, w := range []string{"<title>Tâches — VantagePeers</title>", `<th scope="col">Titre</th>`, `<th scope="col">Statut</th>`,
		`<th scope="col">Priorité</th>`, `<th scope="col">Attribué à</th>`, ">3 tâches</p>", `<td colspan="4">3 tâches</td>`, ">À faire</span>", "<td>Haute</td>"} {
		if !strings.Contains(html, w) {
			t.Errorf("no %q in the French view", w)
		}
	}
	empty := readView(t, cs, "ui://vp/v1/mission-timeline?pilot=nobody&lang=fr").Text
	if !strings.Contains(empty, "Aucune mission.") || !strings.Contains(empty, ">0 mission</p>") {
		t.Errorf("French empty state missing:\n%s", empty[:min(len(empty), 2000)])
	}
}

// TestUIToolsLinkTheirView: exactly the seven tools that feed a view carry
// _meta.ui.resourceUri, naming a listed resource.
func TestUIToolsLinkTheirView(t *testing.T) {
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"list_tasks": "ui://vp/v1/tasks-table", "list_messages": "ui://vp/v1/messages-feed", "get_diary": "ui://vp/v1/diary-entry",
		"list_missions": "ui://vp/v1/mission-timeline", "get_briefing_note": "ui://vp/v1/briefing-note",
		"recall": "ui://vp/v1/memory-quote", "hybrid_search": "ui://vp/v1/memory-quote",
	}
	got := map[string]string{}
	for _, tool := range res.Tools {
		if tool.Meta == nil {
			continue
		}
		b, _ := json.Marshal(tool.Meta)
		var m struct {
			UI struct {
				ResourceURI string `json:"resourceUri"`
			} `json:"ui"`
		}
		if err := json.Unmarshal(b, &m); err != nil || m.UI.ResourceURI == "" {
			t.Errorf("%s: _meta %s has no ui.resourceUri", tool.Name, b)
			continue
		}
		got[tool.Name] = m.UI.ResourceURI
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("tools with a view = %v, want %v", got, want)
	}
}
