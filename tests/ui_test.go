package tests

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/tests/nodeclient"
)

// The MCP Apps views (platform spec §15.2) end to end: read from
// `vantagepeers serve` over HTTP with resources/read, rendered by headless
// Chromium (driven over the DevTools protocol, one browser a test) from a
// local test server and checked with axe-core: here server-rendered, and in
// appbridge_test.go hosted by the AppBridge of @modelcontextprotocol/ext-apps,
// the host side of the ui/* postMessage bridge (SEP-1865) that hosts run.

var uiPrimitives = []string{"tasks-table", "messages-feed", "diary-entry", "mission-timeline", "briefing-note", "memory-quote"}

// uiXSS is a task title that must show as text.
const uiXSS = `<img src=x onerror="document.title='pwned'">`

// seedUI writes three items of each view's data in tenant (one task with
// the XSS title) and returns the id of a briefing note.
func seedUI(t *testing.T, tenant string) (noteID string) {
	t.Helper()
	must := func(name string, args map[string]any) *toolResult {
		t.Helper()
		r := callTool(t, masterToken, tenant, name, args)
		if r.IsError {
			t.Fatalf("%s: %s", name, r.text())
		}
		return r
	}
	for i, title := range []string{"Fix login (#142)", uiXSS, "Ship the release"} {
		must("create_task", map[string]any{"title": title, "assignedTo": "alice", "priority": []string{"high", "urgent", "low"}[i], "createdBy": "alice"})
		must("send_message", map[string]any{"from": "alice", "channel": "bob", "content": fmt.Sprintf("Status update %d: the build is green.", i+1)})
		must("write_diary", map[string]any{"orchestrator": "alice", "date": fmt.Sprintf("2026-05-%02d", 20+i), "content": "Shipped the login fix.",
			"highlights": []string{"M3 on time"}, "blockers": []string{"Waiting for review"}})
		must("create_mission", map[string]any{"name": fmt.Sprintf("fix-issue-%d", 140+i), "project": "studio/ws1", "priority": "high", "pilot": "alice",
			"createdBy": "alice", "status": []string{"plan", "execute", "validate"}[i], "progress": 10 + 40*i})
		note := must("create_briefing_note", map[string]any{"title": fmt.Sprintf("Sprint review %d", i+1), "topic": "sprint-review",
			"participants": []string{"alice", "bob"}, "content": "We agreed to ship on Friday.", "createdBy": "alice"})
		noteID = decode[struct {
			ID string `json:"_id"`
		}](t, note).ID
		must("store_memory", map[string]any{"namespace": "project/acme", "type": "decision", "content": fmt.Sprintf("Decision %d: use SQLite locally.", i+1), "createdBy": "alice"})
	}
	return noteID
}

// uiRow marks one item in each view's markup (server- and client-rendered alike).
var uiRow = map[string]string{
	"tasks-table": "<tr><td>", "messages-feed": `<li class="vp-card">`, "diary-entry": `<article class="vp-card">`,
	"mission-timeline": `<li class="vp-card vp-mission">`, "briefing-note": `<article class="vp-card">`,
	"memory-quote": `<blockquote class="vp-card vp-quote">`,
}

// uiQuery is the query of each view that shows the seeded rows.
var uiQuery = map[string]string{
	"tasks-table": "assignedTo=alice", "messages-feed": "from=alice", "diary-entry": "orchestrator=alice",
	"mission-timeline": "pilot=alice", "briefing-note": "topic=sprint-review", "memory-quote": "namespace=project%2Facme&type=decision",
}

// rpc posts one JSON-RPC request as the master token in tenant and
// returns its raw result.
func rpc(t *testing.T, tenant, method string, params any) json.RawMessage {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rpcID.Add(1), "method": method, "params": params})
	resp, b := post(t, masterToken, body, map[string]string{"X-VP-Tenant": tenant})
	var r struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &r) != nil || r.Error != nil || r.Result == nil {
		t.Fatalf("%s: HTTP %d: %s", method, resp.StatusCode, b)
	}
	return r.Result
}

