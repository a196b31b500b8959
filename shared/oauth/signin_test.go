package oauth_test

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// person mints alice's agent token with the lists of an everyday agent:
// reads global, project and her own namespace, writes project/web and hers.
func (e *env) person(tenant string) (secret string, tok auth.Token) {
	e.t.Helper()
	secret, tok, err := e.tokens.Create(context.Background(), auth.Spec{Tenant: tenant, ActsAs: []string{"alice"},
		ReadPrefixes: []string{"global", "project", "orchestrator/alice"}, WritePrefixes: []string{"project/web", "orchestrator/alice"}})
	if err != nil {
		e.t.Fatal(err)
	}
	return secret, tok
}

type whoami struct {
	Tenant         string   `json:"tenant"`
	OrchestratorID string   `json:"orchestratorId"`
	Orchestrators  []string `json:"actsAs"`
	Read           []string `json:"namespaceReadPrefixes"`
	Write          []string `json:"namespaceWritePrefixes"`
	Admin          bool     `json:"admin"`
}

func (e *env) whoami(token string) whoami {
	e.t.Helper()
	var w whoami
	if err := json.Unmarshal([]byte(e.mustWork(token, "whoami", nil)), &w); err != nil {
		e.t.Fatal(err)
	}
	return w
}

// A client on the default profile that a person approves with their agent
// token gets that token's identity, tenant and namespaces — exactly, with
// no admin step — and acts as that person at once.
func TestSignInCarriesThePersonsRights(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		secret, tok := e.person("acme")
		_, tk := e.fullFlow(secret, nil)
		w := e.whoami(tk.access)
		if w.Tenant != "acme" || w.OrchestratorID != "alice" || w.Admin || !slices.Equal(w.Read, tok.ReadPrefixes) || !slices.Equal(w.Write, tok.WritePrefixes) {
			t.Fatalf("whoami %+v, want the lists of %+v", w, tok)
		}
		out := e.mustWork(tk.access, "send_message", map[string]any{"channel": "bob", "content": "from alice's client"})
		if !strings.Contains(e.mustWork(tk.access, "list_messages", nil), "from alice's client") || !strings.Contains(out, "messageId") {
			t.Fatalf("send_message as alice: %s", out)
		}
	})
}

// A call outside the person's rights answers an OAuth client 403
// insufficient_scope naming the scope it needed (and mcp:full, so that a
// host that replaces its scope with the challenge's keeps the rest).
func TestOutsideTheGrantAnswersInsufficientScope(t *testing.T) {
	e := sqliteEnv(t, nil)
	secret, _ := e.person("acme")
	_, tk := e.fullFlow(secret, nil)
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_message","arguments":{"from":"bob","channel":"carol","content":"x"}}}`
	r := e.do(http.MethodPost, "/mcp", strings.NewReader(body), map[string]string{
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + tk.access})
	want := `Bearer error="insufficient_scope", scope="mcp:full as:bob", resource_metadata="` + e.url + `/.well-known/oauth-protected-resource"`
	if r.status != http.StatusForbidden || !strings.HasPrefix(r.header.Get("WWW-Authenticate"), want) {
		t.Fatalf("send as bob: HTTP %d WWW-Authenticate %q, want 403 %q\n%s", r.status, r.header.Get("WWW-Authenticate"), want, r.body)
	}
	if m := r.json(t); m["error"] != "insufficient_scope" || !strings.Contains(m["error_description"].(string), `may not act as "bob"`) {
		t.Fatalf("403 body %s", r.body)
	}
	// The agent token itself keeps the tool error.
	if st, isErr, text := e.call(secret, "send_message", map[string]any{"from": "bob", "channel": "carol", "content": "x"}); st != 200 || !isErr || !strings.Contains(text, "forbidden") {
		t.Fatalf("agent token: HTTP %d isError=%v %s", st, isErr, text)
	}
}

// Attack: the client asks by name for a right the signing-in token does not
// have. The approval is refused on the page (no code), naming the right;
// with a token that has it, the same request is approved.
func TestConsentAskingForMoreThanTheTokenIsRefused(t *testing.T) {
	e := sqliteEnv(t, nil)
	secret, _ := e.person("acme")
	c := e.register(nil)
	p := newPKCE()
	v := authzParams(c, p, "st")
	v.Set("scope", "mcp:full ns:write:project/secret as:bob")
	v.Set("token", secret)
	v.Set("action", "approve")
	r := e.postForm("/oauth/authorize", v, nil)
	if r.status != http.StatusForbidden || r.header.Get("Location") != "" || !strings.Contains(string(r.body), "ns:write:project/secret as:bob") {
		t.Fatalf("approval beyond the token: HTTP %d Location %q\n%s", r.status, r.header.Get("Location"), r.body)
	}
	wide := e.tenantToken("acme", "alice", "bob")
	v.Set("token", wide)
	if r := e.postForm("/oauth/authorize", v, nil); r.status != http.StatusSeeOther {
		t.Fatalf("approval by a token that has them: HTTP %d\n%s", r.status, r.body)
	}
}

