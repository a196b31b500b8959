package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestPacerelleWebApp: the person's web app in headless Chromium against
// `vantagepeers serve` and the real bridge (functions/pacerelle, built,
// driven over stdio by the Go MCP SDK client): the browser pairs (its code
// is the bridge's), sends a request the bridge reads in clear, sees the
// agent's reply and a confirm widget arrive live (doorbell), answers it,
// and the bridge shows the answer on widget://pending. Every page is
// screenshotted and passes axe-core's WCAG 2 A/AA rules with no violation,
// in English and in French, with no script error or CSP refusal; the
// relay's storage never holds the request, reply or widget in clear.
func TestPacerelleWebApp(t *testing.T) {
	chromium := requireChromium(t)
	axe := requireAxe(t)
	s, err := startServer(t.TempDir(), map[string]string{"VP_MASTER_TOKEN": masterToken})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.stop(10 * time.Second) })
	base := "http://" + s.addr
	agentToken := createTokenOn(t, s, "default", "alice")
	personToken := createTokenOn(t, s, "default", "bob")

	bridge := startBridge(t, base, agentToken)
	ctx := context.Background()
	waitBridge(t, bridge, func(st map[string]any) bool { return st["connection"] == "connected" })

	b := startCDP(t, chromium)
	shots := filepath.Join(workDir, "pacerelle-web") // kept with VP_E2E_KEEP=1
	_ = os.MkdirAll(shots, 0o755)
	check := func(name string) {
		t.Helper()
		b.screenshot(filepath.Join(shots, name+".png"))
		v, passes := b.axe(axe)
		if len(v) > 0 || passes == 0 {
			t.Errorf("%s: axe-core WCAG 2 A/AA: %d passes, violations %+v", name, passes, v)
		}
	}

	for _, lang := range []string{"en", "fr"} {
		b.navigate(base + "/pacerelle/app/?lang=" + lang)
		check("home-" + lang)
	}

	// Pair.
	b.navigate(base + "/pacerelle/app/pair?lang=en")
	check("pair-form-en")
	b.eval(`(() => { const set = (id, v) => { document.getElementById(id).value = v; };
		set("pc-person", "bob"); set("pc-agent", "alice"); set("pc-device", "chromium");
		set("pc-token", `+jsString(personToken)+`);
		document.getElementById("pc-start").click(); return true; })()`, nil)
	b.waitFor("the pairing code", `!document.getElementById("pc-code-box").hidden && /^\d{6}$/.test(document.getElementById("pc-code").textContent)`, 30*time.Second)
	check("pair-code-en")
	var code string
	b.eval(`document.getElementById("pc-code").textContent`, &code)
	b.eval(`document.getElementById("pc-confirm").click(), true`, nil)
	b.waitFor("paired", `document.getElementById("pc-open-chat") !== null`, 30*time.Second)
	check("pair-done-en")

	// A request, the reply and a confirm widget.
	const secret = "Publish the quarterly report, marker 7f3a9c"
	b.navigate(base + "/pacerelle/app/chat?lang=en")
	b.waitFor("the chat", `document.body.dataset.ready === "true"`, 30*time.Second)
	check("chat-empty-en")
	var conv string
	b.eval(`document.getElementById("pc-conversation").value`, &conv)
	b.eval(`document.getElementById("pc-text").value = `+jsString(secret)+`, document.getElementById("pc-send-button").click(), true`, nil)
	b.waitFor("the request shown", `document.querySelector('#pc-messages li[data-kind="request"]') !== null`, 30*time.Second)

	req := waitMessage(t, bridge, "request")
	if req["text"] != secret || req["from"] != "person:bob" || req["conversationId"] != conv {
		t.Fatalf("the bridge got %v", req)
	}
	// The bridge pins the device when its first envelope arrives, after
	// verifying the browser's signed confirmation.
	st := waitBridge(t, bridge, func(st map[string]any) bool { p, _ := st["pairings"].([]any); return len(p) == 1 })
	p := st["pairings"].([]any)[0].(map[string]any)
	if p["code"] != code || p["person"] != "person:bob" || p["device"] != "chromium" {
		t.Fatalf("the bridge pinned %v; the browser showed code %s", p, code)
	}
	callBridge(t, bridge, "send_message", map[string]any{"text": "Done: <b>report</b> published & announced", "sourceMessageId": req["id"]})
	widget := `{"type":"widget.standard","v":1,"id":"confirm-1","kind":"confirm","spec":{"title":"Also send it to the board?"}}`
	callBridge(t, bridge, "send_widget", map[string]any{"widgetJson": widget, "sourceMessageId": req["id"]})
	b.waitFor("the reply and the widget, live", `document.querySelectorAll('#pc-messages li[data-kind="reply"], #pc-messages li[data-kind="widget"] button').length === 3`, 30*time.Second)
	var replyText string
	b.eval(`document.querySelector('#pc-messages li[data-kind="reply"]').textContent`, &replyText)
	if !strings.Contains(replyText, "Done: <b>report</b> published & announced") {
		t.Errorf("the reply shows %q (it must be shown as text)", replyText)
	}
	var bold int
	b.eval(`document.querySelectorAll('#pc-messages b').length`, &bold)
	if bold != 0 {
		t.Error("the reply's markup was rendered as HTML")
	}
	check("chat-widget-en")
	var widgetMsg string
	b.eval(`document.querySelector('#pc-messages li[data-kind="widget"]').dataset.id`, &widgetMsg)
	b.eval(`document.querySelector('#pc-messages li[data-kind="widget"] button[data-answer="true"]').click(), true`, nil)
	b.waitFor("the answer shown", `document.querySelector('.pc-widget-answer') !== null`, 30*time.Second)
	check("chat-answered-en")

	var pending struct {
		Pending *struct {
			Kind     string          `json:"kind"`
			WidgetID string          `json:"widgetId"`
			Value    json.RawMessage `json:"value"`
			ReplyTo  string          `json:"replyToMessageId"`
		} `json:"pending"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := bridge.ReadResource(ctx, &mcp.ReadResourceParams{URI: "widget://pending"})
		if err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(res.Contents[0].Text), &pending)
		if pending.Pending != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("widget://pending never showed the answer")
		}
		callBridge(t, bridge, "wait_for_messages", map[string]any{"timeoutMs": 1000})
	}
	if pending.Pending.Kind != "widget_response" || pending.Pending.WidgetID != "confirm-1" || string(pending.Pending.Value) != `{"confirmed":true}` || pending.Pending.ReplyTo != widgetMsg {
		t.Errorf("widget://pending = %+v %s", pending.Pending, pending.Pending.Value)
	}

	// French: the same pages, the conversation read back from IndexedDB.
	b.navigate(base + "/pacerelle/app/pair?lang=fr")
	check("pair-form-fr")
	b.navigate(base + "/pacerelle/app/chat?lang=fr")
	b.waitFor("the chat (fr)", `document.body.dataset.ready === "true" && document.querySelectorAll("#pc-messages li").length === 3`, 30*time.Second)
	var who string
	b.eval(`document.querySelector(".pc-msg-who").textContent + "|" + document.querySelector(".pc-widget-answer").textContent`, &who)
	if who != "Vous|Réponse : Oui" {
		t.Errorf("French chat shows %q", who)
	}
	check("chat-fr")

	// A pairing (in French) whose codes the person says differ trusts
	// nothing: no second device is kept. Another person: the relay never
	// lets a start replace bob's confirmed pairing with alice.
	carolToken := createTokenOn(t, s, "default", "carol")
	b.navigate(base + "/pacerelle/app/pair?lang=fr")
	b.eval(`(() => { const set = (id, v) => { document.getElementById(id).value = v; };
		set("pc-person", "carol"); set("pc-agent", "alice"); set("pc-device", "chromium-2");
		set("pc-token", `+jsString(carolToken)+`);
		document.getElementById("pc-start").click(); return true; })()`, nil)
	b.waitFor("the pairing code (fr)", `!document.getElementById("pc-code-box").hidden && /^\d{6}$/.test(document.getElementById("pc-code").textContent)`, 30*time.Second)
	check("pair-code-fr")
	b.eval(`document.getElementById("pc-reject").click(), true`, nil)
	b.waitFor("the refusal", `document.getElementById("pc-status").classList.contains("pc-error")`, 30*time.Second)
	check("pair-rejected-fr")
	var kept int
	b.eval(`new Promise((ok, ko) => { const r = indexedDB.open("pacerelle", 1); r.onerror = ko;
		r.onsuccess = () => { const q = r.result.transaction("devices").objectStore("devices").count(); q.onsuccess = () => ok(q.result); q.onerror = ko; }; })`, &kept)
	if kept != 1 {
		t.Errorf("after a refused pairing the browser keeps %d devices, want 1", kept)
	}

	// Figures: the browser's cryptography, timed in this Chromium.
	var perf struct {
		IdentityMs, SealMs, OpenMs float64
		OK                         bool
	}
	b.eval(`(async () => { const pcr = await import("/pacerelle/app/static/pcr.js");
		const t0 = performance.now(); const me = await pcr.newIdentity("person:x", "d");
		const t1 = performance.now();
		const env = await pcr.seal(me, {to: ["person:x"], conversation: "c", messageId: "m", listVersion: 1, sentAtMs: Date.now()}, [me.device], new Uint8Array(4096));
		const t2 = performance.now();
		const body = await pcr.open(me, {"person:x": {version: 1, devices: [me.device]}}, new Set(), pcr.decodeEnvelope(pcr.encodeEnvelope(env)));
		const t3 = performance.now();
		return {IdentityMs: t1 - t0, SealMs: t2 - t1, OpenMs: t3 - t2, OK: body.length === 4096}; })()`, &perf)
	if !perf.OK {
		t.Error("the browser did not open its own envelope")
	}
	t.Logf("in Chromium: device identity %.1f ms, seal 4 KiB for one device %.1f ms, open %.1f ms", perf.IdentityMs, perf.SealMs, perf.OpenMs)

	if errs := b.pageErrors(); len(errs) > 0 {
		t.Errorf("the pages logged errors: %v", errs)
	}
	// The relay stored envelopes only.
	_ = filepath.WalkDir(s.dataDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		raw, _ := os.ReadFile(path)
		for _, plain := range []string{secret, "marker 7f3a9c", "quarterly report", "published & announced", "Also send it to the board", `"confirmed"`} {
			if bytes.Contains(raw, []byte(plain)) {
				t.Errorf("%s holds %q in clear", path, plain)
			}
		}
		return nil
	})
}

// startBridge builds and starts the Pacerelle bridge for agent alice,
// connected over stdio with the Go MCP SDK client.
func startBridge(t *testing.T, base, token string) *mcp.ClientSession {
	t.Helper()
	bin := filepath.Join(workDir, "pacerelle-bridge")
	if _, err := os.Stat(bin); err != nil {
		build := exec.Command("go", "build", "-o", bin, "./functions/pacerelle")
		build.Dir = repoRoot
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./functions/pacerelle: %v\n%s", err, out)
		}
	}
	cmd := exec.Command(bin)
	cmd.Env = childEnv(map[string]string{"PACERELLE_AGENT_ID": "alice", "PACERELLE_AGENT_TOKEN": token,
		"PACERELLE_BASE_URL": base, "PACERELLE_STORE_ROOT": t.TempDir()})
	logf, _ := os.Create(filepath.Join(t.TempDir(), "bridge.log"))
	cmd.Stderr = logf
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "pacerelle-web-e2e", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("bridge log:\n%s", tail(string(b), 4000))
		}
	})
	return cs
}

func callBridge(t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		t.Fatalf("%s: %s", tool, text)
	}
	var out map[string]any
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		t.Fatalf("%s: %s: %v", tool, text, err)
	}
	return out
}

func waitBridge(t *testing.T, cs *mcp.ClientSession, ok func(map[string]any) bool) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := callBridge(t, cs, "get_status", nil)
		if ok(st) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("bridge status: %v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitMessage waits for the bridge's first message of kind.
func waitMessage(t *testing.T, cs *mcp.ClientSession, kind string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		page := callBridge(t, cs, "wait_for_messages", map[string]any{"timeoutMs": 2000})
		msgs, _ := page["messages"].([]any)
		for _, m := range msgs {
			if mm := m.(map[string]any); mm["kind"] == kind {
				return mm
			}
		}
	}
	t.Fatalf("the bridge got no %s", kind)
	return nil
}
