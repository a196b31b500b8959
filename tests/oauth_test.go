package tests

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestOAuthTypeScriptClient drives the OAuth flow of the official MCP
// TypeScript SDK (auth() with an OAuthClientProvider: discovery, dynamic
// registration or a client ID metadata document, PKCE, token exchange,
// refresh) against `vantagepeers serve`, the person at the consent page
// played by scripted form posts (sign in, review, approve), then calls
// tools with the token the SDK obtained (clients/oauth-flow.mjs). Signed
// in with alice's agent token, the client acts as alice at once, in her
// namespaces; a write outside them answers 403 insufficient_scope; once
// her token is revoked the client is refused at its next call.
func TestOAuthTypeScriptClient(t *testing.T) {
	requireNode(t)
	putProfile(t, "e2e-writer", map[string]any{"description": "end-to-end writer", "fromAllowList": []string{"*"},
		"namespaceReadPrefixes": []string{"*"}, "namespaceWritePrefixes": []string{"*"}})

	t.Run("sdk-auth", func(t *testing.T) {
		t.Parallel()
		tenant := newTenant("oauth")
		s := runClient(t, "oauth-flow.mjs", "sdk-auth", map[string]any{
			"url": srv.url, "master": masterToken, "tenant": tenant, "userToken": createToken(t, tenant, "alice"), "profile": "e2e-writer",
		})
		// Cross-checks with another client: the message is alice's, in her
		// tenant, and the admin sees the client with its profile and the
		// issuance in the audit log.
		id, _ := s.Facts["messageId"].(string)
		m := decode[struct{ From, Content string }](t, callTool(t, masterToken, tenant, "get_message", map[string]any{"messageId": id}))
		if m.From != "alice" || m.Content != "hello from DCR client" {
			t.Errorf("get_message %s = %+v", id, m)
		}
		clientID, _ := s.Facts["clientId"].(string)
		var list struct {
			Clients []struct {
				ClientID     string `json:"client_id"`
				ScopeProfile string `json:"scope_profile"`
			}
		}
		adminGet(t, "/admin/oauth/clients", &list)
		found := false
		for _, c := range list.Clients {
			if c.ClientID == clientID {
				found = c.ScopeProfile == "e2e-writer"
			}
		}
		if !found {
			t.Errorf("client %s with profile e2e-writer not in the admin list", clientID)
		}
		var audit struct {
			Records []struct{ Action, Outcome, ClientID, Detail string }
		}
		adminGet(t, "/admin/audit?limit=1000", &audit)
		issued := map[string]bool{}
		for _, r := range audit.Records {
			if r.ClientID == clientID && r.Action == "oauth.token.issue" {
				issued[r.Detail] = true
			}
		}
		if !issued["authorization_code"] || !issued["refresh_token"] {
			t.Errorf("audit issuances for %s: %v", clientID, issued)
		}
	})

	t.Run("transport", func(t *testing.T) {
		t.Parallel()
		tenant := newTenant("oauth")
		runClient(t, "oauth-flow.mjs", "transport", map[string]any{
			"url": srv.url, "master": masterToken, "tenant": tenant, "userToken": createToken(t, tenant, "alice"),
		})
	})
	t.Run("cimd", func(t *testing.T) {
		t.Parallel()
		cs, cimdURL := cimdServer(t)
		tenant := newTenant("cimd")
		wide := createTokenOn(t, cs, tenant, "alice")
		s := runClientOn(t, cs, "oauth-flow.mjs", "cimd", map[string]any{
			"url": cs.url, "master": masterToken, "tenant": tenant, "userToken": wide, "cimd": cimdURL,
		})
		id, _ := s.Facts["messageId"].(string)
		m := decode[struct{ From, Content string }](t, callToolOn(t, cs, wide, "get_message", map[string]any{"messageId": id}))
		if m.From != "alice" || m.Content != "hello from CIMD client" {
			t.Errorf("get_message %s = %+v", id, m)
		}
	})
}

