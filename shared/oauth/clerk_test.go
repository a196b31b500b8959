package oauth_test

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/oauth"
)

// jwks is a test issuer: it serves its current keys and signs tokens.
type jwks struct {
	mu      sync.Mutex
	keys    map[string]*rsa.PrivateKey
	fetches atomic.Int64
	srv     *httptest.Server
}

var keyCache sync.Map

func rsaKey(t *testing.T, name string) *rsa.PrivateKey {
	if k, ok := keyCache.Load(name); ok {
		return k.(*rsa.PrivateKey)
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	keyCache.Store(name, k)
	return k
}

func newJWKS(t *testing.T, kids ...string) *jwks {
	j := &jwks{keys: map[string]*rsa.PrivateKey{}}
	for _, k := range kids {
		j.keys[k] = rsaKey(t, k)
	}
	j.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/.well-known/jwks.json" {
			http.NotFound(w, r)
			return
		}
		j.fetches.Add(1)
		j.mu.Lock()
		defer j.mu.Unlock()
		var out []map[string]string
		for kid, k := range j.keys {
			out = append(out, map[string]string{"kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
				"n": base64.RawURLEncoding.EncodeToString(k.N.Bytes()), "e": base64.RawURLEncoding.EncodeToString(big.NewInt(int64(k.E)).Bytes())})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"keys": out})
	}))
	t.Cleanup(j.srv.Close)
	return j
}

// rotate replaces the served keys.
func (j *jwks) rotate(t *testing.T, kids ...string) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.keys = map[string]*rsa.PrivateKey{}
	for _, k := range kids {
		j.keys[k] = rsaKey(t, k)
	}
}

func signJWT(t *testing.T, key *rsa.PrivateKey, header, claims map[string]any) string {
	h, _ := json.Marshal(header)
	c, _ := json.Marshal(claims)
	in := base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(c)
	sum := sha256.Sum256([]byte(in))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		t.Fatal(err)
	}
	return in + "." + base64.RawURLEncoding.EncodeToString(sig)
}

type clerkEnv struct {
	*env
	issuer *jwks
}

func newClerkEnv(t *testing.T, allowed []string, issuerSet bool) *clerkEnv {
	j := newJWKS(t, "k1")
	e := sqliteEnv(t, func(o *oauth.Options) {
		if issuerSet {
			o.Clerk.Issuer = j.srv.URL
		}
		o.Clerk.AllowedExtIDs = allowed
		// The test server sits behind a proxy the operator trusts, which
		// reports the source in X-Forwarded-For.
		o.Limiter = roomy(o.Store, o.Now, []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("10.0.0.0/8")})
	})
	return &clerkEnv{env: e, issuer: j}
}

func (c *clerkEnv) claims(sub string) map[string]any {
	now := c.clock.Now()
	return map[string]any{"sub": sub, "iss": c.issuer.srv.URL, "aud": "convex", "exp": now.Add(time.Minute).Unix(), "iat": now.Unix(), "nbf": now.Add(-time.Second).Unix(),
		"name": "Cédric", "email": "cedric@example.com"}
}

func (c *clerkEnv) jwt(t *testing.T, kid string, mod func(map[string]any)) string {
	cl := c.claims("user_2abcDEF")
	if mod != nil {
		mod(cl)
	}
	return signJWT(t, rsaKey(t, kid), map[string]any{"alg": "RS256", "kid": kid, "typ": "JWT"}, cl)
}

func (c *clerkEnv) exchange(body map[string]any) resp {
	return c.postJSON("/issueBearerFromClerk", body, map[string]string{"X-Forwarded-For": "203.0.113.9, 10.0.0.1", "User-Agent": "vp-extension/1.2"})
}

