package oauth_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
)

func TestDiscovery(t *testing.T) {
	e := sqliteEnv(t, nil)
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		r := e.do(http.MethodGet, path, nil, nil)
		m := r.json(t)
		if r.status != 200 || m["resource"] != e.url+"/mcp" || m["authorization_servers"].([]any)[0] != e.url {
			t.Fatalf("%s: %d %s", path, r.status, r.body)
		}
	}
	r := e.do(http.MethodGet, "/.well-known/oauth-authorization-server", nil, nil)
	m := r.json(t)
	for k, want := range map[string]string{
		"issuer": e.url, "authorization_endpoint": e.url + "/oauth/authorize", "token_endpoint": e.url + "/oauth/token",
		"registration_endpoint": e.url + "/oauth/register", "revocation_endpoint": e.url + "/oauth/revoke",
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %s", k, m[k], want)
		}
	}
	if _, ok := m["jwks_uri"]; ok {
		t.Errorf("jwks_uri advertised without keys: %s", r.body)
	}
	if got := m["code_challenge_methods_supported"].([]any); len(got) != 1 || got[0] != "S256" {
		t.Errorf("code_challenge_methods_supported = %v", got)
	}
	// A 401 from /mcp points at metadata that resolves and names the scope
	// to ask for, the one both metadata documents list.
	st, _, _ := e.call("", "whoami", nil)
	if st != http.StatusUnauthorized {
		t.Fatalf("no token: %d", st)
	}
	r = e.do(http.MethodPost, "/mcp", strings.NewReader(`{}`), map[string]string{"Content-Type": "application/json"})
	wa := r.header.Get("WWW-Authenticate")
	mm := regexp.MustCompile(`^Bearer resource_metadata="([^"]+)", scope="mcp:full"$`).FindStringSubmatch(wa)
	if mm == nil || r.json(t)["error"] != "invalid_token" {
		t.Fatalf("401: WWW-Authenticate %q body %s", wa, r.body)
	}
	res, err := http.Get(mm[1])
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("resource_metadata %s: %v %v", mm[1], err, res)
	}
	var prm struct {
		Scopes []string `json:"scopes_supported"`
	}
	_ = json.NewDecoder(res.Body).Decode(&prm)
	res.Body.Close()
	if as := m["scopes_supported"].([]any); len(prm.Scopes) != 1 || prm.Scopes[0] != "mcp:full" || len(as) != 1 || as[0] != "mcp:full" {
		t.Errorf("scopes_supported: resource %v, authorization server %v", prm.Scopes, as)
	}
	// CORS preflight on the metadata and token endpoints.
	r = e.do(http.MethodOptions, "/oauth/token", nil, map[string]string{"Origin": "https://claude.ai", "Access-Control-Request-Method": "POST"})
	if r.status != http.StatusNoContent || r.header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", r.status, r.header)
	}
}

