package oauth_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// lockedBuffer collects the server's log lines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// env is a whole server (MCP behind the bearer check, plus the OAuth
// server) over one store, on a real HTTP listener.
type env struct {
	t      *testing.T
	st     store.Store
	clock  *clock
	tokens *auth.Tokens
	oauth  *oauth.Server
	srv    *httptest.Server
	url    string
	master string
	logs   *lockedBuffer
	opts   oauth.Options
	// began is the clock when the env was made: a test that moves the
	// clock can cross midnight UTC, and the audit log is kept per day.
	began time.Time
}

// eachBackend runs fn once per backend with a fresh server.
func eachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := &clock{t: time.Now().UTC().Truncate(time.Millisecond)}
		fn(t, newEnv(t, b.Open(t, c.Now), c, nil))
	})
}

// roomy is a limiter whose limits the flow tests, all from one address,
// never reach; the abuse tests use realLimits.
func roomy(st store.Store, now func() time.Time, trusted []netip.Prefix) *ratelimit.Limiter {
	r := ratelimit.Rule{PerMinute: 100_000}
	return ratelimit.New(ratelimit.Options{Store: st, Now: now, TrustedProxies: trusted, Rules: ratelimit.Rules{
		Register: r, Consent: r, Authorize: r, Token: r, Clerk: r, Discovery: r, Health: r, Download: r}})
}

// realLimits gives the server its default limiter.
func realLimits(o *oauth.Options) { o.Limiter = nil }

// eachBackendWith is eachBackend with the server's options tweaked.
func eachBackendWith(t *testing.T, tweak func(*oauth.Options), fn func(t *testing.T, e *env)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := &clock{t: time.Now().UTC().Truncate(time.Millisecond)}
		fn(t, newEnv(t, b.Open(t, c.Now), c, tweak))
	})
}

func sqliteEnv(t *testing.T, tweak func(*oauth.Options)) *env {
	c := &clock{t: time.Now().UTC().Truncate(time.Millisecond)}
	return newEnv(t, teststores.All[0].Open(t, c.Now), c, tweak)
}

func newEnv(t *testing.T, st store.Store, c *clock, tweak func(*oauth.Options)) *env {
	t.Helper()
	e := &env{t: t, st: st, clock: c, master: auth.NewSecret(), logs: &lockedBuffer{}, began: c.Now()}
	log := slog.New(slog.NewJSONHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.tokens = auth.New(auth.Options{Store: st, MasterHash: auth.Hash(e.master), Now: c.Now})
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, _ := listing.NewSigner(key)
	svc := keyword.New(keyword.Options{Store: st, Cursors: signer, Now: c.Now, Logger: log})
	profiles := profile.New(profile.Options{Store: st, Cursors: signer, Now: c.Now, Logger: log})
	messages := message.New(message.Options{Store: st, Cursors: signer, Now: c.Now, Logger: log, Directory: profiles})
	e.opts = oauth.Options{Store: st, Tokens: e.tokens, Now: c.Now, Logger: log, Limiter: roomy(st, c.Now, nil)}
	if tweak != nil {
		tweak(&e.opts)
	}
	e.oauth = oauth.New(e.opts)
	h := httpapi.New(httpapi.Options{
		MCP: mcpserver.New(mcpserver.Options{Toolsets: []mcpserver.Toolset{mcpserver.KeywordTools(svc), mcpserver.ProfileTools(profiles),
			mcpserver.MessageTools(messages)}, Version: "test", Logger: log}), Tokens: e.tokens, Version: "test", Logger: log,
		Started: time.Now(), Storage: "test", OAuth: e.oauth,
	})
	e.srv = httptest.NewServer(h)
	t.Cleanup(e.srv.Close)
	e.url = e.srv.URL
	return e
}

// noRedirect is an HTTP client that shows redirects instead of following.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.body, &m); err != nil {
		t.Fatalf("HTTP %d: not JSON: %v: %s", r.status, err, r.body)
	}
	return m
}

