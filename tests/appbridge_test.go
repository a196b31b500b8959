package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/tests/nodeclient"
)

// appHostPage is the test host: the bundle of clients/apphost.mjs (the
// ext-apps AppBridge) and a place for the views' frames.
const appHostPage = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Test host</title><link rel="icon" href="data:,">
<script src="/apphost.js"></script></head><body><main><h1>Test host</h1><div id="frames"></div></main></body></html>`

// requireAppBridge bundles clients/apphost.mjs with esbuild into a temp
// dir (bundles are never committed) and returns it; without esbuild or
// @modelcontextprotocol/ext-apps in tests/node_modules the test skips
// loudly (fails with CI=true), as requireAxe does.
func requireAppBridge(t *testing.T) []byte {
	t.Helper()
	esbuild := filepath.Join(testsDir, "node_modules", ".bin", "esbuild")
	_, err := os.Stat(filepath.Join(testsDir, "node_modules", "@modelcontextprotocol", "ext-apps", "package.json"))
	if err == nil {
		_, err = os.Stat(esbuild)
	}
	if err != nil {
		nodeclient.Missing(t, "@modelcontextprotocol/ext-apps and esbuild", err)
	}
	out := filepath.Join(t.TempDir(), "apphost.js")
	cmd := exec.Command(esbuild, filepath.Join("clients", "apphost.mjs"), "--bundle", "--minify", "--format=iife",
		"--platform=browser", "--log-level=warning", "--outfile="+out)
	cmd.Dir = testsDir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild clients/apphost.mjs: %v\n%s", err, b)
	}
	js, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// viewState is window.vpHost.state: what the view shows and what its
// bridge saw.
type viewState struct {
	Received    []string `json:"received"` // what the view sent, in order
	Sent        []string `json:"sent"`     // what the host sent
	Sizes       []struct{ Width, Height int }
	Errors      []string `json:"errors"`
	Initialized bool     `json:"initialized"`
	AppInfo     *struct{ Name, Version string }
	InitParams  struct {
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"initParams"`
	Lang, Title, Theme, BodyTheme, Heading, Status, Content, Background string
	Imgs                                                                int
	Cells                                                               []string
	RootWidth, RootHeight, FrameHeight, ScrollHeight                    int
	Teardown                                                            map[string]any `json:"teardown"`
	TeardownError                                                       string         `json:"teardownError"`
}

// The views' backgrounds (view.css) in each theme.
var themeBackground = map[string]string{"light": "rgb(255, 255, 255)", "dark": "rgb(17, 24, 39)"}

// The status line of a shell before any data, and once the tool's
// input has arrived, in each language.
var (
	waitingText = map[string]string{"en": "Waiting for the tool result…", "fr": "En attente du résultat de l’outil…"}
	loadingText = map[string]string{"en": "Loading…", "fr": "Chargement…"}
)