func TestRegistration(t *testing.T) {
	e := sqliteEnv(t, nil)
	cases := []struct {
		name     string
		meta     map[string]any
		status   int
		errCode  string
		noSecret bool
	}{
		{"defaults", map[string]any{"redirect_uris": []string{"https://app.example.com/cb"}}, 201, "", false},
		{"native loopback", map[string]any{"redirect_uris": []string{"http://127.0.0.1:33418/callback", "http://localhost/cb", "http://[::1]:8080/cb"}}, 201, "", false},
		{"public client", map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "token_endpoint_auth_method": "none"}, 201, "", true},
		{"client credentials only", map[string]any{"grant_types": []string{"client_credentials"}, "token_endpoint_auth_method": "client_secret_post"}, 201, "", false},
		{"explicit client-generic", map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "scope_profile": "client-generic"}, 201, "", false},
		{"master refused", map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "scope_profile": "master"}, 400, oauth.ErrScopeViolation, false},
		{"master refused (camel case)", map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "scopeProfile": "master"}, 400, oauth.ErrScopeViolation, false},
		{"other profile refused", map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "scope_profile": "public-readonly"}, 400, oauth.ErrScopeViolation, false},
		{"http on a public host", map[string]any{"redirect_uris": []string{"http://evil.example/cb"}}, 400, "invalid_redirect_uri", false},
		{"fragment", map[string]any{"redirect_uris": []string{"https://a.example/cb#frag"}}, 400, "invalid_redirect_uri", false},
		{"custom scheme", map[string]any{"redirect_uris": []string{"javascript:alert(1)"}}, 400, "invalid_redirect_uri", false},
		{"relative", map[string]any{"redirect_uris": []string{"/cb"}}, 400, "invalid_redirect_uri", false},
		{"user info", map[string]any{"redirect_uris": []string{"https://u:p@a.example/cb"}}, 400, "invalid_redirect_uri", false},
		{"no redirect for code", map[string]any{"grant_types": []string{"authorization_code"}}, 400, "invalid_redirect_uri", false},
		{"unknown grant", map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "grant_types": []string{"password"}}, 400, "invalid_client_metadata", false},
		{"credentials without secret", map[string]any{"grant_types": []string{"client_credentials"}, "token_endpoint_auth_method": "none"}, 400, "invalid_client_metadata", false},
		{"unknown auth method", map[string]any{"redirect_uris": []string{"https://a.example/cb"}, "token_endpoint_auth_method": "private_key_jwt"}, 400, "invalid_client_metadata", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.postJSON("/oauth/register", c.meta, nil)
			m := r.json(t)
			if r.status != c.status {
				t.Fatalf("HTTP %d, want %d: %s", r.status, c.status, r.body)
			}
			if c.status != 201 {
				if m["error"] != c.errCode {
					t.Fatalf("error %v, want %s: %s", m["error"], c.errCode, r.body)
				}
				return
			}
			secret, _ := m["client_secret"].(string)
			if c.noSecret != (secret == "") || (secret != "" && !auth.ValidSecret(secret)) {
				t.Fatalf("client_secret %q (public=%v)", secret, c.noSecret)
			}
			if m["scope_profile"] != "client-generic" || !strings.HasPrefix(m["client_id"].(string), "vp_client_") || m["token_endpoint"] != e.url+"/oauth/token" {
				t.Fatalf("response %s", r.body)
			}
			if _, ok := m["client_id_issued_at"].(float64); !ok {
				t.Fatalf("client_id_issued_at is not a number: %s", r.body)
			}
			// Only the hash is stored.
			if secret != "" {
				it, err := e.st.Get(context.Background(), storeKeyOfClient(m["client_id"].(string)))
				if err != nil {
					t.Fatal(err)
				}
				if strings.Contains(string(it.Data), secret) || !strings.Contains(string(it.Data), auth.HashHex(secret)) {
					t.Fatalf("stored client: %s", it.Data)
				}
			}
		})
	}
	if acts := e.auditActions(t); !contains(acts, "oauth.client.register:ok") || !contains(acts, "oauth.client.register:refused") {
		t.Fatalf("audit: %v", acts)
	}
}

func TestAuthorizationCodeFlow(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.oauth.SeedProfiles(context.Background(), oauth.Actor{ID: "test"})
		user := e.tenantToken("acme", "alice")
		c := e.register(map[string]any{"client_name": "Flow <b>client</b>"})
		e.elevate(c.ID, "writer", "")
		p := newPKCE()

		// The consent page names the client (escaped) and its profile.
		page := e.do(http.MethodGet, "/oauth/authorize?"+authzParams(c, p, "xyz").Encode(), nil, nil)
		body := string(page.body)
		if page.status != 200 || !strings.Contains(body, "Flow &lt;b&gt;client&lt;/b&gt;") || strings.Contains(body, "<b>client</b>") ||
			!strings.Contains(body, `<label for="token">`) || !strings.Contains(body, ">writer<") {
			t.Fatalf("consent page: %d\n%s", page.status, body)
		}
		if csp := page.header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "http://127.0.0.1:9999") {
			t.Fatalf("CSP %q", csp)
		}

		loc := e.approve(c, p, "xyz", user)
		if loc.Query().Get("state") != "xyz" || loc.Query().Get("iss") != e.url || !strings.HasPrefix(loc.String(), c.Redirect+"?") {
			t.Fatalf("redirect %s", loc)
		}
		tk := mustTokens(t, e.exchange(c, loc.Query().Get("code"), p.verifier))
		if tk.refresh == "" {
			t.Fatal("no refresh token")
		}
		who := e.mustWork(tk.access, "whoami", nil)
		if !strings.Contains(who, `"acme"`) || !strings.Contains(who, `"alice"`) {
			t.Fatalf("whoami: %s", who)
		}
		e.mustWork(tk.access, "send_message", map[string]any{"channel": "bob", "content": "hello via OAuth"})

		// Rotation: the new pair works, the old access token is revoked.
		tk2 := mustTokens(t, e.refresh(c, tk.refresh))
		if tk2.refresh == tk.refresh || tk2.access == tk.access {
			t.Fatal("refresh did not rotate")
		}
		e.mustWork(tk2.access, "whoami", nil)
		e.mustBeUnauthorized(tk.access, "access token of a rotated refresh")

		// Reuse of the rotated refresh token revokes the whole family.
		r := e.refresh(c, tk.refresh)
		if r.status != 400 || r.json(t)["error"] != "invalid_grant" {
			t.Fatalf("reuse: %d %s", r.status, r.body)
		}
		e.mustBeUnauthorized(tk2.access, "access token after refresh reuse")
		if r := e.refresh(c, tk2.refresh); r.status != 400 {
			t.Fatalf("current refresh after reuse: %d %s", r.status, r.body)
		}
		// Expired access tokens are refused.
		_, tk3 := e.fullFlow(user, nil)
		e.mustWork(tk3.access, "whoami", nil)
		e.clock.Add(oauth.DefaultAccessTTL + time.Second)
		e.mustBeUnauthorized(tk3.access, "expired access token")
		if acts := e.auditActions(t); !contains(acts, "oauth.token.issue:ok") || !contains(acts, "oauth.token.revoke:ok") || !contains(acts, "oauth.authorize:ok") {
			t.Fatalf("audit: %v", acts)
		}
	})
}

