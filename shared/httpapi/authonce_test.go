package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// countingTokens is auth.Tokens as the verifier of /mcp, counting its
// calls and keeping what it answered.
type countingTokens struct {
	*auth.Tokens
	mu     sync.Mutex
	calls  int
	issued *sdkauth.TokenInfo
}

func (c *countingTokens) Verify(ctx context.Context, secret string, r *http.Request) (*sdkauth.TokenInfo, error) {
	ti, err := c.Tokens.Verify(ctx, secret, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.issued = ti
	return ti, err
}

func (c *countingTokens) take() (int, *sdkauth.TokenInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, ti := c.calls, c.issued
	c.calls, c.issued = 0, nil
	return n, ti
}

// TestMCPVerifiesEachRequestOnce: on /mcp the Authorization header is read
// once, by the SDK, whose TokenVerifier is the project's: it is called
// exactly once per request that carries a bearer credential (never for
// one without), and the TokenInfo a tool receives is the one it returned,
// or for the master token acting in another tenant, that tenant's.
func TestMCPVerifiesEachRequestOnce(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	master := auth.NewSecret()
	toks := &countingTokens{Tokens: auth.New(auth.Options{Store: st, MasterHash: auth.Hash(master)})}
	alice, _, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var seen []*sdkauth.TokenInfo
	m := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "t"}, nil)
	m.AddTool(&mcp.Tool{Name: "seen", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, req.Extra.TokenInfo)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
	})
	srv := httptest.NewServer(httpapi.New(httpapi.Options{MCP: m, Tokens: toks, Version: "t", Started: time.Now()}))
	t.Cleanup(srv.Close)

	for _, c := range []struct {
		name, authz, tenant string
		status, calls       int
		sawTenant           string // "" when no tool may run
	}{
		{"a token", "Bearer " + alice, "", 200, 1, "acme"},
		{"the scheme in lower case", "bearer " + alice, "", 200, 1, "acme"},
		{"the master token in another tenant", "Bearer " + master, "other", 200, 1, "other"},
		{"another tenant for a token", "Bearer " + alice, "other", 403, 1, ""},
		{"an unknown token", "Bearer " + auth.NewSecret(), "", 401, 1, ""},
		{"no header", "", "", 401, 0, ""},
		{"another scheme", "Basic " + alice, "", 401, 0, ""},
		{"a credential with a space", "Bearer " + alice[:32] + " " + alice[32:], "", 401, 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"seen","arguments":{}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if c.authz != "" {
				req.Header.Set("Authorization", c.authz)
			}
			if c.tenant != "" {
				req.Header.Set(httpapi.TenantHeader, c.tenant)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			calls, issued := toks.take()
			mu.Lock()
			got := seen
			seen = nil
			mu.Unlock()
			if res.StatusCode != c.status || calls != c.calls {
				t.Fatalf("HTTP %d, %d calls of the verifier (%s); want %d, %d", res.StatusCode, calls, body, c.status, c.calls)
			}
			if c.sawTenant == "" {
				if len(got) != 0 {
					t.Fatalf("a refused request reached the tool %d times", len(got))
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("the tool ran %d times, want 1", len(got))
			}
			p, ok := auth.PrincipalOf(got[0])
			if !ok || p.Tenant != c.sawTenant {
				t.Fatalf("the tool saw principal %+v (%v), want tenant %q", p, ok, c.sawTenant)
			}
			if c.tenant == "" && got[0] != issued {
				t.Fatal("the tool's TokenInfo is not the one the verifier returned: something else made it")
			}
		})
	}
}