// The person narrows the grant on the consent page; a forged narrowing field
// (a namespace the token does not have) is refused, naming it, and never
// widens anything.
func TestNarrowingOnTheConsentPage(t *testing.T) {
	e := sqliteEnv(t, nil)
	secret, _ := e.person("acme")
	c := e.register(nil)
	post := func(read, write []string) resp {
		p := newPKCE()
		v := authzParams(c, p, "st")
		v.Set("token", secret)
		v.Set("action", "approve")
		v.Set("narrow", "1")
		v["read"], v["write"] = read, write
		r := e.postForm("/oauth/authorize", v, nil)
		if r.status == http.StatusSeeOther {
			u, _ := url.Parse(r.header.Get("Location"))
			r.body, _ = json.Marshal(e.whoami(mustTokens(t, e.exchange(c, u.Query().Get("code"), p.verifier)).access))
		}
		return r
	}
	r := post([]string{"project"}, nil)
	var w whoami
	_ = json.Unmarshal(r.body, &w)
	if r.status != http.StatusSeeOther || !slices.Equal(w.Read, []string{"project"}) || len(w.Write) != 0 || w.OrchestratorID != "alice" {
		t.Fatalf("narrowed to reading project: HTTP %d %s", r.status, r.body)
	}
	for _, forged := range []struct {
		read, write []string
		field       string
	}{{[]string{"project"}, []string{"*"}, "write"}, {[]string{"orchestrator/bob"}, nil, "read"}, {nil, []string{"project"}, "write"}} {
		r := post(forged.read, forged.write)
		if r.status != http.StatusBadRequest || r.header.Get("Location") != "" || !strings.Contains(string(r.body), forged.field+": ") {
			t.Errorf("forged %+v: HTTP %d\n%s", forged, r.status, r.body)
		}
	}
}

// Revoking the token a person signed in with ends the client's grant: its
// access token is refused at the next call (401 naming the reason) and its
// refresh token no longer refreshes.
func TestRevokedApproverEndsTheGrant(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		secret, tok := e.person("acme")
		c, tk := e.fullFlow(secret, nil)
		e.mustWork(tk.access, "whoami", nil)
		if _, err := e.tokens.Revoke(context.Background(), tok.ID); err != nil {
			t.Fatal(err)
		}
		r := e.do(http.MethodPost, "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), map[string]string{
			"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Authorization": "Bearer " + tk.access})
		if r.status != http.StatusUnauthorized || !strings.Contains(r.header.Get("WWW-Authenticate"), "on the approval of token "+tok.ID) {
			t.Fatalf("after the revocation: HTTP %d %q", r.status, r.header.Get("WWW-Authenticate"))
		}
		rr := e.refresh(c, tk.refresh)
		if m := rr.json(t); rr.status != http.StatusBadRequest || m["error"] != "invalid_grant" || !strings.Contains(m["error_description"].(string), tok.ID) {
			t.Fatalf("refresh after the revocation: HTTP %d %s", rr.status, rr.body)
		}
	})
}

// Rotating the master token ends the grants it approved: a server started
// with another master token (the same store) refuses their access tokens
// and their refresh, while the server that kept it still serves them.
func TestRotatedMasterTokenEndsItsGrants(t *testing.T) {
	e := sqliteEnv(t, nil)
	c, tk := e.fullFlow(e.master, nil)
	e.mustWork(tk.access, "whoami", nil)
	rotated := newEnv(t, e.st, e.clock, nil)
	rotated.mustBeUnauthorized(tk.access, "an access token approved by the old master token")
	rr := rotated.refresh(c, tk.refresh)
	if m := rr.json(t); rr.status != http.StatusBadRequest || m["error"] != "invalid_grant" || !strings.Contains(m["error_description"].(string), "master") {
		t.Fatalf("refresh after the rotation: HTTP %d %s", rr.status, rr.body)
	}
	if rr := e.refresh(c, tk.refresh); rr.status != http.StatusBadRequest {
		t.Fatalf("the refused refresh revoked the grant, yet the old server refreshed it: HTTP %d %s", rr.status, rr.body)
	}
}

