package tests

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// cdp drives one page of headless Chromium over the DevTools protocol
// (--remote-debugging-port): navigate, evaluate, screenshot. It records
// the page's exceptions and console errors (a CSP refusal is one).
type cdp struct {
	t      *testing.T
	conn   *websocket.Conn
	mu     sync.Mutex
	next   int
	wait   map[int]chan cdpReply
	errors []string
}

type cdpReply struct {
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Message string `json:"message"`
	} `json:"error"`
}

var devtoolsRe = regexp.MustCompile(`DevTools listening on (ws://\S+)`)

// startCDP starts Chromium with a fresh profile and connects to its
// first page; everything is stopped at the end of the test.
func startCDP(t *testing.T, chromium string) *cdp {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	// The profile is removed here rather than by t.TempDir: Chromium's
	// helper processes outlive the browser for a moment and were still
	// writing into it when the test's cleanup removed it (CI met
	// "directory not empty"). The browser runs in its own process group,
	// which the cleanup kills whole.
	profile, err := os.MkdirTemp("", "vp-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage",
		"--remote-debugging-port=0", "--user-data-dir="+profile, "--window-size=1000,1200", "about:blank")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		for try := 0; ; try++ {
			err := os.RemoveAll(profile)
			if err == nil || try == 20 {
				if err != nil {
					t.Errorf("removing the browser profile: %v", err)
				}
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := devtoolsRe.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	var browserWS string
	select {
	case browserWS = <-found:
	case <-time.After(30 * time.Second):
		t.Fatal("chromium printed no DevTools address")
	}
	host, _, _ := strings.Cut(strings.TrimPrefix(browserWS, "ws://"), "/")
	var targets []struct{ Type, WebSocketDebuggerURL string }
	for try := 0; ; try++ {
		resp, err := http.Get("http://" + host + "/json/list")
		if err == nil {
			err = json.NewDecoder(resp.Body).Decode(&targets)
			resp.Body.Close()
		}
		if err == nil && len(targets) > 0 {
			break
		}
		if try > 50 {
			t.Fatalf("DevTools targets: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	var pageWS string
	for _, tg := range targets {
		if tg.Type == "page" {
			pageWS = tg.WebSocketDebuggerURL
		}
	}
	conn, _, err := websocket.Dial(ctx, pageWS, nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	c := &cdp{t: t, conn: conn, wait: map[int]chan cdpReply{}}
	go c.read(ctx)
	c.call("Runtime.enable", nil)
	c.call("Log.enable", nil)
	c.call("Page.enable", nil)
	c.call("Emulation.setDeviceMetricsOverride", map[string]any{"width": 1000, "height": 1200, "deviceScaleFactor": 1, "mobile": false})
	return c
}

func (c *cdp) read(ctx context.Context) {
	for {
		_, b, err := c.conn.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			ID     int             `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			cdpReply
		}
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		c.mu.Lock()
		switch {
		case m.ID != 0:
			if ch := c.wait[m.ID]; ch != nil {
				ch <- m.cdpReply
				delete(c.wait, m.ID)
			}
		case m.Method == "Runtime.exceptionThrown":
			c.errors = append(c.errors, "exception: "+string(m.Params))
		case m.Method == "Log.entryAdded" && strings.Contains(string(m.Params), `"level":"error"`):
			c.errors = append(c.errors, "log: "+string(m.Params))
		}
		c.mu.Unlock()
	}
}

func (c *cdp) call(method string, params any) json.RawMessage {
	c.t.Helper()
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan cdpReply, 1)
	c.wait[id] = ch
	c.mu.Unlock()
	b, _ := json.Marshal(map[string]any{"id": id, "method": method, "params": params})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, b); err != nil {
		c.t.Fatalf("cdp %s: %v", method, err)
	}
	select {
	case r := <-ch:
		if r.Error != nil {
			c.t.Fatalf("cdp %s: %s", method, r.Error.Message)
		}
		return r.Result
	case <-ctx.Done():
		c.t.Fatalf("cdp %s: no answer", method)
	}
	return nil
}

// eval runs js (awaiting a promise) and decodes its value into out.
func (c *cdp) eval(js string, out any) {
	c.t.Helper()
	res := c.call("Runtime.evaluate", map[string]any{"expression": js, "awaitPromise": true, "returnByValue": true})
	var r struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text      string `json:"text"`
			Exception struct {
				Description string `json:"description"`
			} `json:"exception"`
		} `json:"exceptionDetails"`
	}
	_ = json.Unmarshal(res, &r)
	if r.ExceptionDetails != nil {
		c.t.Fatalf("eval %.200s: %s %s", js, r.ExceptionDetails.Text, r.ExceptionDetails.Exception.Description)
	}
	if out != nil {
		if err := json.Unmarshal(r.Result.Value, out); err != nil {
			c.t.Fatalf("eval %.200s: %s: %v", js, r.Result.Value, err)
		}
	}
}

// waitFor polls cond (a JS boolean expression) until it holds. A cond
// that throws has not held yet: a page still being parsed can have one
// element of cond and not the next (CI once caught the consent page's
// error paragraph before its token field). The last exception is
// reported if it never holds.
func (c *cdp) waitFor(what, cond string, timeout time.Duration) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var r struct {
			OK  bool   `json:"ok"`
			Err string `json:"err"`
		}
		c.eval("(() => { try { return {ok: Boolean("+cond+")} } catch (e) { return {ok: false, err: String(e)} } })()", &r)
		if r.OK {
			return
		}
		if time.Now().After(deadline) {
			var body string
			c.eval("document.body ? document.body.innerText : ''", &body)
			c.t.Fatalf("waiting for %s (%s): timed out (last exception: %q); the page says:\n%s\nerrors: %v", what, cond, r.Err, body, c.pageErrors())
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func (c *cdp) navigate(url string) {
	c.t.Helper()
	c.call("Page.navigate", map[string]any{"url": url})
	time.Sleep(100 * time.Millisecond)
	c.waitFor("the page "+url, `document.readyState === "complete" && location.href === `+jsString(url), 30*time.Second)
}

// keys are the keys press knows, as DevTools names them.
var keys = map[string]struct {
	code, text string
	vk         int
}{"Tab": {"Tab", "", 9}, "Enter": {"Enter", "\r", 13}, " ": {"Space", " ", 32}}

// press types one key on the focused element, as a person would.
func (c *cdp) press(key string) {
	c.t.Helper()
	k, ok := keys[key]
	if !ok {
		c.t.Fatalf("press: unknown key %q", key)
	}
	down := map[string]any{"type": "keyDown", "key": key, "code": k.code, "windowsVirtualKeyCode": k.vk}
	if k.text != "" {
		down["text"] = k.text
	}
	c.call("Input.dispatchKeyEvent", down)
	c.call("Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": k.code, "windowsVirtualKeyCode": k.vk})
}

// tabTo presses Tab from the top of the page until the element with id
// has the focus: it fails when the keyboard cannot reach it.
func (c *cdp) tabTo(id string) {
	c.t.Helper()
	c.eval(`document.activeElement && document.activeElement.blur(); true`, nil)
	for i := 0; i < 40; i++ {
		c.press("Tab")
		var at string
		c.eval(`document.activeElement ? document.activeElement.id : ""`, &at)
		if at == id {
			return
		}
	}
	c.t.Fatalf("40 presses of Tab never reached #%s", id)
}

func (c *cdp) screenshot(path string) {
	c.t.Helper()
	res := c.call("Page.captureScreenshot", map[string]any{"format": "png"})
	var r struct{ Data string }
	_ = json.Unmarshal(res, &r)
	b, err := base64.StdEncoding.DecodeString(r.Data)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		c.t.Fatal(err)
	}
	checkScreenshot(c.t, path)
}

type axeViolation struct {
	ID    string   `json:"id"`
	Help  string   `json:"help"`
	Nodes []string `json:"nodes"`
}

// axe runs axe-core's WCAG 2 A and AA rules on the page as it is now.
func (c *cdp) axe(src []byte) (violations []axeViolation, passes int) {
	c.t.Helper()
	c.eval(string(src)+"; true", nil)
	var r struct {
		Violations []axeViolation `json:"violations"`
		Passes     int            `json:"passes"`
	}
	c.eval(`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}}).then(r => ({
		violations: r.violations.map(v => ({id: v.id, help: v.help, nodes: v.nodes.map(n => n.html)})), passes: r.passes.length}))`, &r)
	return r.Violations, r.Passes
}

func (c *cdp) pageErrors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.errors...)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