func init() {
	// A profile the flow tests elevate clients to.
	oauth.DefaultProfiles = append(oauth.DefaultProfiles, oauth.Profile{ID: "writer", Description: "test profile",
		FromAllowList: []string{"*"}, NamespaceReadPrefixes: []string{"*"}, NamespaceWritePrefixes: []string{"*"}})
}

func TestCodeIsSingleUse(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		user := e.tenantToken("acme", "alice")
		c := e.register(nil)
		p := newPKCE()
		code := e.codeFor(c, p, user)
		tk := mustTokens(t, e.exchange(c, code, p.verifier))
		e.mustWork(tk.access, "whoami", nil)
		r := e.exchange(c, code, p.verifier)
		if r.status != 400 || r.json(t)["error"] != "invalid_grant" {
			t.Fatalf("replay: %d %s", r.status, r.body)
		}
		e.mustBeUnauthorized(tk.access, "tokens of a replayed code")
		if r := e.refresh(c, tk.refresh); r.status != 400 {
			t.Fatalf("refresh of a replayed code's grant: %d", r.status)
		}
	})
}

func TestConcurrentRedemptionHasOneWinner(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		user := e.tenantToken("acme", "alice")
		c := e.register(nil)
		p := newPKCE()
		code := e.codeFor(c, p, user)
		const n = 20
		var wg sync.WaitGroup
		statuses := make([]int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				v := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "code_verifier": {p.verifier}, "redirect_uri": {c.Redirect}, "client_id": {c.ID}, "client_secret": {c.Secret}}
				res, err := http.PostForm(e.url+"/oauth/token", v)
				if err == nil {
					statuses[i] = res.StatusCode
					res.Body.Close()
				}
			}()
		}
		wg.Wait()
		ok := 0
		for _, s := range statuses {
			if s == 200 {
				ok++
			} else if s != 400 {
				t.Errorf("status %d", s)
			}
		}
		if ok != 1 {
			t.Fatalf("%d redemptions won, want exactly 1 (%v)", ok, statuses)
		}
	})
}