func TestClerkExchange(t *testing.T) {
	c := newClerkEnv(t, []string{"ext_abc123", "ext_def456"}, true)
	r := c.exchange(map[string]any{"clerkJwt": c.jwt(t, "k1", nil), "extId": "ext_abc123", "extVersion": "1.2.0"})
	if r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var out struct {
		WorkspaceID, Bearer, UserName, WorkspaceName string
		ExpiresAt                                    int64
	}
	_ = json.Unmarshal(r.body, &out)
	if out.WorkspaceID != "user_2abcDEF" || len(out.Bearer) != 64 || out.UserName != "Cédric" || out.WorkspaceName != out.UserName ||
		out.ExpiresAt != c.clock.Now().Add(7*24*time.Hour).UnixMilli() {
		t.Fatalf("response %s", r.body)
	}
	who := c.mustWork(out.Bearer, "whoami", nil)
	if !strings.Contains(who, `"clerk-`) || !strings.Contains(who, "cédric") {
		t.Fatalf("whoami %s", who)
	}
	recs, _ := c.oauth.ListAudit(context.Background(), c.clock.Now().UTC().Format(oauth.AuditDayLayout), 100)
	var rec *oauth.AuditRecord
	for i := range recs {
		if recs[i].Action == "clerk.issue" && recs[i].Outcome == "ok" {
			rec = &recs[i]
		}
	}
	if rec == nil || rec.ClerkUserID != "user_2abcDEF" || rec.WorkspaceID != "user_2abcDEF" || rec.ExtID != "ext_abc123" || rec.ExtVersion != "1.2.0" ||
		rec.IP != "203.0.113.9" || rec.UserAgent != "vp-extension/1.2" || rec.IssuedAt != c.clock.Now().UnixMilli() || rec.TokenID == "" {
		t.Fatalf("audit record %+v", rec)
	}
	if strings.Contains(c.logs.String(), out.Bearer) {
		t.Fatal("the bearer was logged")
	}
	// The bearer expires after 7 days.
	c.clock.Add(7*24*time.Hour + time.Second)
	c.mustBeUnauthorized(out.Bearer, "a Clerk bearer after 7 days")

	// An admin maps the user to a team tenant.
	if err := c.oauth.MapClerkUser(context.Background(), oauth.Actor{ID: "test"}, "user_2abcDEF", "team-x"); err != nil {
		t.Fatal(err)
	}
	r = c.exchange(map[string]any{"clerkJwt": c.jwt(t, "k1", nil), "extId": "ext_def456"})
	_ = json.Unmarshal(r.body, &out)
	if who := c.mustWork(out.Bearer, "whoami", nil); !strings.Contains(who, `"team-x"`) {
		t.Fatalf("mapped whoami %s", who)
	}
}