func (e *env) do(method, path string, body io.Reader, hdr map[string]string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := noRedirect.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

func (e *env) postJSON(path string, v any, hdr map[string]string) resp {
	e.t.Helper()
	b, _ := json.Marshal(v)
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range hdr {
		h[k] = v
	}
	return e.do(http.MethodPost, path, bytes.NewReader(b), h)
}

func (e *env) postForm(path string, v url.Values, hdr map[string]string) resp {
	e.t.Helper()
	h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for k, v := range hdr {
		h[k] = v
	}
	return e.do(http.MethodPost, path, strings.NewReader(v.Encode()), h)
}

// client is a registered OAuth client.
type client struct {
	ID, Secret, Redirect string
}

func (e *env) register(meta map[string]any) client {
	e.t.Helper()
	if meta == nil {
		meta = map[string]any{}
	}
	if _, ok := meta["redirect_uris"]; !ok {
		meta["redirect_uris"] = []string{"http://127.0.0.1:9999/callback"}
	}
	if _, ok := meta["client_name"]; !ok {
		meta["client_name"] = "Test client"
	}
	r := e.postJSON("/oauth/register", meta, nil)
	if r.status != http.StatusCreated {
		e.t.Fatalf("register: HTTP %d %s", r.status, r.body)
	}
	m := r.json(e.t)
	c := client{ID: m["client_id"].(string)}
	c.Secret, _ = m["client_secret"].(string)
	if uris, _ := m["redirect_uris"].([]any); len(uris) > 0 {
		c.Redirect = uris[0].(string)
	}
	return c
}

type pkce struct{ verifier, challenge string }

func newPKCE() pkce {
	b := make([]byte, 48)
	_, _ = rand.Read(b)
	v := base64.RawURLEncoding.EncodeToString(b)
	sum := sha256.Sum256([]byte(v))
	return pkce{verifier: v, challenge: base64.RawURLEncoding.EncodeToString(sum[:])}
}

func authzParams(c client, p pkce, state string) url.Values {
	return url.Values{
		"response_type": {"code"}, "client_id": {c.ID}, "redirect_uri": {c.Redirect}, "code_challenge": {p.challenge},
		"code_challenge_method": {"S256"}, "state": {state}, "scope": {oauth.ScopeMCP},
	}
}

// approve POSTs the consent form with the user's token and returns the
// redirect location.
func (e *env) approve(c client, p pkce, state, userToken string) *url.URL {
	e.t.Helper()
	v := authzParams(c, p, state)
	v.Set("token", userToken)
	v.Set("action", "approve")
	r := e.postForm("/oauth/authorize", v, nil)
	if r.status != http.StatusSeeOther {
		e.t.Fatalf("approve: HTTP %d, want 303: %s", r.status, r.body)
	}
	u, err := url.Parse(r.header.Get("Location"))
	if err != nil {
		e.t.Fatal(err)
	}
	return u
}

// codeFor runs the authorization step and returns the code.
func (e *env) codeFor(c client, p pkce, userToken string) string {
	e.t.Helper()
	u := e.approve(c, p, "st-"+p.challenge[:6], userToken)
	code := u.Query().Get("code")
	if code == "" {
		e.t.Fatalf("no code in %s", u)
	}
	return code
}

// exchange redeems a code (client_secret_post when the client has one).
func (e *env) exchange(c client, code, verifier string) resp {
	e.t.Helper()
	v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {verifier}, "redirect_uri": {c.Redirect}, "client_id": {c.ID}}
	if c.Secret != "" {
		v.Set("client_secret", c.Secret)
	}
	return e.postForm("/oauth/token", v, nil)
}

func (e *env) refresh(c client, rt string) resp {
	e.t.Helper()
	v := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rt}, "client_id": {c.ID}}
	if c.Secret != "" {
		v.Set("client_secret", c.Secret)
	}
	return e.postForm("/oauth/token", v, nil)
}