// cimdServer serves a client ID metadata document over https on a loopback
// address and starts a server that may fetch it: the operator's egress
// allow-list names the address, and SSL_CERT_FILE trusts the test
// certificate. It returns the server and the document's URL (the client id).
func cimdServer(t *testing.T) (*server, string) {
	t.Helper()
	var docURL string
	meta := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/clients/e2e.json" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": docURL, "client_name": "CIMD client",
			"redirect_uris": []string{"http://127.0.0.1:47913/callback"}, "grant_types": []string{"authorization_code", "refresh_token"},
			"response_types": []string{"code"}, "token_endpoint_auth_method": "none"})
	}))
	t.Cleanup(meta.Close)
	docURL = meta.URL + "/clients/e2e.json"
	certFile := filepath.Join(t.TempDir(), "cimd-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: meta.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	cs, err := startServer(filepath.Join(t.TempDir(), "data"), map[string]string{
		"VP_MASTER_TOKEN": masterToken, "VP_EGRESS_ALLOW_HOSTS": "127.0.0.1", "SSL_CERT_FILE": certFile})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cs.stop(15 * time.Second); err != nil {
			t.Errorf("CIMD test server shutdown: %v", err)
		}
	})
	return cs, docURL
}

// TestOAuthConsentInChromium opens the consent page in headless Chromium:
// it must render (a screenshot with content), carry labelled controls, and
// read in English and French. Driving a click needs a DevTools client,
// which this test does not have: the approval is the same form post a
// click makes, sent over plain HTTP with the fields Chromium rendered; it
// must redirect with a code that exchanges for a working token.
func TestOAuthConsentInChromium(t *testing.T) {
	chromium := requireChromium(t)
	tenant := newTenant("consent")
	// The client's redirect target: the browser lands there with the code.
	cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html lang="en"><title>client</title><p>signed in</p></html>`)
	}))
	t.Cleanup(cb.Close)
	redirect := cb.URL + "/callback"
	var reg struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	postJSON(t, "/oauth/register", map[string]any{"client_name": "Chromium Consent Client", "redirect_uris": []string{redirect}}, &reg)
	verifier := strings.Repeat("v", 20) + fmt.Sprint(time.Now().UnixNano())
	verifier += strings.Repeat("x", 64-len(verifier))
	q := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"st-chromium"},
		"code_challenge": {s256(verifier)}, "code_challenge_method": {"S256"}, "scope": {"mcp:full"}}
	base := "http://" + srv.addr
	pageURL := base + "/oauth/authorize?" + q.Encode()

	shot := filepath.Join(workDir, "consent-en.png")
	runChromium(t, chromium, "--screenshot="+shot, "--window-size=900,1100", "--hide-scrollbars", pageURL)
	checkScreenshot(t, shot)
	t.Logf("screenshot: %s", shot)

	dom := runChromium(t, chromium, "--dump-dom", pageURL)
	for _, want := range []string{
		`<label for="token">Your VantagePeers token</label>`, `id="token"`, `type="password"`, `aria-describedby="token-help"`,
		`id="continue"`, `>Continue</button>`, `>Deny</button>`, "Chromium Consent Client", ">client-generic<", `<html lang="en">`,
		`id="person-grant"`,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the rendered page lacks %s\n%s", want, dom)
		}
	}
	// Every form control is labelled: inputs that are not hidden have a
	// <label for>, buttons have text.
	for _, m := range regexp.MustCompile(`<input ([^>]*)>`).FindAllStringSubmatch(dom, -1) {
		if strings.Contains(m[1], `type="hidden"`) {
			continue
		}
		id := regexp.MustCompile(`id="([^"]+)"`).FindStringSubmatch(m[1])
		if id == nil || !strings.Contains(dom, `<label for="`+id[1]+`">`) {
			t.Errorf("unlabelled input: <input %s>", m[1])
		}
	}
	for _, m := range regexp.MustCompile(`<button[^>]*>([^<]*)</button>`).FindAllStringSubmatch(dom, -1) {
		if strings.TrimSpace(m[1]) == "" {
			t.Errorf("a button without text: %s", m[0])
		}
	}
	if strings.Contains(strings.ToLower(dom), "<script") {
		t.Error("the consent page uses JavaScript")
	}
	fr := runChromium(t, chromium, "--dump-dom", pageURL+"&lang=fr")
	if !strings.Contains(fr, `<html lang="fr">`) || !strings.Contains(fr, ">Continuer</button>") || !strings.Contains(fr, "Votre jeton VantagePeers") {
		t.Errorf("the French page:\n%s", fr)
	}

	// Both steps in a browser driven over DevTools: each is axe-clean in
	// both languages; the person signs in, unticks one namespace with the
	// keyboard only (Tab to it, Space) and submits with Enter; the client
	// gets the narrowed rights.
	consentInBrowser(t, chromium, tenant, pageURL, redirect, verifier, reg.ClientID, reg.ClientSecret)
}

