package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/store"
)

// from sends a request to the OAuth server as if from addr (the peer
// address; on Lambda, the source IP API Gateway reports).
func (e *env) from(addr, method, path string, body []byte, hdr map[string]string) resp {
	e.t.Helper()
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.RemoteAddr = addr
	for k, v := range hdr {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	e.oauth.ServeHTTP(w, r)
	return resp{status: w.Code, header: w.Header(), body: w.Body.Bytes()}
}

func registration(name string) []byte {
	b, _ := json.Marshal(map[string]any{"client_name": name, "redirect_uris": []string{"https://app.example/cb"}})
	return b
}

// TestRegistrationIsRateLimitedPerAddress: 300 registrations from one
// address over three minutes of a fake clock — each with a different
// X-Forwarded-For, which is not believed — get 10 a minute accepted and
// the rest 429 with Retry-After and an OAuth error naming the limit;
// another address is counted apart.
func TestRegistrationIsRateLimitedPerAddress(t *testing.T) {
	eachBackendWith(t, realLimits, func(t *testing.T, e *env) {
		e.clock.Add(-time.Duration(e.clock.Now().Second()) * time.Second) // start of a minute
		accepted, refused := 0, 0
		for i := range 300 {
			r := e.from("203.0.113.7", http.MethodPost, "/oauth/register", registration(fmt.Sprint("bot ", i)),
				map[string]string{"Content-Type": "application/json", "X-Forwarded-For": fmt.Sprintf("10.0.%d.%d", i/250, i%250)})
			switch r.status {
			case http.StatusCreated:
				accepted++
			case http.StatusTooManyRequests:
				refused++
				m := r.json(t)
				secs, err := strconv.Atoi(r.header.Get("Retry-After"))
				if m["error"] != "rate_limited" || !strings.Contains(fmt.Sprint(m["error_description"]), "limit is 10 a minute") || err != nil || secs < 1 || secs > 60 {
					t.Fatalf("refusal %d: Retry-After %q %s", i, r.header.Get("Retry-After"), r.body)
				}
			default:
				t.Fatalf("registration %d: HTTP %d %s", i, r.status, r.body)
			}
			if i%100 == 99 {
				e.clock.Add(time.Minute)
			}
		}
		if accepted != 30 || refused != 270 {
			t.Fatalf("%d accepted, %d refused over 3 minutes; want 30 and 270", accepted, refused)
		}
		if r := e.from("198.51.100.20:4444", http.MethodPost, "/oauth/register", registration("other"), map[string]string{"Content-Type": "application/json"}); r.status != http.StatusCreated {
			t.Fatalf("another address: HTTP %d %s", r.status, r.body)
		}
	})
}

// TestPendingClientsAreCapped: past the cap of clients that never
// completed an authorization, registration is refused with an error naming
// the cap; a client completing its authorization frees its place.
func TestPendingClientsAreCapped(t *testing.T) {
	e := sqliteEnv(t, func(o *oauth.Options) { realLimits(o); o.MaxPendingClients = 5 })
	var first client
	for i := range 5 {
		r := e.from(fmt.Sprintf("192.0.2.%d", i+1), http.MethodPost, "/oauth/register", registration("c"), map[string]string{"Content-Type": "application/json"})
		if r.status != http.StatusCreated {
			t.Fatalf("registration %d: HTTP %d %s", i, r.status, r.body)
		}
		if i == 0 {
			m := r.json(t)
			first = client{ID: m["client_id"].(string), Secret: m["client_secret"].(string), Redirect: "https://app.example/cb"}
		}
	}
	r := e.from("192.0.2.100", http.MethodPost, "/oauth/register", registration("one too many"), map[string]string{"Content-Type": "application/json"})
	m := r.json(t)
	if r.status != http.StatusServiceUnavailable || m["error"] != "temporarily_unavailable" || !strings.Contains(fmt.Sprint(m["error_description"]), "limit of 5") || r.header.Get("Retry-After") == "" {
		t.Fatalf("registration past the cap: HTTP %d %s", r.status, r.body)
	}
	p := newPKCE()
	e.codeFor(first, p, e.tenantToken("acme", "alice"))
	if r := e.from("192.0.2.100", http.MethodPost, "/oauth/register", registration("now fits"), map[string]string{"Content-Type": "application/json"}); r.status != http.StatusCreated {
		t.Fatalf("after one client completed its authorization: HTTP %d %s", r.status, r.body)
	}
}

// TestUnusedClientsExpire: a client that never completed an authorization
// is gone 24 hours after its registration; one that did, and one an admin
// elevated, stay.
func TestUnusedClientsExpire(t *testing.T) {
	eachBackendWith(t, realLimits, func(t *testing.T, e *env) {
		unused := e.register(nil)
		used := e.register(nil)
		elevated := e.register(nil)
		p := newPKCE()
		tok := mustTokens(t, e.exchange(used, e.codeFor(used, p, e.tenantToken("acme", "alice")), p.verifier))
		e.elevate(elevated.ID, "public-readonly", "")
		ctx := context.Background()
		for _, c := range []client{unused, used, elevated} {
			if _, err := e.st.Get(ctx, storeKeyOfClient(c.ID)); err != nil {
				t.Fatalf("client %s right after registration: %v", c.ID, err)
			}
		}
		e.clock.Add(23 * time.Hour)
		if _, err := e.st.Get(ctx, storeKeyOfClient(unused.ID)); err != nil {
			t.Fatalf("unused client gone before 24 h: %v", err)
		}
		e.clock.Add(time.Hour + time.Minute)
		if _, err := e.st.Get(ctx, storeKeyOfClient(unused.ID)); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("unused client after 24 h: %v, want not found", err)
		}
		r := e.postForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {unused.ID}, "client_secret": {unused.Secret}}, nil)
		if r.status != http.StatusUnauthorized || !strings.Contains(string(r.body), "unknown client") {
			t.Fatalf("token endpoint for the expired client: HTTP %d %s", r.status, r.body)
		}
		for _, c := range []client{used, elevated} {
			it, err := e.st.Get(ctx, storeKeyOfClient(c.ID))
			if err != nil || it.ExpiresAt != 0 {
				t.Fatalf("client %s after 24 h: %v (expires %d), want kept for good", c.ID, err, it.ExpiresAt)
			}
		}
		mustTokens(t, e.refresh(used, tok.refresh))
	})
}

