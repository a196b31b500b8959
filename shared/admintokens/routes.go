package admintokens

import (
	"net/http"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Hooks are what the admin API (shared/oauth) lends the token endpoints.
type Hooks struct {
	Tokens *auth.Tokens
	Store  store.Store
	// Admin admits the master token only (and audits a refusal); actor
	// names the caller in the audit log.
	Admin func(h func(w http.ResponseWriter, r *http.Request, actor string)) http.HandlerFunc
	// Audit is the write of one audit record.
	Audit   func(r *http.Request, actor, action, tenant, tokenID, detail string) store.Op
	Decode  func(w http.ResponseWriter, r *http.Request, v any) bool
	Respond func(w http.ResponseWriter, r *http.Request, v any, err error)
}

// Routes registers POST /admin/tokens, GET /admin/tokens and
// DELETE /admin/tokens/{id} on m.
func Routes(m *http.ServeMux, h Hooks) {
	m.HandleFunc("POST /admin/tokens", h.Admin(func(w http.ResponseWriter, r *http.Request, actor string) {
		var in Request
		if !h.Decode(w, r, &in) {
			return
		}
		var secret string
		var tok auth.Token
		var put store.Op
		spec, err := in.Spec()
		if err == nil {
			secret, tok, put, err = h.Tokens.Prepare(spec)
		}
		if err == nil { // the token and its audit record are one write
			err = vp.Wrap("admin.token.create", vp.KindInternal, h.Store.Write(r.Context(), put,
				h.Audit(r, actor, "admin.token.create", tok.Tenant, tok.ID, "acts as "+strings.Join(tok.ActsAs, ","))))
		}
		h.Respond(w, r, Created{Token: secret, Record: tok}, err)
	}))
	m.HandleFunc("GET /admin/tokens", h.Admin(func(w http.ResponseWriter, r *http.Request, _ string) {
		toks, err := h.Tokens.List(r.Context(), r.URL.Query().Get("tenant"))
		h.Respond(w, r, map[string]any{"tokens": append([]auth.Token{}, toks...)}, err)
	}))
	m.HandleFunc("DELETE /admin/tokens/{id}", h.Admin(func(w http.ResponseWriter, r *http.Request, actor string) {
		tok, err := h.Tokens.Revoke(r.Context(), r.PathValue("id"))
		if err == nil {
			// A revocation is final and a second one answers the same: a
			// lost audit record is a 500, and the retry writes it.
			err = vp.Wrap("admin.token.revoke", vp.KindInternal,
				h.Store.Write(r.Context(), h.Audit(r, actor, "admin.token.revoke", tok.Tenant, tok.ID, "")))
		}
		h.Respond(w, r, tok, err)
	}))
}