// consentInBrowser drives the consent page of pageURL, whose client
// redirects to redirect (a page that answers).
func consentInBrowser(t *testing.T, chromium, tenant, pageURL, redirect, verifier, clientID, clientSecret string) {
	axe := requireAxe(t)
	person := personToken(t, tenant, "alice", "project/web,global", "project/web,notes/alice")
	b := startCDP(t, chromium)
	axeClean := func(step string) {
		t.Helper()
		if v, passes := b.axe(axe); len(v) > 0 || passes == 0 {
			t.Errorf("%s: axe: %d WCAG 2 A/AA violations (%d passes): %+v", step, len(v), passes, v)
		}
	}
	for _, lang := range []string{"fr", "en"} {
		b.navigate(pageURL + "&lang=" + lang)
		b.waitFor("the sign-in step", `document.getElementById("token") && document.documentElement.lang === `+jsString(lang), 30*time.Second)
		b.screenshot(filepath.Join(workDir, "consent-signin-"+lang+".png"))
		axeClean("sign-in/" + lang)
		// A wrong token: the page says so, the field is marked invalid, and
		// the page stays axe-clean.
		b.tabTo("token")
		b.call("Input.insertText", map[string]any{"text": "not-a-token"})
		b.press("Enter")
		b.waitFor("the sign-in error", `document.getElementById("error") && document.getElementById("token").getAttribute("aria-invalid") === "true"`, 30*time.Second)
		axeClean("sign-in error/" + lang)
		// Type the token with the keyboard: focus is where Tab puts it.
		b.tabTo("token")
		b.call("Input.insertText", map[string]any{"text": person})
		b.press("Enter")
		b.waitFor("the review step", `document.getElementById("approve") && document.documentElement.lang === `+jsString(lang), 30*time.Second)
		b.screenshot(filepath.Join(workDir, "consent-review-"+lang+".png"))
		axeClean("review/" + lang)
		var boxes []string
		b.eval(`[...document.querySelectorAll('input[type=checkbox]')].map(c => c.name + ":" + c.value + ":" + c.checked)`, &boxes)
		if want := []string{"read:project/web:true", "read:global:true", "write:project/web:true", "write:notes/alice:true"}; strings.Join(boxes, " ") != strings.Join(want, " ") {
			t.Errorf("review/%s: checkboxes %v, want %v", lang, boxes, want)
		}
	}
	// Narrow by keyboard: Tab to the second write box, Space unticks it.
	var id string
	b.eval(`document.querySelector('input[name=write][value="notes/alice"]').id`, &id)
	b.tabTo(id)
	b.press(" ")
	var checked bool
	b.eval(`document.getElementById(`+jsString(id)+`).checked`, &checked)
	if checked {
		t.Fatal("Space on the focused checkbox left it ticked")
	}
	b.tabTo("approve")
	b.press("Enter")
	b.waitFor("the redirect to the client", `location.href.startsWith(`+jsString(redirect+"?")+`)`, 30*time.Second)
	var href string
	b.eval(`location.href`, &href)
	loc, _ := url.Parse(href)
	if loc == nil || loc.Query().Get("state") != "st-chromium" || loc.Query().Get("code") == "" {
		t.Fatalf("approve: redirected to %q", href)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	postForm(t, "/oauth/token", url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {verifier},
		"redirect_uri": {redirect}, "client_id": {clientID}, "client_secret": {clientSecret}}, &tok)
	who := decode[struct {
		Tenant string
		Read   []string `json:"namespaceReadPrefixes"`
		Write  []string `json:"namespaceWritePrefixes"`
	}](t, callTool(t, tok.AccessToken, "", "whoami", map[string]any{}))
	if who.Tenant != tenant || strings.Join(who.Read, ",") != "project/web,global" || strings.Join(who.Write, ",") != "project/web" {
		t.Fatalf("whoami with the narrowed grant: %+v, want reads project/web,global and writes project/web", who)
	}
	for _, e := range b.pageErrors() {
		if !strings.Contains(e, "status of 401") { // the wrong token's answer
			t.Errorf("page error: %s", e)
		}
	}
}

