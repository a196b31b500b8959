package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/auth"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/webhooks"
	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

// built is every service of the embedded product on st, as the binary
// builds them; lim, when set, counts the open routes' requests.
func built(t *testing.T, st *sqlite.Store, lim *ratelimit.Limiter) *app.Services {
	t.Helper()
	ctx := context.Background()
	key, _ := auth.EnsureKey(ctx, st, "cursor")
	signer, _ := listing.NewSigner(key)
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	hash := auth.Hash(auth.NewSecret())
	s, err := app.Build(ctx, app.Ports{Groups: app.All, Store: st, Index: idx, Cursors: signer, MasterHash: &hash,
		Embedder: embedlocal.New(embedlocal.Options{}), Queue: storequeue.New(storequeue.Options{Store: st, Name: "embed"}),
		OAuth: &oauth.Options{}, Limiter: lim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	// An unsigned probe of a download is refused before the service is used.
	s.OKFLinks = okfsvc.NewLinks([]byte("k"), "", 0)
	return s
}

// secrets are webhook secrets by tenant.
type secrets map[string]string

func (s secrets) WebhookSecret(_ context.Context, tenant string) (string, error) {
	return s[tenant], nil
}

// TestRouteTable: paths are unique, each route says who may call it, and
// what it says holds: a bearer route refuses a request without a token
// with 401, a route open to all answers one; every route is served by the
// embedded server's handler.
func TestRouteTable(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s := built(t, st, nil)
	s.Webhooks.Secrets = secrets{"default": "s1", "acme": "s2"}
	h := httpapi.New(httpapi.Options{
		MCP:    mcpserver.New(app.MCPOptions(s, mcpserver.Options{Version: "t"})),
		Tokens: s.Tokens, Version: "t", Started: time.Now(), Storage: "sqlite",
		OAuth: s.OAuth, Routes: app.ModuleRoutes(s),
	})
	// A request each route's handler answers (the {proxy+} part filled in).
	probe := map[string]string{
		"/mcp":                      "POST /mcp",
		"/health":                   "GET /health",
		"/.well-known/{proxy+}":     "GET /.well-known/oauth-authorization-server",
		"/oauth/{proxy+}":           "GET /oauth/authorize",
		"/admin/{proxy+}":           "GET /admin/oauth/clients",
		"/issueBearerFromClerk":     "POST /issueBearerFromClerk",
		"/webhooks/github":          "POST /webhooks/github",
		"/webhooks/github/{tenant}": "POST /webhooks/github/acme",
		"/okf/download":             "GET /okf/download?t=acme&ns=x&sha=y&exp=1&sig=z",
		"/pacerelle/{proxy+}":       "GET /pacerelle/v1/inbox",
		"/pacerelle/app/{proxy+}":   "GET /pacerelle/app/pair",
	}
	seen := map[string]bool{}
	for _, r := range app.Routes(nil) {
		if seen[r.Path] {
			t.Errorf("%s is in the table twice", r.Path)
		}
		seen[r.Path] = true
		req, ok := probe[r.Path]
		if !ok {
			t.Errorf("%s: add a probe request for it to this test", r.Path)
			continue
		}
		method, path, _ := strings.Cut(req, " ")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(`{}`)))
		switch r.Auth {
		case httpapi.AuthBearer:
			if rec.Code != http.StatusUnauthorized || !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s (bearer): %s without a token answered %d, WWW-Authenticate %q; want 401 Bearer",
					r.Path, req, rec.Code, rec.Header().Get("WWW-Authenticate"))
			}
		case httpapi.AuthSignature:
			if rec.Code != http.StatusUnauthorized || !strings.Contains(rec.Body.String(), "X-Hub-Signature-256") {
				t.Errorf("%s (signature): %s without a signature answered %d %s; want 401 naming the header",
					r.Path, req, rec.Code, rec.Body.String())
			}
		case httpapi.AuthNone:
			if rec.Code == http.StatusUnauthorized || rec.Code == http.StatusNotFound {
				t.Errorf("%s (none): %s answered %d", r.Path, req, rec.Code)
			}
		default:
			t.Errorf("%s: auth %q is served by no route yet", r.Path, r.Auth)
		}
		if len(r.MuxPatterns()) == 0 || r.Function == "" {
			t.Errorf("%s: patterns %v, function %q", r.Path, r.MuxPatterns(), r.Function)
		}
	}
	for p := range probe {
		if !seen[p] {
			t.Errorf("probe for %s, which is not in the table", p)
		}
	}
}

