package oauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
)

func TestAdminNeedsTheMasterToken(t *testing.T) {
	e := sqliteEnv(t, nil)
	user := e.tenantToken("acme", "alice")
	_, oauthTok := e.fullFlow(user, nil)
	for _, path := range []string{"/admin/oauth/clients", "/admin/oauth/profiles", "/admin/audit", "/admin/nothing"} {
		for name, tc := range map[string]struct {
			hdr    map[string]string
			status int
		}{
			"no token":      {nil, 401},
			"unknown token": {map[string]string{"Authorization": "Bearer " + auth.NewSecret()}, 401},
			"tenant token":  {map[string]string{"Authorization": "Bearer " + user}, 403},
			"oauth token":   {map[string]string{"Authorization": "Bearer " + oauthTok.access}, 403},
		} {
			if r := e.do(http.MethodGet, path, nil, tc.hdr); r.status != tc.status {
				t.Errorf("%s with %s: %d, want %d: %s", path, name, r.status, tc.status, r.body)
			}
		}
	}
	if r := e.admin(http.MethodPost, "/admin/oauth/seed-profiles", nil); r.status != 403 && r.status != 200 {
		t.Fatal(r.status)
	}
	refused := 0
	recs, _ := e.oauth.ListAudit(context.Background(), e.clock.Now().UTC().Format(oauth.AuditDayLayout), 1000)
	for _, r := range recs {
		if r.Action == "admin.call" && r.Outcome == "refused" {
			refused++
		}
	}
	if refused != 16 {
		t.Fatalf("%d refused admin calls audited, want 16", refused)
	}
}

func TestAdminProfilesAndClients(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		r := e.admin(http.MethodPost, "/admin/oauth/seed-profiles", nil)
		if r.status != 200 || !strings.Contains(string(r.body), "client-generic") {
			t.Fatalf("seed: %d %s", r.status, r.body)
		}
		if r := e.admin(http.MethodPost, "/admin/oauth/seed-profiles", nil); r.json(t)["created"] == nil || len(r.json(t)["created"].([]any)) != 0 {
			t.Fatalf("second seed: %s", r.body)
		}
		r = e.admin(http.MethodGet, "/admin/oauth/profiles", nil)
		var ps struct{ Profiles []oauth.Profile }
		_ = json.Unmarshal(r.body, &ps)
		if len(ps.Profiles) < 3 {
			t.Fatalf("profiles: %s", r.body)
		}
		for _, p := range ps.Profiles {
			if p.ID == oauth.ProfileGeneric && (len(p.FromAllowList)+len(p.NamespaceReadPrefixes)+len(p.NamespaceWritePrefixes) != 0) {
				t.Fatalf("client-generic grants something: %+v", p)
			}
		}
		cedar := map[string]any{"description": "cedar agents", "fromAllowList": []string{"cedar"}, "namespaceReadPrefixes": []string{"project/cedar", "global"}, "namespaceWritePrefixes": []string{"project/cedar"}}
		if r := e.admin(http.MethodPut, "/admin/oauth/profiles/cedar-agent", cedar); r.status != 200 {
			t.Fatalf("put: %d %s", r.status, r.body)
		}
		cedar["description"] = "cedar agents v2"
		if r := e.admin(http.MethodPut, "/admin/oauth/profiles/cedar-agent", cedar); r.status != 200 || r.json(t)["description"] != "cedar agents v2" {
			t.Fatalf("update: %d %s", r.status, r.body)
		}
		for name, tc := range map[string]struct {
			method, path string
			body         any
			status       int
		}{
			"master is fixed":          {http.MethodPut, "/admin/oauth/profiles/master", map[string]any{"fromAllowList": []string{}}, 403},
			"bad id":                   {http.MethodPut, "/admin/oauth/profiles/Bad%20Id", map[string]any{}, 400},
			"system is reserved":       {http.MethodPut, "/admin/oauth/profiles/x", map[string]any{"fromAllowList": []string{"system"}}, 400},
			"unknown field":            {http.MethodPut, "/admin/oauth/profiles/x", map[string]any{"colour": "red"}, 400},
			"delete built-in":          {http.MethodDelete, "/admin/oauth/profiles/client-generic", nil, 403},
			"delete unknown":           {http.MethodDelete, "/admin/oauth/profiles/nope", nil, 404},
			"elevate to unknown":       {http.MethodPost, "/admin/oauth/elevate", map[string]any{"clientId": "vp_client_x", "scopeProfile": "nope"}, 404},
			"elevate an unknown":       {http.MethodPost, "/admin/oauth/elevate", map[string]any{"clientId": "vp_client_x", "scopeProfile": "cedar-agent"}, 404},
			"delete an unknown client": {http.MethodDelete, "/admin/oauth/clients/vp_client_x", nil, 404},
		} {
			if r := e.admin(tc.method, tc.path, tc.body); r.status != tc.status {
				t.Errorf("%s: %d, want %d: %s", name, r.status, tc.status, r.body)
			}
		}
		// A profile in use cannot be deleted.
		user := e.tenantToken("acme", "cedar")
		c := e.register(nil)
		e.elevate(c.ID, "cedar-agent", "")
		if r := e.admin(http.MethodDelete, "/admin/oauth/profiles/cedar-agent", nil); r.status != 409 || !strings.Contains(string(r.body), c.ID) {
			t.Fatalf("delete in use: %d %s", r.status, r.body)
		}
		p := newPKCE()
		tk := mustTokens(t, e.exchange(c, e.codeFor(c, p, user), p.verifier))
		e.mustWork(tk.access, "send_message", map[string]any{"channel": "bob", "content": "from cedar"})
		if st, _, text := e.call(tk.access, "send_message", map[string]any{"from": "alice", "channel": "bob", "content": "x"}); st != http.StatusForbidden {
			t.Fatalf("cedar token sent as alice: HTTP %d %s", st, text)
		}
		// Clients are listed without their secret hash.
		r = e.admin(http.MethodGet, "/admin/oauth/clients", nil)
		if r.status != 200 || !strings.Contains(string(r.body), c.ID) || strings.Contains(string(r.body), "clientSecretHash") || !strings.Contains(string(r.body), `"cedar-agent"`) {
			t.Fatalf("list: %s", r.body)
		}
		acts := e.auditActions(t)
		for _, want := range []string{"oauth.profile.seed:ok", "oauth.profile.put:ok", "oauth.client.elevate:ok"} {
			if !contains(acts, want) {
				t.Errorf("audit lacks %s: %v", want, acts)
			}
		}
	})
}