func TestCodeRefusals(t *testing.T) {
	e := sqliteEnv(t, nil)
	user := e.tenantToken("acme", "alice")
	c := e.register(nil)
	other := e.register(nil)
	cases := []struct {
		name string
		run  func(code string, p pkce) resp
		want string
	}{
		{"PKCE verifier mismatch", func(code string, p pkce) resp { return e.exchange(c, code, newPKCE().verifier) }, "invalid_grant"},
		{"PKCE verifier too short", func(code string, p pkce) resp { return e.exchange(c, code, "abc") }, "invalid_grant"},
		{"redirect_uri mismatch", func(code string, p pkce) resp {
			c2 := c
			c2.Redirect = "http://127.0.0.1:9999/other"
			return e.exchange(c2, code, p.verifier)
		}, "invalid_grant"},
		{"another client", func(code string, p pkce) resp { return e.exchange(other, code, p.verifier) }, "invalid_grant"},
		{"wrong secret", func(code string, p pkce) resp {
			c2 := c
			c2.Secret = auth.NewSecret()
			return e.exchange(c2, code, p.verifier)
		}, "invalid_client"},
		{"expired", func(code string, p pkce) resp {
			e.clock.Add(oauth.DefaultCodeTTL + time.Second)
			return e.exchange(c, code, p.verifier)
		}, "invalid_grant"},
		{"unknown code", func(code string, p pkce) resp { return e.exchange(c, auth.NewSecret(), p.verifier) }, "invalid_grant"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPKCE()
			code := e.codeFor(c, p, user)
			r := tc.run(code, p)
			if r.status/100 != 4 || r.json(t)["error"] != tc.want {
				t.Fatalf("HTTP %d %s, want %s", r.status, r.body, tc.want)
			}
		})
	}
}

func TestAuthorizeRefusals(t *testing.T) {
	e := sqliteEnv(t, nil)
	user := e.tenantToken("acme", "alice")
	c := e.register(nil)
	p := newPKCE()
	// Before the client and redirect URI are verified: an error page, never
	// a redirect (no open redirect).
	for name, mod := range map[string]func(url.Values){
		"unknown client":        func(v url.Values) { v.Set("client_id", "vp_client_nope") },
		"no client":             func(v url.Values) { v.Del("client_id") },
		"redirect mismatch":     func(v url.Values) { v.Set("redirect_uri", "https://evil.example/steal") },
		"redirect prefix":       func(v url.Values) { v.Set("redirect_uri", c.Redirect+"/x") },
		"redirect with a query": func(v url.Values) { v.Set("redirect_uri", c.Redirect+"?next=https://evil.example") },
		"no redirect":           func(v url.Values) { v.Del("redirect_uri") },
	} {
		t.Run(name, func(t *testing.T) {
			v := authzParams(c, p, "s1")
			mod(v)
			for _, r := range []resp{
				e.do(http.MethodGet, "/oauth/authorize?"+v.Encode(), nil, nil),
				func() resp {
					v.Set("token", user)
					v.Set("action", "approve")
					return e.postForm("/oauth/authorize", v, nil)
				}(),
			} {
				if r.status != 400 || r.header.Get("Location") != "" || !strings.Contains(string(r.body), `role="alert"`) {
					t.Fatalf("HTTP %d Location %q\n%s", r.status, r.header.Get("Location"), r.body)
				}
			}
		})
	}
	// After: errors go back to the client with the state.
	for name, tc := range map[string]struct {
		mod  func(url.Values)
		want string
	}{
		"no PKCE":         {func(v url.Values) { v.Del("code_challenge") }, "invalid_request"},
		"plain PKCE":      {func(v url.Values) { v.Set("code_challenge_method", "plain") }, "invalid_request"},
		"bad challenge":   {func(v url.Values) { v.Set("code_challenge", "short") }, "invalid_request"},
		"token response":  {func(v url.Values) { v.Set("response_type", "token") }, "unsupported_response_type"},
		"foreign target":  {func(v url.Values) { v.Set("resource", "https://other.example/mcp") }, "invalid_target"},
		"user denies":     {func(v url.Values) { v.Set("action", "deny") }, "access_denied"},
		"deny, no token":  {func(v url.Values) { v.Set("action", "deny"); v.Del("token") }, "access_denied"},
		"deny, bad token": {func(v url.Values) { v.Set("action", "deny"); v.Set("token", "x") }, "access_denied"},
	} {
		t.Run(name, func(t *testing.T) {
			v := authzParams(c, p, "st8")
			v.Set("token", user)
			v.Set("action", "approve")
			tc.mod(v)
			r := e.postForm("/oauth/authorize", v, nil)
			u, _ := url.Parse(r.header.Get("Location"))
			if r.status != http.StatusSeeOther || u == nil || u.Query().Get("error") != tc.want || u.Query().Get("state") != "st8" || u.Query().Get("code") != "" ||
				!strings.HasPrefix(u.String(), c.Redirect+"?") {
				t.Fatalf("HTTP %d Location %q", r.status, r.header.Get("Location"))
			}
		})
	}
	// A wrong sign-in token shows the page again (401), with no code.
	v := authzParams(c, p, "s2")
	v.Set("token", auth.NewSecret())
	v.Set("action", "approve")
	r := e.postForm("/oauth/authorize", v, nil)
	if r.status != http.StatusUnauthorized || r.header.Get("Location") != "" || !strings.Contains(string(r.body), "not valid") {
		t.Fatalf("bad sign-in token: %d %s", r.status, r.body)
	}
	// A revoked user token cannot approve either.
	secret, tok, _ := e.tokens.Create(context.Background(), auth.Spec{Tenant: "acme", ActsAs: []string{"bob"}})
	_, _ = e.tokens.Revoke(context.Background(), tok.ID)
	v.Set("token", secret)
	if r := e.postForm("/oauth/authorize", v, nil); r.status != http.StatusUnauthorized {
		t.Fatalf("revoked sign-in token: %d", r.status)
	}
}