// dispatched records the deliveries that reach it.
type dispatched []webhooks.Delivery

func (d *dispatched) Deliver(_ context.Context, dl webhooks.Delivery) (webhooks.Outcome, error) {
	*d = append(*d, dl)
	return webhooks.Accepted, nil
}

// TestWebhookRoutes: with a webhooks handler the server passes signed
// deliveries to it on both paths, the tenant from the path; without one
// the paths are not served.
func TestWebhookRoutes(t *testing.T) {
	var got dispatched
	routes := app.ModuleRoutes(&app.Services{Webhooks: &webhooks.Options{
		Secrets: secrets{"default": "s1", "acme": "s2"}, Dispatcher: &got}})
	h := httpapi.New(httpapi.Options{Routes: routes})
	body := []byte(`{"action":"opened"}`)
	for _, c := range []struct{ path, secret, tenant string }{
		{"/webhooks/github", "s1", "default"},
		{"/webhooks/github/acme", "s2", "acme"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, webhookstest.Request(c.path, c.secret, "issues", "d-"+c.tenant, body))
		if rec.Code != http.StatusAccepted || len(got) == 0 || got[len(got)-1].Tenant != c.tenant {
			t.Errorf("%s: %d %s, dispatched %v", c.path, rec.Code, rec.Body.String(), got)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/webhooks/github", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET /webhooks/github: %d", rec.Code)
	}
	bare := httpapi.New(httpapi.Options{Routes: app.ModuleRoutes(nil)})
	for _, p := range []string{"/webhooks/github", "/webhooks/github/acme"} {
		rec := httptest.NewRecorder()
		bare.ServeHTTP(rec, webhookstest.Request(p, "s1", "issues", "d1", body))
		if rec.Code != http.StatusNotFound {
			t.Errorf("%s without a webhooks handler: %d", p, rec.Code)
		}
	}
}

// TestEveryOpenRouteIsRateLimited: each route open to all (AuthNone)
// refuses one source address past its limit with a 429 and Retry-After;
// another address is still served. The Pacerelle web app (static pages
// of another subsystem) is the one exception, listed here.
func TestEveryOpenRouteIsRateLimited(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	two := ratelimit.Rule{PerMinute: 2}
	lim := ratelimit.New(ratelimit.Options{Store: st, Rules: ratelimit.Rules{Register: two, Consent: two, Authorize: two, Token: two, Clerk: two, Discovery: two, Health: two, Download: two}})
	s := built(t, st, lim)
	h := httpapi.New(httpapi.Options{
		Tokens: s.Tokens, Version: "t", Started: time.Now(), Storage: "sqlite", Limiter: lim,
		OAuth: s.OAuth, Routes: app.ModuleRoutes(s),
	})
	probe := map[string]string{
		"/health":               "GET /health",
		"/.well-known/{proxy+}": "GET /.well-known/oauth-authorization-server",
		"/oauth/{proxy+}":       "POST /oauth/register",
		"/issueBearerFromClerk": "POST /issueBearerFromClerk",
		"/okf/download":         "GET /okf/download?t=acme&ns=x&sha=y&exp=1&sig=z",
	}
	exempt := map[string]bool{"/pacerelle/app/{proxy+}": true}
	send := func(req, addr string) *httptest.ResponseRecorder {
		method, path, _ := strings.Cut(req, " ")
		r := httptest.NewRequest(method, path, strings.NewReader(`{}`))
		r.RemoteAddr = addr
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}
	for _, r := range app.Routes(nil) {
		if r.Auth != httpapi.AuthNone || exempt[r.Path] {
			continue
		}
		req, ok := probe[r.Path]
		if !ok {
			t.Errorf("%s is open to all: add a probe for it to this test", r.Path)
			continue
		}
		for i := range 2 {
			if rec := send(req, "203.0.113.1:1000"); rec.Code == http.StatusTooManyRequests {
				t.Fatalf("%s: request %d of 2 refused", req, i+1)
			}
		}
		rec := send(req, "203.0.113.1:1001")
		if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "limit is 2 a minute") {
			t.Errorf("%s: 3rd request from one address: %d %s, want 429", req, rec.Code, rec.Body.String())
		}
		if rec := send(req, "198.51.100.1:1000"); rec.Code == http.StatusTooManyRequests {
			t.Errorf("%s: another address was refused", req)
		}
	}
}
