package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

type fixture struct {
	url    string
	master string
	alice  string
}

// start serves the API on a test server; tweaks change its options.
func start(t *testing.T, tweaks ...func(*httpapi.Options)) fixture {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	master := auth.NewSecret()
	toks := auth.New(auth.Options{Store: st, MasterHash: auth.Hash(master)})
	alice, _, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	key, _ := auth.EnsureKey(ctx, st, "cursor")
	signer, _ := listing.NewSigner(key)
	o := httpapi.Options{
		MCP: mcpserver.New(mcpserver.Options{Toolsets: []mcpserver.Toolset{mcpserver.KeywordTools(keyword.New(keyword.Options{Store: st, Cursors: signer})),
			mcpserver.ProfileTools(profile.New(profile.Options{Store: st, Cursors: signer}))}, Version: "t"}),
		Tokens: toks, Version: "t", Started: time.Now(), Storage: "sqlite",
	}
	for _, f := range tweaks {
		f(&o)
	}
	h := httpapi.New(o)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return fixture{url: srv.URL, master: master, alice: alice}
}

type headerTransport struct{ h http.Header }

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func client(t *testing.T, url string, headers map[string]string) *mcp.ClientSession {
	t.Helper()
	h := http.Header{}
	for k, v := range headers {
		h.Set(k, v)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: headerTransport{h}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestHealthAndUnauthorized(t *testing.T) {
	f := start(t)
	res, err := http.Get(f.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var health map[string]any
	_ = json.NewDecoder(res.Body).Decode(&health)
	res.Body.Close()
	if health["status"] != "ok" || health["service"] != "vantagepeers" || health["transport"] != "streamable-http" {
		t.Fatalf("health %v", health)
	}
	for _, auth := range []string{"", "Bearer nope", "Basic abc", "Bearer " + strings.Repeat("0", 64)} {
		req, _ := http.NewRequest("POST", f.url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 401 || !strings.Contains(string(body), `"error":"invalid_token"`) ||
			!strings.Contains(res.Header.Get("WWW-Authenticate"), `resource_metadata="`) {
			t.Fatalf("auth %q: %d %s %q", auth, res.StatusCode, body, res.Header.Get("WWW-Authenticate"))
		}
	}
}

func TestProfilesTenantsAndIdentityOverHTTP(t *testing.T) {
	f := start(t)
	full := client(t, f.url+"/mcp", map[string]string{"Authorization": "Bearer " + f.alice})
	core := client(t, f.url+"/mcp?profile=core", map[string]string{"Authorization": "Bearer " + f.alice})
	a, _ := full.ListTools(context.Background(), nil)
	b, _ := core.ListTools(context.Background(), nil)
	if len(b.Tools) == 0 || len(b.Tools) >= len(a.Tools) {
		t.Fatalf("?profile=core: %d tools, full %d", len(b.Tools), len(a.Tools))
	}
	res, err := full.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if !strings.Contains(text, `"tenant":"acme"`) || !strings.Contains(text, `"orchestratorId":"alice"`) {
		t.Fatalf("whoami over HTTP: %s", text)
	}
	// The master may pick a tenant; a tenant token may not.
	m := client(t, f.url+"/mcp", map[string]string{"Authorization": "Bearer " + f.master, httpapi.TenantHeader: "other"})
	res, _ = m.CallTool(context.Background(), &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if !strings.Contains(res.Content[0].(*mcp.TextContent).Text, `"tenant":"other"`) {
		t.Fatalf("master with %s: %v", httpapi.TenantHeader, res.Content[0])
	}
	req, _ := http.NewRequest("POST", f.url+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+f.alice)
	req.Header.Set(httpapi.TenantHeader, "other")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != http.StatusForbidden {
		t.Fatalf("tenant token with %s: %d", httpapi.TenantHeader, r.StatusCode)
	}
}

func TestGarbageKeepsServing(t *testing.T) {
	f := start(t)
	for _, body := range []string{`{not json`, `[]`, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":"oops"}}`, strings.Repeat("x", httpapi.MaxRequestBytes+10)} {
		req, _ := http.NewRequest("POST", f.url+"/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.alice)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode < 400 && res.StatusCode != 200 {
			t.Fatalf("garbage %q: status %d", body[:min(20, len(body))], res.StatusCode)
		}
	}
	cs := client(t, f.url+"/mcp", map[string]string{"Authorization": "Bearer " + f.alice})
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatalf("server stopped serving after garbage: %v", err)
	}
}

func TestMalformedRequestsGetJSONRPCErrors(t *testing.T) {
	f := start(t)
	for _, c := range []struct {
		body string
		code int
	}{
		{`{not json`, -32700},
		{"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"send_message\",\"arguments\":{\"channel\":\"bob\",\"content\":\"\xff\xfe\"}}}", -32700},
		{`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`, -32601},
	} {
		req, _ := http.NewRequest("POST", f.url+"/mcp", strings.NewReader(c.body))
		req.Header.Set("Authorization", "Bearer "+f.alice)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rpc struct {
			ID    any `json:"id"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		err = json.NewDecoder(res.Body).Decode(&rpc)
		res.Body.Close()
		if err != nil || rpc.Error == nil || rpc.Error.Code != c.code {
			t.Errorf("%q: HTTP %d, error %+v (%v); want JSON-RPC code %d", c.body, res.StatusCode, rpc.Error, err, c.code)
		}
		if c.code == -32601 && rpc.ID != float64(3) {
			t.Errorf("unknown method: id %v, want the request's id 3", rpc.ID)
		}
	}
}