func TestDeleteClientRevokesEverything(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		user := e.tenantToken("acme", "alice")
		c := e.register(map[string]any{"grant_types": []string{"authorization_code", "refresh_token", "client_credentials"}})
		var access []string
		var refresh []string
		for range 3 {
			p := newPKCE()
			tk := mustTokens(t, e.exchange(c, e.codeFor(c, p, user), p.verifier))
			access, refresh = append(access, tk.access), append(refresh, tk.refresh)
		}
		// More tokens than one transaction can carry.
		for range 120 {
			tk := mustTokens(t, e.postForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}, "client_secret": {c.Secret}}, nil))
			access = append(access, tk.access)
		}
		for _, a := range access[:4] {
			e.mustWork(a, "whoami", nil)
		}
		r := e.admin(http.MethodDelete, "/admin/oauth/clients/"+c.ID, nil)
		var res oauth.DeleteResult
		_ = json.Unmarshal(r.body, &res)
		if r.status != 200 || !res.RevokedClient || res.RevokedTokens != 123 || res.RevokedRefresh != 3 {
			t.Fatalf("delete: %d %s", r.status, r.body)
		}
		for i, a := range access {
			if i < 5 || i%20 == 0 || i == len(access)-1 {
				e.mustBeUnauthorized(a, fmt.Sprintf("token %d of a deleted client", i))
			}
			it, err := e.st.Get(context.Background(), auth.TokenKey(auth.HashHex(a)))
			if err != nil {
				t.Fatal(err)
			}
			if tok, _ := auth.DecodeToken(it); tok.RevokedAt == 0 {
				t.Fatalf("token %d not marked revoked", i)
			}
		}
		for _, rt := range refresh {
			if r := e.refresh(c, rt); r.status != 401 || r.json(t)["error"] != "invalid_client" {
				t.Fatalf("refresh of a deleted client: %d %s", r.status, r.body)
			}
		}
		if r := e.postForm("/oauth/token", url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ID}, "client_secret": {c.Secret}}, nil); r.status != 401 {
			t.Fatalf("client_credentials of a deleted client: %d", r.status)
		}
		p := newPKCE()
		if r := e.do(http.MethodGet, "/oauth/authorize?"+authzParams(c, p, "s").Encode(), nil, nil); r.status != 400 {
			t.Fatalf("authorize a deleted client: %d", r.status)
		}
		r = e.admin(http.MethodGet, "/admin/oauth/clients", nil)
		if !strings.Contains(string(r.body), `"revokedAt"`) {
			t.Fatalf("list after delete: %s", r.body)
		}
		if r := e.admin(http.MethodDelete, "/admin/oauth/clients/"+c.ID, nil); r.status != 404 {
			t.Fatalf("second delete: %d", r.status)
		}
	})
}

