package oauth_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/admintokens"
)

// POST/GET/DELETE /admin/tokens mint, list and revoke agent tokens with
// the master token only; each is audited, and a request over a declared
// limit is refused naming the field and the limit.
func TestAdminTokensMintListRevoke(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		r := e.admin(http.MethodPost, "/admin/tokens", admintokens.Request{Tenant: "acme", ActsAs: []string{"alice"},
			Read: []string{"project/x", "orchestrator/alice"}, Write: []string{"orchestrator/alice"}, Label: "remote", TTLSeconds: 3600})
		var created admintokens.Created
		if r.status != 200 || json.Unmarshal(r.body, &created) != nil || len(created.Token) != 64 || created.Record.Tenant != "acme" || created.Record.ExpiresAt == 0 {
			t.Fatalf("create: %d %s", r.status, r.body)
		}
		if strings.Contains(e.mustWork(created.Token, "whoami", nil), "bob") {
			t.Fatal("whoami of alice's token names bob")
		}
		if r := e.admin(http.MethodGet, "/admin/tokens?tenant=acme", nil); r.status != 200 || !strings.Contains(string(r.body), created.Record.ID) || strings.Contains(string(r.body), created.Token) {
			t.Fatalf("list (the id, never the secret): %d %s", r.status, r.body)
		}
		if r := e.admin(http.MethodGet, "/admin/tokens?tenant=other", nil); r.status != 200 || strings.Contains(string(r.body), created.Record.ID) {
			t.Fatalf("list of another tenant: %d %s", r.status, r.body)
		}
		// Only the master token: an agent token may not mint itself more.
		if r := e.do(http.MethodPost, "/admin/tokens", strings.NewReader(`{"tenant":"acme","actsAs":["*"]}`),
			map[string]string{"Authorization": "Bearer " + created.Token}); r.status != 403 {
			t.Fatalf("an agent token on POST /admin/tokens: %d %s", r.status, r.body)
		}
		many := make([]string, admintokens.MaxEntries+1)
		for i := range many {
			many[i] = "project/p" + strings.Repeat("x", i%5)
		}
		for name, tc := range map[string]struct {
			body  any
			field string
		}{
			"too many reads":  {admintokens.Request{Tenant: "acme", ActsAs: []string{"a"}, Read: many}, "read"},
			"too many writes": {admintokens.Request{Tenant: "acme", ActsAs: []string{"a"}, Write: many}, "write"},
			"no actsAs":       {admintokens.Request{Tenant: "acme"}, "actsAs"},
			"long label":      {admintokens.Request{Tenant: "acme", ActsAs: []string{"a"}, Label: strings.Repeat("l", admintokens.MaxLabelBytes+1)}, "label"},
			"ttl":             {admintokens.Request{Tenant: "acme", ActsAs: []string{"a"}, TTLSeconds: -1}, "ttlSeconds"},
			"bad tenant":      {admintokens.Request{Tenant: "Not A Tenant", ActsAs: []string{"a"}}, "tenant"},
			"system":          {admintokens.Request{Tenant: "acme", ActsAs: []string{"system"}}, "as"},
			"unknown field":   {map[string]any{"tenant": "acme", "actsAs": []string{"a"}, "admin": true}, "admin"},
		} {
			if r := e.admin(http.MethodPost, "/admin/tokens", tc.body); r.status != 400 || !strings.Contains(string(r.body), tc.field) {
				t.Errorf("%s: %d %s, want 400 naming %s", name, r.status, r.body, tc.field)
			}
		}
		if r := e.admin(http.MethodDelete, "/admin/tokens/tok_nope", nil); r.status != 404 {
			t.Fatalf("revoke an unknown: %d %s", r.status, r.body)
		}
		if r := e.admin(http.MethodDelete, "/admin/tokens/"+created.Record.ID, nil); r.status != 200 || r.json(t)["revokedAt"] == nil {
			t.Fatalf("revoke: %d %s", r.status, r.body)
		}
		e.mustBeUnauthorized(created.Token, "a token revoked through DELETE /admin/tokens")
		acts := e.auditActions(t)
		for _, want := range []string{"admin.token.create:ok", "admin.token.revoke:ok", "admin.call:refused"} {
			if !contains(acts, want) {
				t.Errorf("audit lacks %s: %v", want, acts)
			}
		}
	})
}
