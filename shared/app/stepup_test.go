package app_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// TestOutOfRightsCallsAnswerInsufficientScope: an OAuth client signed in
// with a person's token that acts as alice and reads and writes project/web
// only calls, through the embedded server's handler, one tool of each
// capability outside those rights. Each answers 403 insufficient_scope
// naming mcp:full and the right the call needed; the same tools inside the
// rights are not challenged, and the person's agent token keeps the tool
// error.
func TestOutOfRightsCallsAnswerInsufficientScope(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := built(t, st, nil)
	hs := httptest.NewServer(httpapi.New(httpapi.Options{
		MCP:    mcpserver.New(app.MCPOptions(s, mcpserver.Options{Version: "t"})),
		Tokens: s.Tokens, Version: "t", Started: time.Now(), Storage: "sqlite", OAuth: s.OAuth, Routes: app.ModuleRoutes(s),
	}))
	t.Cleanup(hs.Close)
	person, _, err := s.Tokens.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"},
		ReadPrefixes: []string{"project/web"}, WritePrefixes: []string{"project/web"}})
	if err != nil {
		t.Fatal(err)
	}
	access := signIn(t, hs.URL, person)

	today := time.Now().UTC().Format(time.DateOnly)
	cases := []struct {
		tool  string
		args  map[string]any
		scope string
	}{
		{"write_diary", map[string]any{"date": today, "orchestrator": "bob", "content": "x"}, "as:bob"},
		{"send_message", map[string]any{"from": "bob", "channel": "carol", "content": "x"}, "as:bob"},
		{"create_task", map[string]any{"title": "t", "assignedTo": "alice", "priority": "low", "createdBy": "bob"}, "as:bob"},
		{"create_mission", map[string]any{"name": "m", "project": "web", "priority": "low", "createdBy": "bob"}, "as:bob"},
		{"reserve_paths", map[string]any{"project": "web", "paths": []string{"a.go"}, "callerOrchestrator": "bob"}, "as:bob"},
		{"create_briefing_note", map[string]any{"title": "b", "topic": "t", "participants": []string{"alice"}, "content": "c", "createdBy": "bob"}, "as:bob"},
		{"create_mandate", map[string]any{"requestedBy": "bob", "fulfilledBy": "alice", "service": "s", "budget": 1}, "as:bob"},
		{"store_memory", map[string]any{"namespace": "project/secret", "type": "fact", "content": "x"}, "ns:write:project/secret"},
		{"list_memories", map[string]any{"namespace": "project/secret"}, "ns:read:project/secret"},
		{"list_episodes", map[string]any{"namespace": "project/secret"}, "ns:read:project/secret"},
		{"hybrid_search", map[string]any{"query": "x", "namespace": "project/secret"}, "ns:read:project/secret"},
		{"export_okf_bundle", map[string]any{"namespace": "project/secret"}, "ns:read:project/secret"},
		{"import_okf_bundle", map[string]any{"namespace": "project/secret", "bundle": "AAAA"}, "ns:write:project/secret"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			r := mcpCall(t, hs.URL, access, c.tool, c.args)
			want := `Bearer error="insufficient_scope", scope="mcp:full ` + c.scope + `"`
			if r.StatusCode != http.StatusForbidden || !strings.HasPrefix(r.Header.Get("WWW-Authenticate"), want) {
				t.Fatalf("HTTP %d WWW-Authenticate %q, want 403 %q\n%s", r.StatusCode, r.Header.Get("WWW-Authenticate"), want, r.body)
			}
			var body struct{ Error, Scope string }
			if json.Unmarshal(r.body, &body) != nil || body.Error != "insufficient_scope" || body.Scope != "mcp:full "+c.scope {
				t.Fatalf("403 body %s", r.body)
			}
			// The agent token is not an OAuth client: a tool error, no challenge.
			if r := mcpCall(t, hs.URL, person, c.tool, c.args); r.StatusCode != http.StatusOK || !bytes.Contains(r.body, []byte(`forbidden`)) {
				t.Fatalf("agent token: HTTP %d %s", r.StatusCode, r.body)
			}
		})
	}
	// Inside the rights nothing is challenged.
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"write_diary", map[string]any{"date": today, "content": "x"}},
		{"store_memory", map[string]any{"namespace": "project/web", "type": "fact", "content": "x"}},
		{"list_memories", map[string]any{"namespace": "project/web"}},
	} {
		if r := mcpCall(t, hs.URL, access, c.tool, c.args); r.StatusCode != http.StatusOK || bytes.Contains(r.body, []byte(`"isError":true`)) {
			t.Errorf("%s inside the rights: HTTP %d %s", c.tool, r.StatusCode, r.body)
		}
	}
}

// signIn takes an OAuth client through registration, the consent page
// (approved with person) and the code exchange; it returns the access token.
func signIn(t *testing.T, base, person string) string {
	t.Helper()
	redirect := "http://127.0.0.1:9999/callback"
	b, _ := json.Marshal(map[string]any{"client_name": "step-up test", "redirect_uris": []string{redirect}, "token_endpoint_auth_method": "none"})
	res, err := http.Post(base+"/oauth/register", "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var reg struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	_ = json.NewDecoder(res.Body).Decode(&reg)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated || reg.ClientID == "" {
		t.Fatalf("register: HTTP %d", res.StatusCode)
	}
	v := make([]byte, 48)
	_, _ = rand.Read(v)
	verifier := base64.RawURLEncoding.EncodeToString(v)
	sum := sha256.Sum256([]byte(verifier))
	form := url.Values{"response_type": {"code"}, "client_id": {reg.ClientID}, "redirect_uri": {redirect}, "state": {"s"},
		"code_challenge": {base64.RawURLEncoding.EncodeToString(sum[:])}, "code_challenge_method": {"S256"}, "scope": {"mcp:full"},
		"token": {person}, "action": {"approve"}}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err = noFollow.PostForm(base+"/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, _ := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || loc == nil || loc.Query().Get("code") == "" {
		t.Fatalf("approve: HTTP %d Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	tv := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")}, "code_verifier": {verifier},
		"redirect_uri": {redirect}, "client_id": {reg.ClientID}}
	if reg.ClientSecret != "" {
		tv.Set("client_secret", reg.ClientSecret)
	}
	res, err = http.PostForm(base+"/oauth/token", tv)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(res.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("token: HTTP %d %v", res.StatusCode, err)
	}
	return tok.AccessToken
}

type answer struct {
	*http.Response
	body []byte
}

// mcpCall posts one tools/call to /mcp with a bearer token.
func mcpCall(t *testing.T, base, token, tool string, args map[string]any) answer {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	req, _ := http.NewRequest(http.MethodPost, base+"/mcp", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	return answer{res, buf.Bytes()}
}