func TestClientIDMetadataDocument(t *testing.T) {
	const id = "https://app.example.com/oauth/client.json"
	docs := map[string]string{
		id:                                      `{"client_id":"` + id + `","client_name":"Doc Client","redirect_uris":["https://app.example.com/cb"],"token_endpoint_auth_method":"none"}`,
		"https://app.example.com/mismatch.json": `{"client_id":"https://other.example/x","redirect_uris":["https://app.example.com/cb"]}`,
		"https://app.example.com/secret.json":   `{"client_id":"https://app.example.com/secret.json","redirect_uris":["https://app.example.com/cb"],"token_endpoint_auth_method":"client_secret_basic"}`,
		"https://app.example.com/http.json":     `{"client_id":"https://app.example.com/http.json","redirect_uris":["http://app.example.com/cb"]}`,
	}
	fetches := 0
	e := sqliteEnv(t, func(o *oauth.Options) {
		o.FetchClientMetadata = func(_ context.Context, u string) ([]byte, error) {
			fetches++
			if d, ok := docs[u]; ok {
				return []byte(d), nil
			}
			return nil, errors.New("HTTP 404")
		}
	})
	user := e.tenantToken("acme", "alice")
	c := client{ID: id, Redirect: "https://app.example.com/cb"}
	p := newPKCE()
	r := e.do(http.MethodGet, "/oauth/authorize?"+authzParams(c, p, "s").Encode(), nil, nil)
	if r.status != 200 || !strings.Contains(string(r.body), "Doc Client") {
		t.Fatalf("consent for a metadata-document client: %d %s", r.status, r.body)
	}
	tk := mustTokens(t, e.exchange(c, e.codeFor(c, p, user), p.verifier))
	e.mustWork(tk.access, "whoami", nil)
	if fetches != 1 {
		t.Fatalf("%d fetches, want 1 (cached)", fetches)
	}
	for name, cid := range map[string]string{"mismatch": "https://app.example.com/mismatch.json", "confidential": "https://app.example.com/secret.json",
		"http redirect": "https://app.example.com/http.json", "404": "https://app.example.com/missing.json", "root path": "https://app.example.com/"} {
		c := client{ID: cid, Redirect: "https://app.example.com/cb"}
		if r := e.do(http.MethodGet, "/oauth/authorize?"+authzParams(c, p, "s").Encode(), nil, nil); r.status != 400 || r.header.Get("Location") != "" {
			t.Errorf("%s: %d %s", name, r.status, r.header.Get("Location"))
		}
	}
}

func TestDefaultFetcherRefusesPrivateAddresses(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the metadata fetch reached a loopback server: %s", r.URL)
	}))
	defer ts.Close()
	e := sqliteEnv(t, nil)
	c := client{ID: ts.URL + "/client.json", Redirect: "https://app.example.com/cb"}
	r := e.do(http.MethodGet, "/oauth/authorize?"+authzParams(c, newPKCE(), "s").Encode(), nil, nil)
	if r.status != 400 || !strings.Contains(string(r.body), "refused by egress policy: loopback") {
		t.Fatalf("%d %s", r.status, r.body)
	}
}
