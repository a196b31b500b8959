package oauth_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestSecretsNeverLogged runs every flow with debug logging and greps the
// captured log for every secret that went by: tokens, client secrets,
// codes, PKCE verifiers, refresh tokens, Clerk JWTs and bearers.
func TestSecretsNeverLogged(t *testing.T) {
	c := newClerkEnv(t, []string{"ext_abc123"}, true)
	e := c.env
	secrets := map[string]string{"master token": e.master}
	add := func(name, v string) {
		if v != "" {
			secrets[name] = v
		}
	}
	user := e.tenantToken("acme", "alice")
	add("user token", user)

	cl := e.register(map[string]any{"grant_types": []string{"authorization_code", "refresh_token", "client_credentials"}})
	add("client secret", cl.Secret)
	p := newPKCE()
	add("verifier", p.verifier)
	code := e.codeFor(cl, p, user)
	add("code", code)
	tk := mustTokens(t, e.exchange(cl, code, p.verifier))
	add("access token", tk.access)
	add("refresh token", tk.refresh)
	e.exchange(cl, code, p.verifier) // replay
	e.mustBeUnauthorized(tk.access, "replayed")

	p2 := newPKCE()
	add("verifier 2", p2.verifier)
	code2 := e.codeFor(cl, p2, user)
	add("code 2", code2)
	e.exchange(cl, code2, newPKCE().verifier) // PKCE mismatch
	tk2 := mustTokens(t, e.exchange(cl, code2, p2.verifier))
	add("access token 2", tk2.access)
	add("refresh token 2", tk2.refresh)
	e.call(tk2.access, "send_message", map[string]any{"channel": "bob", "content": "x"})
	tk3 := mustTokens(t, e.refresh(cl, tk2.refresh))
	add("access token 3", tk3.access)
	add("refresh token 3", tk3.refresh)
	e.refresh(cl, tk2.refresh) // reuse
	cc := mustTokens(t, e.postForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {cl.ID}, "client_secret": {cl.Secret}}, nil))
	add("client credentials token", cc.access)
	e.postForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {cl.ID}, "client_secret": {cl.Secret + "0"}}, nil)
	e.postForm("/oauth/revoke", url.Values{"token": {cc.access}, "client_id": {cl.ID}, "client_secret": {cl.Secret}}, nil)
	v := authzParams(cl, p, "s")
	v.Set("token", user+"0")
	v.Set("action", "approve")
	e.postForm("/oauth/authorize", v, nil) // bad sign-in token
	e.call(user+"1", "whoami", nil)

	jwt := c.jwt(t, "k1", nil)
	add("clerk jwt", jwt)
	r := c.exchange(map[string]any{"clerkJwt": jwt, "extId": "ext_abc123"})
	var out struct{ Bearer string }
	_ = json.Unmarshal(r.body, &out)
	add("clerk bearer", out.Bearer)
	c.exchange(map[string]any{"clerkJwt": jwt + "x", "extId": "ext_abc123"})
	e.admin(http.MethodDelete, "/admin/oauth/clients/"+cl.ID, nil)
	e.do(http.MethodGet, "/admin/oauth/clients", nil, map[string]string{"Authorization": "Bearer " + user})

	logs := e.logs.String()
	if !strings.Contains(logs, "oauth tokens issued") || !strings.Contains(logs, "clerk bearer issued") || !strings.Contains(logs, "oauth grant revoked") {
		t.Fatalf("the log did not capture the flows:\n%s", logs)
	}
	for name, s := range secrets {
		if strings.Contains(logs, s) {
			t.Errorf("the %s appears in the log", name)
		}
		if len(s) > 16 && strings.Contains(logs, s[:16]) {
			t.Errorf("a prefix of the %s appears in the log", name)
		}
	}
	// Nor in the audit log.
	recs, _ := e.oauth.ListAudit(t.Context(), e.clock.Now().UTC().Format("2006-01-02"), 1000)
	b, _ := json.Marshal(recs)
	for name, s := range secrets {
		if strings.Contains(string(b), s) {
			t.Errorf("the %s appears in the audit log", name)
		}
	}
	t.Logf("%d secrets checked against %d bytes of log and %d audit records", len(secrets), len(logs), len(recs))
}