// TestUIAppBridge: each of the six views, named by its tool's
// _meta.ui.resourceUri and read with resources/read, is hosted by the
// AppBridge of @modelcontextprotocol/ext-apps (the host side hosts run,
// bundled from clients/apphost.mjs) in a srcdoc frame under the host's
// default CSP. Through the real bridge the view initializes (protocol
// 2026-01-26) and shows the host's locale and theme at once; shows that the
// tool's input arrived; renders the result of a real call of the tool (as
// text: the XSS title is no markup; text-only and isError results too) or
// the host's cancelling of the call;
// follows a change of locale and theme; reports its content's size, to
// which the host fits the frame; passes axe-core in both themes; and
// answers ui/resource-teardown. No script error or CSP refusal.
func TestUIAppBridge(t *testing.T) {
	chromium := requireChromium(t)
	axe := requireAxe(t)
	bundle := requireAppBridge(t)
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
	callRaw := func(name string, args map[string]any) json.RawMessage {
		return rpc(t, tenant, "tools/call", map[string]any{"name": name, "arguments": args})
	}

	type hostCase struct {
		name, tool string
		args       map[string]any
		result     any    // nil: the tool's result as is
		cancel     string // the host cancels the call with this reason instead
		ctx, ctx2  map[string]any
		rows       int
		want       []string // in ctx's language
		want2      []string // after the change to ctx2
	}
	tasks := map[string]any{"assignedTo": "alice"}
	var textOnly map[string]any
	_ = json.Unmarshal(callRaw("list_tasks", tasks), &textOnly)
	delete(textOnly, "structuredContent")
	frLight, enDark := map[string]any{"locale": "fr-FR", "theme": "light"}, map[string]any{"locale": "en-GB", "theme": "dark"}
	frDark, enLight := map[string]any{"locale": "fr-CA", "theme": "dark"}, map[string]any{"locale": "en-US", "theme": "light"}
	cases := []hostCase{
		{"tasks, structured", "list_tasks", tasks, nil, "", frLight, enDark, 3, []string{"3 tâches", "Attribué à", "À faire"}, []string{"3 tasks", "Assigned to", "To do"}},
		{"tasks, text only", "list_tasks", tasks, textOnly, "", enDark, frLight, 3, []string{"3 tasks", "Assigned to"}, []string{"3 tâches", "Attribué à"}},
		{"tasks, isError", "list_tasks", map[string]any{"status": "nope"}, nil, "", enLight, frDark, 0, []string{`role="alert"`, "status", "Could not read the data:"}, []string{`role="alert"`, "Impossible de lire les données"}},
		{"messages", "list_messages", map[string]any{"from": "alice"}, nil, "", frDark, enLight, 3, []string{"3 messages", "the build is green", "bob", ">De </span>"}, []string{">From </span>"}},
		{"diary", "get_diary", map[string]any{"orchestrator": "alice", "date": "2026-05-20"}, nil, "", enLight, frDark, 1, []string{"1 entry", "Highlights", "Waiting for review"}, []string{"1 entrée", "Points forts", "Blocages"}},
		{"missions", "list_missions", map[string]any{"pilot": "alice"}, nil, "", frDark, enLight, 3, []string{"3 missions", "Planification", `<progress class="vp-progress" max="100" value="50"`}, []string{">Plan<", ">Progress<"}},
		{"briefing", "get_briefing_note", map[string]any{"noteId": noteID}, nil, "", enLight, frDark, 1, []string{"1 note", "sprint-review", `aria-label="Participants"`}, []string{">Sujet </span>"}},
		{"tasks, cancelled", "list_tasks", tasks, nil, "the user stopped it", frDark, enLight, 0, []string{`role="alert"`, "the user stopped it", "Impossible de lire les données"}, []string{"Could not read the data:", "the user stopped it"}},
		{"memories", "list_memories", map[string]any{"namespace": "project/acme", "type": "decision"}, nil, "", frLight, enDark, 3, []string{"3 mémoires", "use SQLite locally"}, []string{"3 memories", ">Namespace </span>"}},
	}
	lang := func(ctx map[string]any) string { return ctx["locale"].(string)[:2] }

	site := uiSite(t, map[string][]byte{"/axe.min.js": axe, "/apphost.js": bundle}, map[string]string{"/host": appHostPage})
	b := startCDP(t, chromium)
	b.navigate(site.URL + "/host")
	b.waitFor("the AppBridge bundle", `typeof window.vpHost === "object"`, 30*time.Second)

	state := func(name string) viewState {
		t.Helper()
		var s viewState
		b.eval(`vpHost.state(`+jsString(name)+`)`, &s)
		return s
	}
	each := func(js func(c hostCase) string) string {
		var all []string
		for _, c := range cases {
			all = append(all, "("+js(c)+")")
		}
		return strings.Join(all, " && ")
	}
	// sized waits until the host has the size of what each view shows now.
	sized := func(phase string) {
		t.Helper()
		b.waitFor("the views' sizes after "+phase, each(func(c hostCase) string {
			return `(s => s.sizes.length > 0 && s.sizes[s.sizes.length-1].height === s.rootHeight)(vpHost.state(` + jsString(c.name) + `))`
		}), 30*time.Second)
	}
	checkView := func(phase string, c hostCase, s viewState, ctx map[string]any, want []string) {
		t.Helper()
		view := viewOf[c.tool]
		if c.tool == "list_memories" {
			view = viewOf["recall"]
		}
		if got := strings.Count(s.Content, uiRow[view]); got != c.rows || s.Lang != lang(ctx) {
			t.Errorf("%s, %s: %d rows in lang %q, want %d in %q:\n%s", c.name, phase, got, s.Lang, c.rows, lang(ctx), s.Content)
		}
		for _, w := range want {
			if !strings.Contains(s.Status+s.Content, w) {
				t.Errorf("%s, %s: no %q in the view:\n%s %s", c.name, phase, w, s.Status, s.Content)
			}
		}
		if th := ctx["theme"].(string); s.Theme != th || s.BodyTheme != th || s.Background != themeBackground[th] {
			t.Errorf("%s, %s: theme %q (body %q, background %s), want %q (%s)", c.name, phase, s.Theme, s.BodyTheme, s.Background, th, themeBackground[th])
		}
		if s.Imgs != 0 {
			t.Errorf("%s, %s: the view has %d <img>: a title became markup", c.name, phase, s.Imgs)
		}
		if view == "tasks-table" && c.rows > 0 {
			got := strings.Join(s.Cells, "|")
			for _, title := range []string{"Fix login (#142)", uiXSS, "Ship the release"} {
				if !strings.Contains(got, title) {
					t.Errorf("%s, %s: no row titled %q in %q", c.name, phase, title, got)
				}
			}
		}
		// The content's size reached the host, which fitted the frame to it.
		n := len(s.Sizes)
		if n == 0 || s.Sizes[n-1].Width != 800 || s.Sizes[n-1].Height != s.RootHeight || s.FrameHeight != s.RootHeight || s.ScrollHeight > s.FrameHeight {
			t.Errorf("%s, %s: sizes %v; the view is %dx%d in a frame %d high (scroll height %d)", c.name, phase, s.Sizes, s.RootWidth, s.RootHeight, s.FrameHeight, s.ScrollHeight)
		}
		if v := axeIn(t, b, c.name); len(v) > 0 {
			t.Errorf("%s, %s: axe-core WCAG 2 A/AA in the hosted view: %v", c.name, phase, v)
		}
	}

	// Initialization: the bridge is connected before the view loads.
	pages := map[string]string{}
	for _, c := range cases {
		view := viewOf[c.tool]
		if c.tool == "list_memories" {
			view = viewOf["recall"] // recall needs the embedder; list_memories has the same items
		}
		if view == "" {
			t.Fatalf("%s has no _meta.ui.resourceUri", c.tool)
		}
		if pages[view] == "" {
			pages[view] = readUI(t, tenant, "ui://vp/v1/"+view)
		}
		b.eval(`vpHost.mount(`+jsString(c.name)+`, `+jsString(pages[view])+`, `+mustJSON(t, c.ctx)+`)`, nil)
	}
	b.waitFor("ui/notifications/initialized from every view", each(func(c hostCase) string { return `vpHost.ready(` + jsString(c.name) + `)` }), 30*time.Second)
	sized("initialization")
	shellHeight := map[string]int{}
	for _, c := range cases {
		s := state(c.name)
		if len(s.Received) < 2 || s.Received[0] != "ui/initialize" || s.Received[1] != "ui/notifications/initialized" {
			t.Errorf("%s: the view sent %v, want ui/initialize then ui/notifications/initialized", c.name, s.Received)
		}
		if s.InitParams.ProtocolVersion != "2026-01-26" || s.AppInfo == nil || !strings.HasPrefix(s.AppInfo.Name, "vantagepeers-") {
			t.Errorf("%s: ui/initialize with protocol %q, app %+v", c.name, s.InitParams.ProtocolVersion, s.AppInfo)
		}
		l := lang(c.ctx)
		if s.Lang != l || s.Status != waitingText[l] || s.Theme != c.ctx["theme"] {
			t.Errorf("%s: after initialization lang %q, theme %q, status %q; want the host's %q, %q, %q", c.name, s.Lang, s.Theme, s.Status, l, c.ctx["theme"], waitingText[l])
		}
		shellHeight[c.name] = s.RootHeight
	}

	// Tool input, then the tool's result.
	for _, c := range cases {
		b.eval(`vpHost.toolInput(`+jsString(c.name)+`, `+mustJSON(t, c.args)+`)`, nil)
	}
	b.waitFor("the views to show that the input arrived", each(func(c hostCase) string {
		return `vpHost.state(` + jsString(c.name) + `).status === ` + jsString(loadingText[lang(c.ctx)])
	}), 30*time.Second)
	for _, c := range cases {
		if c.cancel != "" {
			b.eval(`vpHost.toolCancelled(`+jsString(c.name)+`, `+jsString(c.cancel)+`)`, nil)
			continue
		}
		res := c.result
		if res == nil {
			res = callRaw(c.tool, c.args)
		}
		b.eval(`vpHost.toolResult(`+jsString(c.name)+`, `+mustJSON(t, res)+`)`, nil)
	}
	b.waitFor("the views to render the results", each(func(c hostCase) string {
		return `vpHost.state(` + jsString(c.name) + `).status !== ` + jsString(loadingText[lang(c.ctx)])
	}), 30*time.Second)
	sized("the tool result")
	for _, c := range cases {
		s := state(c.name)
		t.Logf("%s: sent %v, sizes %v", c.name, s.Received, s.Sizes)
		checkView("tool result", c, s, c.ctx, c.want)
		if s.RootHeight <= shellHeight[c.name] {
			t.Errorf("%s: the view is %d high with its data, %d as a shell: its size did not follow its content", c.name, s.RootHeight, shellHeight[c.name])
		}
	}

	// A change of the host's locale and theme.
	for _, c := range cases {
		b.eval(`vpHost.setContext(`+jsString(c.name)+`, `+mustJSON(t, c.ctx2)+`)`, nil)
	}
	b.waitFor("the views to follow the host context", each(func(c hostCase) string {
		return `(s => s.lang === ` + jsString(lang(c.ctx2)) + ` && s.theme === ` + jsString(c.ctx2["theme"].(string)) + `)(vpHost.state(` + jsString(c.name) + `))`
	}), 30*time.Second)
	sized("the host context change")
	for _, c := range cases {
		s := state(c.name)
		checkView("host context change", c, s, c.ctx2, c.want2)
		if !strings.Contains(s.Sent[len(s.Sent)-1], "ui/notifications/host-context-changed") {
			t.Errorf("%s: the host sent %v", c.name, s.Sent)
		}
	}

	// Teardown: each view answers before its frame goes.
	for _, c := range cases {
		var s viewState
		b.eval(`vpHost.teardown(`+jsString(c.name)+`, 5000)`, &s)
		if s.TeardownError != "" || s.Teardown == nil || s.Received[len(s.Received)-1] != "response" || s.Sent[len(s.Sent)-1] != "ui/resource-teardown" {
			t.Errorf("%s: ui/resource-teardown: answer %v, error %q; the view sent %v", c.name, s.Teardown, s.TeardownError, s.Received)
		}
		if len(s.Errors) > 0 {
			t.Errorf("%s: the bridge reported %v", c.name, s.Errors)
		}
	}
	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("script errors or CSP refusals in the host or the views: %v", errs)
	}
}

// axeIn runs axe-core's WCAG 2 A and AA rules inside a hosted view.
func axeIn(t *testing.T, b *cdp, name string) []string {
	t.Helper()
	var r struct {
		Violations []string `json:"violations"`
		Passes     int      `json:"passes"`
	}
	b.eval(`vpHost.axe(`+jsString(name)+`)`, &r)
	if r.Passes == 0 {
		return []string{"axe-core passed no rule: it did not run"}
	}
	return r.Violations
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