// An approval by a token that expires ends with it too: the refresh after
// its expiry is refused.
func TestExpiredApproverEndsTheRefresh(t *testing.T) {
	e := sqliteEnv(t, nil)
	secret, tok, err := e.tokens.Create(context.Background(), auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}, ReadPrefixes: []string{"project"}, TTL: 2 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c, tk := e.fullFlow(secret, nil)
	e.clock.Add(90 * time.Minute) // the access token (1 h) expired, the approver not yet
	tk = mustTokens(t, e.refresh(c, tk.refresh))
	e.mustWork(tk.access, "whoami", nil)
	e.clock.Add(time.Hour)
	if rr := e.refresh(c, tk.refresh); rr.status != http.StatusBadRequest || !strings.Contains(string(rr.body), tok.ID) {
		t.Fatalf("refresh after the approver expired: HTTP %d %s", rr.status, rr.body)
	}
}

// hiddenFields are the hidden inputs of a rendered page.
func hiddenFields(page string) url.Values {
	v := url.Values{}
	for _, m := range regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`).FindAllStringSubmatch(page, -1) {
		v.Set(m[1], html.UnescapeString(m[2]))
	}
	return v
}

// The two steps of the page: signing in shows what the client will get
// (tenant, identity, a checked box per namespace) without echoing the
// token; approving with some boxes unticked narrows the grant. The ticket
// that carries the sign-in is bound to the request and to the token: an
// altered one, one for another request, or one whose token was revoked
// meanwhile approves nothing.
func TestConsentReviewShowsAndNarrows(t *testing.T) {
	e := sqliteEnv(t, nil)
	secret, tok := e.person("acme")
	c := e.register(nil)
	p := newPKCE()
	v := authzParams(c, p, "st")
	v.Set("token", secret)
	v.Set("action", "review")
	r := e.postForm("/oauth/authorize", v, nil)
	page := string(r.body)
	if r.status != http.StatusOK || strings.Contains(page, secret) || !strings.Contains(page, `id="grant-tenant">acme<`) || !strings.Contains(page, `id="grant-acts-as">alice<`) {
		t.Fatalf("review: HTTP %d\n%s", r.status, page)
	}
	boxes := regexp.MustCompile(`<input type="checkbox" id="(read|write)-\d+" name="(read|write)" value="([^"]+)" checked><label for="(read|write)-\d+">`).FindAllStringSubmatch(page, -1)
	if len(boxes) != len(tok.ReadPrefixes)+len(tok.WritePrefixes) {
		t.Fatalf("%d checkboxes, want one per namespace of %v %v\n%s", len(boxes), tok.ReadPrefixes, tok.WritePrefixes, page)
	}
	form := hiddenFields(page)
	if form.Get("ticket") == "" || form.Get("narrow") != "1" || form.Get("token") != "" {
		t.Fatalf("review form %v", form)
	}
	approve := func(f url.Values) resp {
		f = cloneValues(f)
		f.Set("action", "approve")
		f["read"], f["write"] = []string{"project"}, []string{"project/web"}
		return e.postForm("/oauth/authorize", f, nil)
	}
	// Tampered tickets: another token's hash, another request's challenge.
	wide := e.tenantToken("acme", "alice", "bob")
	parts := strings.SplitN(form.Get("ticket"), ".", 3)
	forged := cloneValues(form)
	forged.Set("ticket", parts[0]+"."+auth.HashHex(wide)+"."+parts[2])
	other := cloneValues(form)
	other.Set("code_challenge", newPKCE().challenge)
	for name, f := range map[string]url.Values{"another token's hash": forged, "another request": other} {
		if r := approve(f); r.status != http.StatusBadRequest || r.header.Get("Location") != "" || !strings.Contains(string(r.body), "expired or was altered") {
			t.Errorf("%s: HTTP %d %s", name, r.status, r.header.Get("Location"))
		}
	}
	r = approve(form)
	if r.status != http.StatusSeeOther {
		t.Fatalf("approve with the ticket: HTTP %d\n%s", r.status, r.body)
	}
	u, _ := url.Parse(r.header.Get("Location"))
	w := e.whoami(mustTokens(t, e.exchange(c, u.Query().Get("code"), p.verifier)).access)
	if !slices.Equal(w.Read, []string{"project"}) || !slices.Equal(w.Write, []string{"project/web"}) || w.OrchestratorID != "alice" {
		t.Fatalf("narrowed grant %+v", w)
	}
	if _, err := e.tokens.Revoke(context.Background(), tok.ID); err != nil {
		t.Fatal(err)
	}
	if r := approve(form); r.status != http.StatusUnauthorized || r.header.Get("Location") != "" {
		t.Fatalf("a ticket of a revoked token: HTTP %d %s", r.status, r.header.Get("Location"))
	}
}

func cloneValues(v url.Values) url.Values {
	out := url.Values{}
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
