package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// bearerClient connects to the server over Streamable HTTP behind the
// SDK's RequireBearerToken, whose verifier answers ti to any credential.
func bearerClient(t *testing.T, ti *sdkauth.TokenInfo) *mcp.ClientSession {
	t.Helper()
	srv := mcpserver.New(mcpserver.Options{Toolsets: []mcpserver.Toolset{mcpserver.ProfileTools(&profile.Service{})}, Version: "t"})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true})
	verify := func(context.Context, string, *http.Request) (*sdkauth.TokenInfo, error) { return ti, nil }
	hs := httptest.NewServer(sdkauth.RequireBearerToken(verify, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(h))
	t.Cleanup(hs.Close)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: &http.Client{Transport: withBearer{}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type withBearer struct{}

func (withBearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer anything")
	return http.DefaultTransport.RoundTrip(r)
}

// TestPrincipalOnlyThroughTheAccessor: the server takes the caller from a
// TokenInfo made by auth.NewTokenInfo, and from nothing else a verifier
// may put in one — a vp.Principal under the key it once travelled under
// ("vp.principal"), a pointer to one, a UserID or scopes that name the
// master token. Those callers are no one: whoami is refused for want of a
// credential, and a tool profile they name is not applied to tools/list.
func TestPrincipalOnlyThroughTheAccessor(t *testing.T) {
	ctx := context.Background()
	evil := vp.Principal{Tenant: "evil", Orchestrators: []string{vp.Wildcard}, Admin: true, TokenID: "master", ToolProfile: mcpserver.ToolProfileCore}
	good := evil
	good.Tenant = "acme"
	all, err := bearerClient(t, auth.NewTokenInfo(vp.Principal{Tenant: "acme", TokenID: "t1"})).ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		ti   *sdkauth.TokenInfo
		ok   bool
	}{
		{"the accessor", auth.NewTokenInfo(good), true},
		{"a principal under the old key", &sdkauth.TokenInfo{UserID: "evil/master", Extra: map[string]any{"vp.principal": evil}}, false},
		{"a pointer under the old key", &sdkauth.TokenInfo{Extra: map[string]any{"vp.principal": &evil}}, false},
		{"a master UserID and scope", &sdkauth.TokenInfo{UserID: "evil/master", Scopes: []string{"master"}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := bearerClient(t, c.ti)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Content[0].(*mcp.TextContent).Text
			if c.ok != !res.IsError || strings.Contains(text, "evil") {
				t.Fatalf("whoami: isError %v %q; want a caller: %v, and never the injected tenant", res.IsError, text, c.ok)
			}
			if !c.ok && !strings.Contains(text, "no credential") {
				t.Fatalf("whoami refused with %q, want the missing credential named", text)
			}
			if c.ok && !strings.Contains(text, "acme") {
				t.Fatalf("whoami %q, want tenant acme", text)
			}
			list, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if core := len(list.Tools) < len(all.Tools); core != c.ok {
				t.Fatalf("tools/list: %d tools of %d; the token's core profile applied: %v, want %v", len(list.Tools), len(all.Tools), core, c.ok)
			}
		})
	}
}