func TestClerkErrorTable(t *testing.T) {
	c := newClerkEnv(t, []string{"ext_abc123"}, true)
	other := rsaKey(t, "other")
	cases := []struct {
		name   string
		body   map[string]any
		status int
		msg    string
	}{
		{"no jwt", map[string]any{"extId": "ext_abc123"}, 400, "Missing required field: clerkJwt"},
		{"no ext id", map[string]any{"clerkJwt": c.jwt(t, "k1", nil)}, 400, "Missing required field: extId"},
		{"not JSON", nil, 400, "Missing required field: clerkJwt"},
		{"expired", map[string]any{"clerkJwt": c.jwt(t, "k1", func(m map[string]any) { m["exp"] = c.clock.Now().Add(-time.Minute).Unix() }), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"no exp", map[string]any{"clerkJwt": c.jwt(t, "k1", func(m map[string]any) { delete(m, "exp") }), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"not yet valid", map[string]any{"clerkJwt": c.jwt(t, "k1", func(m map[string]any) { m["nbf"] = c.clock.Now().Add(time.Hour).Unix() }), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"wrong issuer", map[string]any{"clerkJwt": c.jwt(t, "k1", func(m map[string]any) { m["iss"] = "https://evil.example" }), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"wrong audience", map[string]any{"clerkJwt": c.jwt(t, "k1", func(m map[string]any) { m["aud"] = "other" }), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"audience list", map[string]any{"clerkJwt": c.jwt(t, "k1", func(m map[string]any) { m["aud"] = []string{"x", "convex"} }), "extId": "ext_abc123"}, 200, ""},
		{"unknown kid", map[string]any{"clerkJwt": c.jwt(t, "k9", nil), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"bad signature", map[string]any{"clerkJwt": signJWT(t, other, map[string]any{"alg": "RS256", "kid": "k1"}, c.claims("user_x")), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"tampered claims", map[string]any{"clerkJwt": func() string {
			parts := strings.Split(c.jwt(t, "k1", nil), ".")
			cl := c.claims("user_admin")
			b, _ := json.Marshal(cl)
			return parts[0] + "." + base64.RawURLEncoding.EncodeToString(b) + "." + parts[2]
		}(), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"alg none", map[string]any{"clerkJwt": func() string {
			h, _ := json.Marshal(map[string]any{"alg": "none", "kid": "k1"})
			b, _ := json.Marshal(c.claims("user_x"))
			return base64.RawURLEncoding.EncodeToString(h) + "." + base64.RawURLEncoding.EncodeToString(b) + "."
		}(), "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"garbage", map[string]any{"clerkJwt": "not.a.jwt", "extId": "ext_abc123"}, 401, "Invalid Clerk JWT"},
		{"extension not allowed", map[string]any{"clerkJwt": c.jwt(t, "k1", nil), "extId": "ext_evil"}, 403, "Extension not authorized"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var r resp
			if tc.body == nil {
				r = c.do(http.MethodPost, "/issueBearerFromClerk", strings.NewReader("{oops"), map[string]string{"Content-Type": "application/json"})
			} else {
				r = c.exchange(tc.body)
			}
			if r.status != tc.status || (tc.msg != "" && r.json(t)["error"] != tc.msg) {
				t.Fatalf("HTTP %d %s, want %d %q", r.status, r.body, tc.status, tc.msg)
			}
		})
	}
	// Unset allow-list: no extension is allowed. Unset issuer: 500.
	none := newClerkEnv(t, nil, true)
	if r := none.exchange(map[string]any{"clerkJwt": none.jwt(t, "k1", nil), "extId": "ext_abc123"}); r.status != 403 {
		t.Fatalf("empty allow-list: %d %s", r.status, r.body)
	}
	mis := newClerkEnv(t, []string{"ext_abc123"}, false)
	if r := mis.exchange(map[string]any{"clerkJwt": mis.jwt(t, "k1", nil), "extId": "ext_abc123"}); r.status != 500 ||
		r.json(t)["error"] != "Server misconfigured: CLERK_JWT_ISSUER_DOMAIN not set" {
		t.Fatalf("no issuer: %d %s", r.status, r.body)
	}
}

func TestClerkRateLimit(t *testing.T) {
	c := newClerkEnv(t, []string{"ext_abc123"}, true)
	call := func(sub string) resp {
		return c.exchange(map[string]any{"clerkJwt": c.jwt(t, "k1", func(m map[string]any) { m["sub"] = sub }), "extId": "ext_abc123"})
	}
	for i := range 5 {
		if r := call("user_a"); r.status != 200 {
			t.Fatalf("request %d: %d %s", i+1, r.status, r.body)
		}
		c.clock.Add(5 * time.Second)
	}
	r := call("user_a")
	if r.status != 429 || r.header.Get("Retry-After") != "60" || r.json(t)["error"] != "Rate limit exceeded. Try again in 1 minute." {
		t.Fatalf("6th request: %d %v %s", r.status, r.header, r.body)
	}
	if r := call("user_b"); r.status != 200 {
		t.Fatalf("another user: %d", r.status)
	}
	// The window slides: 60 s after the first request, one more is allowed.
	c.clock.Add(36 * time.Second)
	if r := call("user_a"); r.status != 200 {
		t.Fatalf("after the window: %d %s", r.status, r.body)
	}
	if r := call("user_a"); r.status != 429 {
		t.Fatalf("window full again: %d", r.status)
	}
	c.clock.Add(61 * time.Second)
	if r := call("user_a"); r.status != 200 {
		t.Fatalf("a minute later: %d", r.status)
	}
}

func TestClerkKeyRotation(t *testing.T) {
	c := newClerkEnv(t, []string{"ext_abc123"}, true)
	ok := func(kid string) int {
		return c.exchange(map[string]any{"clerkJwt": c.jwt(t, kid, func(m map[string]any) { m["sub"] = "user_" + kid }), "extId": "ext_abc123"}).status
	}
	if st := ok("k1"); st != 200 {
		t.Fatal(st)
	}
	if st := ok("k1"); st != 200 || c.issuer.fetches.Load() != 1 {
		t.Fatalf("cached keys: %d, %d fetches", st, c.issuer.fetches.Load())
	}
	// The issuer rotates to k2: a k2 token makes the server fetch again.
	c.issuer.rotate(t, "k2")
	c.clock.Add(11 * time.Second)
	if st := ok("k2"); st != 200 || c.issuer.fetches.Load() != 2 {
		t.Fatalf("rotated key: %d, %d fetches", st, c.issuer.fetches.Load())
	}
	// k1 is gone from the set now.
	if st := ok("k1"); st != 401 {
		t.Fatalf("retired key: %d", st)
	}
	// Unknown kids do not make the server hammer the issuer.
	before := c.issuer.fetches.Load()
	for range 5 {
		if st := ok("k7"); st != 401 {
			t.Fatal(st)
		}
	}
	if c.issuer.fetches.Load()-before > 1 {
		t.Fatalf("%d fetches for unknown kids within 10 s", c.issuer.fetches.Load()-before)
	}
}