// personToken creates an agent token of tenant acting as as, reading and
// writing the comma-separated namespaces given.
func personToken(t *testing.T, tenant, as, read, write string) string {
	t.Helper()
	cmd := exec.Command(binPath, "token", "create", "--data-dir", srv.dataDir,
		"--tenant", tenant, "--as", as, "--read", read, "--write", write, "--label", "e2e "+t.Name())
	cmd.Env = childEnv(map[string]string{"VP_MASTER_TOKEN": masterToken})
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// ---- helpers ----

// requireChromium skips loudly (fails with CI=true) without chromium.
func requireChromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is required in CI (CI=true): run scripts/test-deps.sh (apt-get install chromium)")
	}
	msg := "\n" +
		"################################################################\n" +
		"## SKIPPING %s: the consent page test needs chromium\n" +
		"## (Debian: apt-get install chromium, or scripts/test-deps.sh).\n" +
		"################################################################"
	fmt.Fprintf(os.Stderr, msg+"\n", t.Name())
	t.Skipf(msg, t.Name())
	return ""
}

// runChromium runs headless Chromium on one URL and returns its stdout.
func runChromium(t *testing.T, chromium string, args ...string) string {
	t.Helper()
	profile := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
		"--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--user-data-dir=" + profile}, args...)
	cmd := exec.CommandContext(ctx, chromium, all...)
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, tail(stderr.String(), 3000))
	}
	return stdout.String()
}

// checkScreenshot: a PNG of the requested size with real content (many
// colours: text, the buttons, the card on its background).
func checkScreenshot(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	b := img.Bounds()
	colours := map[uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[(r>>8)<<16|(g>>8)<<8|bl>>8] = true
		}
	}
	if b.Dx() < 800 || b.Dy() < 1000 || len(colours) < 20 {
		t.Fatalf("screenshot %dx%d with %d colours: the page did not render", b.Dx(), b.Dy(), len(colours))
	}
}

func putProfile(t *testing.T, id string, body map[string]any) {
	t.Helper()
	adminDo(t, http.MethodPut, "/admin/oauth/profiles/"+id, body, nil)
}

func adminGet(t *testing.T, path string, out any) {
	t.Helper()
	adminDo(t, http.MethodGet, path, nil, out)
}

func adminDo(t *testing.T, method, path string, body, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+srv.addr+path, rd)
	req.Header.Set("Authorization", "Bearer "+masterToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: HTTP %d %s", method, path, res.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

func postJSON(t *testing.T, path string, body, out any) {
	t.Helper()
	b, _ := json.Marshal(body)
	res, err := httpClient.Post("http://"+srv.addr+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rb, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 || json.Unmarshal(rb, out) != nil {
		t.Fatalf("POST %s: HTTP %d %s", path, res.StatusCode, rb)
	}
}

func postForm(t *testing.T, path string, form url.Values, out any) {
	t.Helper()
	res, err := httpClient.PostForm("http://"+srv.addr+path, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	rb, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || json.Unmarshal(rb, out) != nil {
		t.Fatalf("POST %s: HTTP %d %s", path, res.StatusCode, rb)
	}
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