// readUI reads a view over HTTP and returns its HTML.
func readUI(t *testing.T, tenant, uri string) string {
	t.Helper()
	var res struct {
		Contents []struct {
			URI      string          `json:"uri"`
			MIMEType string          `json:"mimeType"`
			Text     string          `json:"text"`
			Meta     json.RawMessage `json:"_meta"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(rpc(t, tenant, "resources/read", map[string]any{"uri": uri}), &res); err != nil || len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %v %+v", uri, err, res)
	}
	c := res.Contents[0]
	if c.MIMEType != "text/html;profile=mcp-app" || string(c.Meta) != `{"ui":{"csp":{},"prefersBorder":true}}` || !strings.HasPrefix(c.Text, "<!DOCTYPE html>") {
		t.Fatalf("resources/read %s: MIME %q, _meta %s, text %.80q", uri, c.MIMEType, c.Meta, c.Text)
	}
	return c.Text
}

// requireAxe returns axe-core's script from tests/node_modules; without
// it the test skips loudly (fails with CI=true), as requireNode does.
func requireAxe(t *testing.T) []byte {
	t.Helper()
	axe, err := os.ReadFile(filepath.Join(testsDir, "node_modules", "axe-core", "axe.min.js"))
	if err == nil {
		return axe
	}
	nodeclient.Missing(t, "axe-core", err)
	return nil
}

// uiSite serves pages (path → HTML) and scripts (path → JavaScript, such
// as axe-core's).
func uiSite(t *testing.T, scripts map[string][]byte, pages map[string]string) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if js, ok := scripts[r.URL.Path]; ok {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(js)
			return
		}
		page, ok := pages[r.URL.Path]
		if r.URL.Path == "/favicon.ico" {
			w.WriteHeader(http.StatusNoContent) // a 404 would be a console error
			return
		}
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(page))
	}))
	t.Cleanup(site.Close)
	return site
}

// TestUIViewsRenderAccessibly: each view, server-rendered in English and
// French from a template query over seeded data, shows its three rows,
// renders (screenshot), and passes axe-core's WCAG 2 A/AA rules with zero
// violations; a page with known violations proves the check can fail. One
// browser serves every page.
func TestUIViewsRenderAccessibly(t *testing.T) {
	chromium := requireChromium(t)
	axe := requireAxe(t)
	tenant := newTenant("ui")
	seedUI(t, tenant)
	pages := map[string]string{
		"/control": `<!DOCTYPE html><html><head><title>x</title></head><body><p style="color:#aaa;background:#fff">low contrast</p>` +
			`<input type="text"><table><tr><th>h</th></tr></table></body></html>`,
	}
	for _, p := range uiPrimitives {
		for _, lang := range []string{"en", "fr"} {
			pages["/"+p+"/"+lang] = readUI(t, tenant, "ui://vp/v1/"+p+"?"+uiQuery[p]+"&lang="+lang)
		}
	}
	site := uiSite(t, nil, pages)
	b := startCDP(t, chromium)

	b.navigate(site.URL + "/control")
	if control, _ := b.axe(axe); len(control) == 0 {
		t.Fatal("axe found nothing on a page with known violations")
	}

	count := map[string]string{"en": "3 ", "fr": "3 "}
	for _, p := range uiPrimitives {
		for _, lang := range []string{"en", "fr"} {
			t.Run(p+"/"+lang, func(t *testing.T) {
				b.t = t // the subtests run one after another: failures go to the running one
				b.navigate(site.URL + "/" + p + "/" + lang)
				b.screenshot(filepath.Join(workDir, "ui-"+p+"-"+lang+".png"))
				var dom string
				b.eval(`document.documentElement.outerHTML`, &dom)
				if v, passes := b.axe(axe); len(v) > 0 || passes == 0 {
					t.Errorf("axe: %d WCAG 2 A/AA violations (%d passes): %+v", len(v), passes, v)
				}
				if got := strings.Count(dom, uiRow[p]); got != 3 {
					t.Errorf("%d rows shown, want 3:\n%s", got, tail(dom, 4000))
				}
				if !strings.Contains(dom, `<html lang="`+lang+`">`) || !strings.Contains(dom, `aria-live="polite">`+count[lang]) {
					t.Errorf("no lang=%s or no count in the status region:\n%s", lang, tail(dom, 4000))
				}
				if p == "mission-timeline" && strings.Count(dom, `<progress class="vp-progress" max="100" value="`) != 3 {
					t.Errorf("no progress bars:\n%s", tail(dom, 4000))
				}
				if p == "tasks-table" {
					if strings.Contains(dom, "<img") || !strings.Contains(dom, "&lt;img src=x") {
						t.Errorf("the XSS title became markup:\n%s", dom)
					}
					want := map[string]string{"en": `<th scope="col">Assigned to</th>`, "fr": `<th scope="col">Attribué à</th>`}[lang]
					if !strings.Contains(dom, want) {
						t.Errorf("no %s", want)
					}
				}
			})
		}
	}
	b.t = t
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("script errors or CSP refusals in the views: %v", errs)
	}
}
