package tests

import (
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The MCP Apps views (platform spec §15.2) end to end: read from
// `vantagepeers serve` over HTTP with resources/read, rendered by headless
// Chromium from a local test server, checked with axe-core, and driven by a
// hand-written host that plays the host side of the ui/* postMessage
// bridge (SEP-1865) as Claude or VS Code do.

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

// axeRunner runs axe-core's WCAG 2 A and AA rules on the page once it has
// loaded and writes the result into <pre id="axe-result">, which
// --dump-dom then shows (--virtual-time-budget lets the promise settle).
const axeRunner = `<script src="/axe.min.js"></script><script>
axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}}).then(function (r) {
  var out = document.createElement('pre'); out.id = 'axe-result';
  out.textContent = JSON.stringify({violations: r.violations.map(function (v) {
    return {id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(function (n) { return n.html; })};
  }), passes: r.passes.length});
  document.body.appendChild(out);
}, function (e) { var out = document.createElement('pre'); out.id = 'axe-result'; out.textContent = 'ERROR ' + e; document.body.appendChild(out); });
</script>`

// requireAxe returns axe-core's script from tests/node_modules; without
// it the test skips loudly (fails with CI=true), as requireNode does.
func requireAxe(t *testing.T) []byte {
	t.Helper()
	axe, err := os.ReadFile(filepath.Join(testsDir, "node_modules", "axe-core", "axe.min.js"))
	if err == nil {
		return axe
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("axe-core is required in CI (CI=true): %v — run scripts/test-deps.sh", err)
	}
	msg := "\n" +
		"################################################################\n" +
		"## SKIPPING %s: the MCP Apps view tests need axe-core in\n" +
		"## tests/node_modules (%v).\n" +
		"## Run scripts/test-deps.sh clients to install it.\n" +
		"################################################################"
	fmt.Fprintf(os.Stderr, msg+"\n", t.Name(), err)
	t.Skipf(msg, t.Name(), err)
	return nil
}

// uiSite serves pages (path → HTML) and axe-core's script.
func uiSite(t *testing.T, axe []byte, pages map[string]string) *httptest.Server {
	t.Helper()
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/axe.min.js" {
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(axe)
			return
		}
		page, ok := pages[r.URL.Path]
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

type axeResult struct {
	Violations []struct {
		ID, Impact, Help string
		Nodes            []string
	} `json:"violations"`
	Passes int `json:"passes"`
}

var axeResultRe = regexp.MustCompile(`(?s)<pre id="axe-result">(.*?)</pre>`)

// runAxe loads url in Chromium and returns the dumped DOM and axe's result.
func runAxe(t *testing.T, chromium, url string) (string, axeResult) {
	t.Helper()
	dom := runChromium(t, chromium, "--virtual-time-budget=20000", "--dump-dom", url)
	m := axeResultRe.FindStringSubmatch(dom)
	var res axeResult
	if m == nil || json.Unmarshal([]byte(html.UnescapeString(m[1])), &res) != nil {
		t.Fatalf("%s: no axe result in the page:\n%s", url, tail(dom, 3000))
	}
	return dom, res
}

// TestUIViewsRenderAccessibly: each view, server-rendered in English and
// French from a template query over seeded data, shows its three rows,
// renders (screenshot), and passes axe-core's WCAG 2 A/AA rules with zero
// violations; a page with known violations proves the check can fail.
func TestUIViewsRenderAccessibly(t *testing.T) {
	chromium := requireChromium(t)
	axe := requireAxe(t)
	tenant := newTenant("ui")
	seedUI(t, tenant)
	pages := map[string]string{
		"/control": `<!DOCTYPE html><html><head><title>x</title></head><body><p style="color:#aaa;background:#fff">low contrast</p>` +
			`<input type="text"><table><tr><th>h</th></tr></table>` + axeRunner + `</body></html>`,
	}
	for _, p := range uiPrimitives {
		for _, lang := range []string{"en", "fr"} {
			page := readUI(t, tenant, "ui://vp/v1/"+p+"?"+uiQuery[p]+"&lang="+lang)
			pages["/"+p+"/"+lang] = page
			pages["/"+p+"/"+lang+"/axe"] = strings.Replace(page, "</body>", axeRunner+"</body>", 1)
		}
	}
	site := uiSite(t, axe, pages)

	_, control := runAxe(t, chromium, site.URL+"/control")
	if len(control.Violations) == 0 {
		t.Fatalf("axe found nothing on a page with known violations: %+v", control)
	}

	count := map[string]string{"en": "3 ", "fr": "3 "}
	for _, p := range uiPrimitives {
		for _, lang := range []string{"en", "fr"} {
			t.Run(p+"/"+lang, func(t *testing.T) {
				shot := filepath.Join(workDir, "ui-"+p+"-"+lang+".png")
				runChromium(t, chromium, "--screenshot="+shot, "--window-size=900,1100", "--hide-scrollbars", "--virtual-time-budget=5000", site.URL+"/"+p+"/"+lang)
				checkScreenshot(t, shot)
				dom, res := runAxe(t, chromium, site.URL+"/"+p+"/"+lang+"/axe")
				if len(res.Violations) > 0 || res.Passes == 0 {
					t.Errorf("axe: %d WCAG 2 A/AA violations (%d passes): %+v", len(res.Violations), res.Passes, res.Violations)
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
}

// hostPage embeds views in iframes and plays the host side of the bridge:
// it answers ui/initialize with a host context, waits for
// ui/notifications/initialized, sends tool-input then tool-result, records
// what each view sent, runs axe-core inside each rendered view, and writes
// it all into <pre id="host-result">.
const hostPage = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Test host</title></head><body>
<script type="application/json" id="cases">%s</script>
<div id="frames"></div>
<script>
var cases = JSON.parse(document.getElementById('cases').textContent);
var out = [];
var done = 0;
cases.forEach(function (c, i) {
  var rec = {name: c.name, messages: [], initParams: null, sizes: []};
  out.push(rec);
  var f = document.createElement('iframe');
  f.setAttribute('sandbox', 'allow-scripts allow-same-origin');
  f.setAttribute('title', c.name);
  f.style.width = '800px'; f.style.height = '600px';
  window.addEventListener('message', function (ev) {
    if (ev.source !== f.contentWindow) return;
    var m = ev.data;
    rec.messages.push(m.method || 'response');
    if (m.method === 'ui/initialize') {
      rec.initParams = m.params;
      f.contentWindow.postMessage({jsonrpc: '2.0', id: m.id, result: {protocolVersion: '2026-01-26',
        hostInfo: {name: 'vp-test-host', version: '1'}, hostCapabilities: {}, hostContext: c.hostContext}}, '*');
    } else if (m.method === 'ui/notifications/initialized') {
      f.contentWindow.postMessage({jsonrpc: '2.0', method: 'ui/notifications/tool-input', params: {arguments: c.arguments}}, '*');
      f.contentWindow.postMessage({jsonrpc: '2.0', method: 'ui/notifications/tool-result', params: c.result}, '*');
      setTimeout(function () { inspect(f, rec); }, 200);
    } else if (m.method === 'ui/notifications/size-changed') {
      rec.sizes.push(m.params);
    }
  });
  f.src = c.src;
  document.getElementById('frames').appendChild(f);
});
function inspect(f, rec) {
  var d = f.contentDocument;
  rec.lang = d.documentElement.lang;
  rec.status = d.getElementById('vp-status').textContent;
  rec.content = d.getElementById('vp-content').innerHTML;
  rec.imgs = d.querySelectorAll('img').length;
  rec.cells = Array.prototype.map.call(d.querySelectorAll('tbody td:first-child'), function (td) { return td.textContent; });
  var s = d.createElement('script');
  s.src = '/axe.min.js';
  s.onload = function () {
    f.contentWindow.axe.run(d, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}}).then(function (r) {
      rec.axeViolations = r.violations.map(function (v) { return v.id + ': ' + v.help + ' ' + v.nodes.map(function (n) { return n.html; }).join(' '); });
      rec.axePasses = r.passes.length;
      finish();
    }, function (e) { rec.axeError = String(e); finish(); });
  };
  d.body.appendChild(s);
}
function finish() {
  if (++done < cases.length) return;
  var pre = document.createElement('pre'); pre.id = 'host-result'; pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
}
</script></body></html>`

type hostRecord struct {
	Name       string           `json:"name"`
	Messages   []string         `json:"messages"`
	InitParams map[string]any   `json:"initParams"`
	Sizes      []map[string]int `json:"sizes"`
	Lang       string           `json:"lang"`
	Status     string           `json:"status"`
	Content    string           `json:"content"`
	Imgs       int              `json:"imgs"`
	Cells      []string         `json:"cells"`
	AxeViol    []string         `json:"axeViolations"`
	AxePasses  int              `json:"axePasses"`
	AxeError   string           `json:"axeError"`
}

// TestUIHostBridge (a faithful fake of an MCP Apps host, SEP-1865
// 2026-01-26): each view named by a tool's _meta.ui.resourceUri, read
// with resources/read, is embedded by a host page that feeds it the result
// of a real call of that tool; the view initializes, renders the rows (as
// text: the XSS title is no markup) in the host's locale, reports its
// content size and passes axe-core. Text-only and isError results too.
func TestUIHostBridge(t *testing.T) {
	chromium := requireChromium(t)
	axe := requireAxe(t)
	tenant := newTenant("uihost")
	noteID := seedUI(t, tenant)

	var tools struct {
		Tools []struct {
			Name string `json:"name"`
			Meta struct {
				UI struct {
					ResourceURI string `json:"resourceUri"`
				} `json:"ui"`
			} `json:"_meta"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(rpc(t, tenant, "tools/list", map[string]any{}), &tools); err != nil {
		t.Fatal(err)
	}
	viewOf := map[string]string{}
	for _, tl := range tools.Tools {
		viewOf[tl.Name] = strings.TrimPrefix(tl.Meta.UI.ResourceURI, "ui://vp/v1/")
	}
	pages := map[string]string{}
	for _, p := range uiPrimitives {
		pages["/view/"+p] = readUI(t, tenant, "ui://vp/v1/"+p)
	}
	callRaw := func(name string, args map[string]any) json.RawMessage {
		return rpc(t, tenant, "tools/call", map[string]any{"name": name, "arguments": args})
	}

	type hostCase struct {
		name, tool string
		args       map[string]any
		result     any // nil: the tool's result as is
		ctx        map[string]any
		rows       int
		lang       string
		want       []string
	}
	tasks := map[string]any{"assignedTo": "alice"}
	var textOnly map[string]any
	_ = json.Unmarshal(callRaw("list_tasks", tasks), &textOnly)
	delete(textOnly, "structuredContent")
	fr, en := map[string]any{"locale": "fr-FR", "theme": "light"}, map[string]any{"locale": "en-GB", "theme": "dark"}
	frDark := map[string]any{"locale": "fr-CA", "theme": "dark"}
	cases := []hostCase{
		{"tasks, structured, fr", "list_tasks", tasks, nil, fr, 3, "fr", []string{"3 tâches", "Attribué à", "À faire"}},
		{"tasks, text only, dark", "list_tasks", tasks, textOnly, en, 3, "en", []string{"3 tasks", "Assigned to"}},
		{"tasks, isError", "list_tasks", map[string]any{"status": "nope"}, nil, en, 0, "en", []string{`role="alert"`, "status"}},
		{"messages", "list_messages", map[string]any{"from": "alice"}, nil, frDark, 3, "fr", []string{"3 messages", "the build is green", "bob"}},
		{"diary", "get_diary", map[string]any{"orchestrator": "alice", "date": "2026-05-20"}, nil, en, 1, "en", []string{"Highlights", "Waiting for review"}},
		{"missions", "list_missions", map[string]any{"pilot": "alice"}, nil, frDark, 3, "fr", []string{"3 missions", "Planification", `<progress class="vp-progress" max="100" value="50"`}},
		{"briefing", "get_briefing_note", map[string]any{"noteId": noteID}, nil, en, 1, "en", []string{"sprint-review", `aria-label="Participants"`}},
		{"memories", "list_memories", map[string]any{"namespace": "project/acme", "type": "decision"}, nil, fr, 3, "fr", []string{"3 mémoires", "use SQLite locally"}},
	}
	var js []map[string]any
	for _, c := range cases {
		view := viewOf[c.tool]
		if c.tool == "list_memories" {
			view = viewOf["recall"] // recall needs the embedder; list_memories has the same items
		}
		if view == "" {
			t.Fatalf("%s has no _meta.ui.resourceUri", c.tool)
		}
		res := c.result
		if res == nil {
			res = callRaw(c.tool, c.args)
		}
		js = append(js, map[string]any{"name": c.name, "src": "/view/" + view, "arguments": c.args, "result": res, "hostContext": c.ctx})
	}
	cj, _ := json.Marshal(js)
	pages["/host"] = fmt.Sprintf(hostPage, strings.ReplaceAll(string(cj), "</", `<\/`))
	site := uiSite(t, axe, pages)
	dom := runChromium(t, chromium, "--virtual-time-budget=30000", "--dump-dom", site.URL+"/host")
	m := regexp.MustCompile(`(?s)<pre id="host-result">(.*?)</pre>`).FindStringSubmatch(dom)
	var recs []hostRecord
	if m == nil || json.Unmarshal([]byte(html.UnescapeString(m[1])), &recs) != nil || len(recs) != len(cases) {
		t.Fatalf("no host result:\n%s", tail(dom, 4000))
	}
	for i, r := range recs {
		c := cases[i]
		view := strings.TrimPrefix(js[i]["src"].(string), "/view/")
		t.Logf("%s: messages %v, lang %s, status %q, sizes %v, axe %d passes", r.Name, r.Messages, r.Lang, r.Status, r.Sizes, r.AxePasses)
		if len(r.Messages) < 2 || r.Messages[0] != "ui/initialize" || r.Messages[1] != "ui/notifications/initialized" {
			t.Errorf("%s: the view sent %v, want ui/initialize then ui/notifications/initialized", r.Name, r.Messages)
		}
		if r.InitParams["protocolVersion"] != "2026-01-26" {
			t.Errorf("%s: ui/initialize params %v", r.Name, r.InitParams)
		}
		// The content's height, not the 600px frame's.
		if n := len(r.Sizes); n == 0 || r.Sizes[n-1]["height"] < 80 || r.Sizes[n-1]["height"] >= 600 || r.Sizes[n-1]["width"] != 800 {
			t.Errorf("%s: ui/notifications/size-changed %v, want the content's height", r.Name, r.Sizes)
		}
		if r.AxeError != "" || len(r.AxeViol) > 0 || r.AxePasses == 0 {
			t.Errorf("%s: axe in the rendered view: %v %v", r.Name, r.AxeError, r.AxeViol)
		}
		if r.Imgs != 0 {
			t.Errorf("%s: the view has %d <img>: a title became markup", r.Name, r.Imgs)
		}
		if got := strings.Count(r.Content, uiRow[view]); got != c.rows || r.Lang != c.lang {
			t.Errorf("%s: %d rows in lang %q, want %d in %q:\n%s", r.Name, got, r.Lang, c.rows, c.lang, r.Content)
		}
		for _, w := range c.want {
			if !strings.Contains(r.Status+r.Content, w) {
				t.Errorf("%s: no %q in the view:\n%s", r.Name, w, r.Content)
			}
		}
		if view == "tasks-table" && c.rows > 0 {
			got := strings.Join(r.Cells, "|")
			for _, title := range []string{"Fix login (#142)", uiXSS, "Ship the release"} {
				if !strings.Contains(got, title) {
					t.Errorf("%s: no row titled %q in %q", r.Name, title, got)
				}
			}
		}
	}
}