// TestEveryUnauthenticatedOAuthEndpointIsRateLimited: discovery, the
// consent page and its POST (where a token is pasted), the token and
// revocation endpoints and the Clerk exchange each refuse an address past
// their limit with a 429 and Retry-After.
func TestEveryUnauthenticatedOAuthEndpointIsRateLimited(t *testing.T) {
	rule := ratelimit.Rule{PerMinute: 3}
	e := sqliteEnv(t, func(o *oauth.Options) {
		o.Limiter = ratelimit.New(ratelimit.Options{Store: o.Store, Now: o.Now, Rules: ratelimit.Rules{
			Register: rule, Consent: rule, Authorize: rule, Token: rule, Clerk: rule, Discovery: rule}})
	})
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	for _, c := range []struct {
		method, path string
		body         string
		hdr          map[string]string
	}{
		{"GET", "/.well-known/oauth-authorization-server", "", nil},
		{"GET", "/.well-known/oauth-protected-resource/mcp", "", nil},
		{"GET", "/oauth/authorize?client_id=vp_client_x", "", nil},
		{"POST", "/oauth/authorize", "client_id=vp_client_x&action=approve&token=" + strings.Repeat("a", 64), form},
		{"POST", "/oauth/token", "grant_type=client_credentials&client_id=x&client_secret=y", form},
		{"POST", "/oauth/revoke", "token=t&client_id=x&client_secret=y", form},
		{"POST", "/oauth/register", "{}", map[string]string{"Content-Type": "application/json"}},
		{"POST", "/issueBearerFromClerk", "{}", map[string]string{"Content-Type": "application/json"}},
	} {
		addr := "203.0.113.50"
		for i := range 3 {
			if r := e.from(addr, c.method, c.path, []byte(c.body), c.hdr); r.status == http.StatusTooManyRequests {
				t.Fatalf("%s %s: request %d of 3 refused: %s", c.method, c.path, i+1, r.body)
			}
		}
		r := e.from(addr, c.method, c.path, []byte(c.body), c.hdr)
		if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" || !strings.Contains(string(r.body), "limit is 3 a minute") {
			t.Errorf("%s %s: 4th request: HTTP %d %s, want 429", c.method, c.path, r.status, r.body)
		}
		e.clock.Add(time.Minute) // the next endpoint starts afresh, also where two share a rule
	}
}

// TestOversizeBodiesGet413: a body over an OAuth endpoint's limit is
// answered 413 naming the limit, not a 400 about its content.
func TestOversizeBodiesGet413(t *testing.T) {
	e := sqliteEnv(t, nil)
	big := strings.Repeat("a", 65<<10)
	for _, c := range []struct{ path, ct, body string }{
		{"/oauth/register", "application/json", `{"client_name":"` + big + `"}`},
		{"/oauth/token", "application/x-www-form-urlencoded", "grant_type=x&pad=" + big},
		{"/oauth/revoke", "application/x-www-form-urlencoded", "token=x&pad=" + big},
		{"/oauth/authorize", "application/x-www-form-urlencoded", "client_id=x&pad=" + big},
	} {
		r := e.do(http.MethodPost, c.path, strings.NewReader(c.body), map[string]string{"Content-Type": c.ct})
		if r.status != http.StatusRequestEntityTooLarge || !strings.Contains(string(r.body), "65536 bytes") {
			t.Errorf("%s with %d bytes: HTTP %d %.200s, want 413 naming the limit", c.path, len(c.body), r.status, r.body)
		}
	}
}