func TestConsentLanguages(t *testing.T) {
	e := sqliteEnv(t, nil)
	c := e.register(nil)
	p := newPKCE()
	q := authzParams(c, p, "s").Encode()
	for _, tc := range []struct {
		query, accept, want, lang string
	}{
		{"", "", "Continue", "en"},
		{"&lang=fr", "", "Continuer", "fr"},
		{"", "fr-CA,fr;q=0.9,en;q=0.8", "Continuer", "fr"},
		{"", "de-DE,en;q=0.5,fr;q=0.4", "Continue", "en"},
		{"&lang=en", "fr", "Continue", "en"},
	} {
		r := e.do(http.MethodGet, "/oauth/authorize?"+q+tc.query, nil, map[string]string{"Accept-Language": tc.accept})
		b := string(r.body)
		if r.status != 200 || !strings.Contains(b, ">"+tc.want+"<") || !strings.Contains(b, `<html lang="`+tc.lang+`">`) || !strings.Contains(b, `name="lang" value="`+tc.lang+`"`) {
			t.Errorf("query %q accept %q: want %s page\n%s", tc.query, tc.accept, tc.lang, b)
		}
	}
}

func TestTenantIsolation(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.oauth.SeedProfiles(context.Background(), oauth.Actor{ID: "test"})
		c := e.register(nil)
		e.elevate(c.ID, "writer", "")
		pa, pb := newPKCE(), newPKCE()
		a := mustTokens(t, e.exchange(c, e.codeFor(c, pa, e.tenantToken("tenant-a", "alice")), pa.verifier))
		b := mustTokens(t, e.exchange(c, e.codeFor(c, pb, e.tenantToken("tenant-b", "alice")), pb.verifier))
		out := e.mustWork(a.access, "send_message", map[string]any{"channel": "bob", "content": "secret of A"})
		var sent struct{ MessageID string }
		_ = json.Unmarshal([]byte(out), &sent)
		if !strings.Contains(e.mustWork(a.access, "list_messages", nil), "secret of A") {
			t.Fatal("A does not see its own message")
		}
		if got := e.mustWork(b.access, "list_messages", nil); strings.Contains(got, "secret of A") {
			t.Fatalf("B sees A's message: %s", got)
		}
		if st, isErr, text := e.call(b.access, "get_message", map[string]any{"messageId": sent.MessageID}); st != 200 || !isErr || !strings.Contains(text, "not_found") {
			t.Fatalf("B get_message of A's id: %d %v %s", st, isErr, text)
		}
		// The tenant header is the master token's alone.
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`
		r := e.do(http.MethodPost, "/mcp", strings.NewReader(body), map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
			"Authorization": "Bearer " + b.access, "X-VP-Tenant": "tenant-a"})
		if r.status != http.StatusForbidden {
			t.Fatalf("OAuth token with X-VP-Tenant: %d %s", r.status, r.body)
		}
	})
}

func TestGrantNeverExceedsTheApprover(t *testing.T) {
	e := sqliteEnv(t, nil)
	c := e.register(nil)
	e.elevate(c.ID, oauth.ProfileMaster, "")
	// A tenant token acting as alice approves a master-profile client: the
	// token acts as alice, is not admin.
	secret, _, _ := e.tokens.Create(context.Background(), auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}, ReadPrefixes: []string{"project/x"}, WritePrefixes: []string{"project/x/notes"}})
	p := newPKCE()
	tk := mustTokens(t, e.exchange(c, e.codeFor(c, p, secret), p.verifier))
	who := e.mustWork(tk.access, "whoami", nil)
	var w map[string]any
	_ = json.Unmarshal([]byte(who), &w)
	if w["admin"] == true || !strings.Contains(who, `"alice"`) || strings.Contains(who, `"*"`) {
		t.Fatalf("whoami %s", who)
	}
	if st, _, text := e.call(tk.access, "send_message", map[string]any{"from": "bob", "channel": "carol", "content": "x"}); st != http.StatusForbidden {
		t.Fatalf("acted as bob: HTTP %d %s", st, text)
	}
	// The master token approving it gets admin.
	p2 := newPKCE()
	tk2 := mustTokens(t, e.exchange(c, e.codeFor(c, p2, e.master), p2.verifier))
	if who := e.mustWork(tk2.access, "whoami", nil); !strings.Contains(who, `"admin":true`) {
		t.Fatalf("master-approved whoami %s", who)
	}
}

func TestClientCredentials(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.oauth.SeedProfiles(context.Background(), oauth.Actor{ID: "test"})
		c := e.register(map[string]any{"grant_types": []string{"client_credentials"}, "token_endpoint_auth_method": "client_secret_post"})
		get := func(c client, basic bool) resp {
			v := url.Values{"grant_type": {"client_credentials"}}
			if basic {
				req, _ := http.NewRequest(http.MethodPost, e.url+"/oauth/token", strings.NewReader(v.Encode()))
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				req.SetBasicAuth(url.QueryEscape(c.ID), url.QueryEscape(c.Secret))
				res := must(http.DefaultClient.Do(req))
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return resp{status: res.StatusCode, header: res.Header, body: b}
			}
			v.Set("client_id", c.ID)
			v.Set("client_secret", c.Secret)
			return e.postForm("/oauth/token", v, nil)
		}
		tk := mustTokens(t, get(c, false))
		if tk.refresh != "" {
			t.Fatal("client_credentials issued a refresh token")
		}
		if st, isErr, _ := e.call(tk.access, "list_messages", nil); st != 200 || !isErr {
			t.Fatal("client-generic client_credentials token could read")
		}
		e.elevate(c.ID, "writer", "ops")
		tk = mustTokens(t, get(c, true))
		if who := e.mustWork(tk.access, "whoami", nil); !strings.Contains(who, `"ops"`) {
			t.Fatalf("whoami %s", who)
		}
		bad := c
		bad.Secret = auth.NewSecret()
		if r := get(bad, true); r.status != 401 || r.json(t)["error"] != "invalid_client" || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), "Basic") {
			t.Fatalf("wrong secret: %d %v %s", r.status, r.header, r.body)
		}
		codeOnly := e.register(nil)
		if r := get(codeOnly, false); r.status != 400 || r.json(t)["error"] != "unauthorized_client" {
			t.Fatalf("client without the grant: %d %s", r.status, r.body)
		}
	})
}

func TestRevocationEndpoint(t *testing.T) {
	e := sqliteEnv(t, nil)
	user := e.tenantToken("acme", "alice")
	c, tk := e.fullFlow(user, nil)
	other, otk := e.fullFlow(user, nil)
	rev := func(c client, token string) resp {
		return e.postForm("/oauth/revoke", url.Values{"token": {token}, "client_id": {c.ID}, "client_secret": {c.Secret}}, nil)
	}
	// Another client's token: 200, no effect.
	if r := rev(other, tk.access); r.status != 200 {
		t.Fatalf("%d", r.status)
	}
	e.mustWork(tk.access, "whoami", nil)
	if r := rev(c, auth.NewSecret()); r.status != 200 {
		t.Fatalf("unknown token: %d", r.status)
	}
	if r := rev(c, tk.access); r.status != 200 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	e.mustBeUnauthorized(tk.access, "revoked access token")
	// Revoking a refresh token ends the grant.
	if r := rev(other, otk.refresh); r.status != 200 {
		t.Fatal(r.status)
	}
	e.mustBeUnauthorized(otk.access, "access token of a revoked grant")
	if r := e.refresh(other, otk.refresh); r.status != 400 {
		t.Fatalf("refresh after revocation: %d", r.status)
	}
	if r := e.postForm("/oauth/revoke", url.Values{"token": {tk.refresh}, "client_id": {c.ID}, "client_secret": {"wrong"}}, nil); r.status != 401 {
		t.Fatalf("unauthenticated revoke: %d", r.status)
	}
}