type tokens struct{ access, refresh string }

func mustTokens(t *testing.T, r resp) tokens {
	t.Helper()
	if r.status != http.StatusOK {
		t.Fatalf("token: HTTP %d %s", r.status, r.body)
	}
	m := r.json(t)
	at, _ := m["access_token"].(string)
	rt, _ := m["refresh_token"].(string)
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(at) || m["token_type"] != "Bearer" {
		t.Fatalf("token response %s", r.body)
	}
	return tokens{access: at, refresh: rt}
}

// fullFlow registers a client and gets its tokens approved by userToken.
func (e *env) fullFlow(userToken string, meta map[string]any) (client, tokens) {
	e.t.Helper()
	c := e.register(meta)
	p := newPKCE()
	return c, mustTokens(e.t, e.exchange(c, e.codeFor(c, p, userToken), p.verifier))
}

var rpcID atomic.Int64

// call makes a tools/call on /mcp with token; it returns the HTTP status,
// and for 200 the tool result's error flag and text.
func (e *env) call(token, tool string, args map[string]any) (status int, isError bool, text string) {
	e.t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rpcID.Add(1), "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	r := e.do(http.MethodPost, "/mcp", bytes.NewReader(body), map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + token,
	})
	if r.status != http.StatusOK {
		return r.status, true, string(r.body)
	}
	var rpc struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
		Error *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.body, &rpc); err != nil {
		e.t.Fatalf("tools/call %s: %v: %s", tool, err, r.body)
	}
	if rpc.Error != nil {
		return r.status, true, rpc.Error.Message
	}
	var sb strings.Builder
	for _, c := range rpc.Result.Content {
		sb.WriteString(c.Text)
	}
	return r.status, rpc.Result.IsError, sb.String()
}

// mustWork asserts that token can call tool.
func (e *env) mustWork(token, tool string, args map[string]any) string {
	e.t.Helper()
	st, isErr, text := e.call(token, tool, args)
	if st != http.StatusOK || isErr {
		e.t.Fatalf("%s: HTTP %d isError=%v: %s", tool, st, isErr, text)
	}
	return text
}

// mustBeUnauthorized asserts that /mcp refuses token with 401.
func (e *env) mustBeUnauthorized(token, why string) {
	e.t.Helper()
	if st, _, text := e.call(token, "whoami", nil); st != http.StatusUnauthorized {
		e.t.Fatalf("%s: /mcp answered %d, want 401: %s", why, st, text)
	}
}

func (e *env) tenantToken(tenant string, as ...string) string {
	e.t.Helper()
	secret, _, err := e.tokens.Create(context.Background(), auth.Spec{Tenant: tenant, ActsAs: as, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}})
	if err != nil {
		e.t.Fatal(err)
	}
	return secret
}

func (e *env) admin(method, path string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	return e.do(method, path, rd, map[string]string{"Authorization": "Bearer " + e.master, "Content-Type": "application/json"})
}

func (e *env) elevate(clientID, profile, tenant string) {
	e.t.Helper()
	r := e.admin(http.MethodPost, "/admin/oauth/elevate", map[string]string{"clientId": clientID, "scopeProfile": profile, "tenant": tenant})
	if r.status != http.StatusOK {
		e.t.Fatalf("elevate: HTTP %d %s", r.status, r.body)
	}
}

func (e *env) auditActions(t *testing.T) []string {
	t.Helper()
	var out []string
	days := []string{e.began.UTC().Format(oauth.AuditDayLayout)}
	if now := e.clock.Now().UTC().Format(oauth.AuditDayLayout); now != days[0] {
		days = append(days, now)
	}
	for _, day := range days {
		recs, err := e.oauth.ListAudit(context.Background(), day, 1000)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			out = append(out, r.Action+":"+r.Outcome)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}

func storeKeyOfClient(id string) store.Key { return oauth.ClientKey(id) }
