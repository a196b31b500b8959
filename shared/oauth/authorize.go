package oauth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth/consent"
	"github.com/vantagepeers/vantagepeers/shared/oauth/rights"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// authzRequest is an authorization request (query on GET, form on POST).
type authzRequest struct {
	ClientID, RedirectURI, ResponseType, State string
	Challenge, Method, Scope, Resource, Lang   string
}

func authzFrom(v url.Values) authzRequest {
	return authzRequest{
		ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), ResponseType: v.Get("response_type"), State: v.Get("state"),
		Challenge: v.Get("code_challenge"), Method: v.Get("code_challenge_method"), Scope: v.Get("scope"), Resource: v.Get("resource"), Lang: v.Get("lang"),
	}
}

// authzFailure: before the client and its redirect URI are verified, an
// error is shown on the page (never redirected: no open redirect); after,
// it goes back to the client as error=... on its redirect URI.
type authzFailure struct {
	redirect bool
	code     string
	msg      string // shown on the page (the page's language) or sent as error_description
}

var challengeRE = regexp.MustCompile(`^[A-Za-z0-9_-]{43}$`)

const maxStateBytes = 1024

// checkAuthz validates an authorization request.
func (s *Server) checkAuthz(ctx context.Context, r *http.Request, q authzRequest, t texts) (Client, *authzFailure) {
	if q.ClientID == "" {
		return Client{}, &authzFailure{code: "invalid_request", msg: t.NoClient}
	}
	c, err := s.clientForAuthorize(ctx, q.ClientID)
	if vp.IsKind(err, vp.KindNotFound) {
		return Client{}, &authzFailure{code: "invalid_client", msg: t.UnknownClient}
	}
	if vp.IsKind(err, vp.KindInvalid) {
		return Client{}, &authzFailure{code: "invalid_client", msg: t.BadClientDocument + " " + err.Error()}
	}
	if vp.IsKind(err, vp.KindRateLimited) { // the cap of pending clients
		return Client{}, &authzFailure{code: "temporarily_unavailable", msg: err.Error()}
	}
	if err != nil {
		s.log.ErrorContext(ctx, "loading a client for authorization", "err", err)
		return Client{}, &authzFailure{code: "server_error", msg: t.ServerError}
	}
	if q.RedirectURI == "" || !slices.Contains(c.RedirectURIs, q.RedirectURI) {
		return Client{}, &authzFailure{code: "invalid_request", msg: t.BadRedirect}
	}
	if len(q.State) > maxStateBytes {
		return Client{}, &authzFailure{code: "invalid_request", msg: "state is longer than 1024 bytes"}
	}
	// From here on the client's registered redirect URI receives errors.
	switch {
	case !slices.Contains(c.GrantTypes, grantCode):
		return c, &authzFailure{redirect: true, code: "unauthorized_client", msg: "this client is not registered for the authorization_code grant"}
	case q.ResponseType != "code":
		return c, &authzFailure{redirect: true, code: "unsupported_response_type", msg: "response_type must be code"}
	case q.Challenge == "":
		return c, &authzFailure{redirect: true, code: "invalid_request", msg: "code_challenge is required (PKCE S256)"}
	case q.Method != "S256":
		return c, &authzFailure{redirect: true, code: "invalid_request", msg: "code_challenge_method must be S256"}
	case !challengeRE.MatchString(q.Challenge):
		return c, &authzFailure{redirect: true, code: "invalid_request", msg: "code_challenge must be the 43-character base64url SHA-256 of the verifier"}
	case len(q.Scope) > 1024:
		return c, &authzFailure{redirect: true, code: "invalid_scope", msg: "scope is too long"}
	case scopeErr(q.Scope) != nil:
		return c, &authzFailure{redirect: true, code: "invalid_scope", msg: scopeErr(q.Scope).Error()}
	case q.Resource != "" && !s.ourResource(r, q.Resource):
		return c, &authzFailure{redirect: true, code: "invalid_target", msg: "resource must be this server's MCP endpoint " + s.baseURL(r) + ResourcePath}
	}
	return c, nil
}

func scopeErr(scope string) error {
	_, err := vp.ParseScopes("oauth.authorize", "scope", scope)
	return err
}

func (s *Server) ourResource(r *http.Request, res string) bool {
	base := s.baseURL(r)
	res = strings.TrimSuffix(res, "/")
	return res == base || res == base+ResourcePath
}

// redirectTo sends the browser back to the client with params (and the
// state and issuer). The redirect URI was matched exactly beforehand.
func (s *Server) redirectTo(w http.ResponseWriter, r *http.Request, q authzRequest, params url.Values) {
	u, err := url.Parse(q.RedirectURI)
	if err != nil { // registered URIs were validated; cannot happen
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	}
	v := u.Query()
	for k, vals := range params {
		v[k] = vals
	}
	if q.State != "" {
		v.Set("state", q.State)
	}
	v.Set("iss", s.baseURL(r))
	u.RawQuery = v.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

func (s *Server) authorizeGet(w http.ResponseWriter, r *http.Request) {
	q := authzFrom(r.URL.Query())
	t := consent.Pick(r, q.Lang)
	c, fail := s.checkAuthz(r.Context(), r, q, t)
	if fail != nil {
		s.authzFail(w, r, q, t, fail)
		return
	}
	s.renderConsent(w, r, http.StatusOK, q, c, t, "")
}

func (s *Server) authorizePost(w http.ResponseWriter, r *http.Request) {
	limitBody(w, r, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		if tooLarge(w, err) {
			return
		}
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	if s.consentLimit(w, r) {
		return
	}
	q := authzFrom(r.PostForm)
	t := consent.Pick(r, q.Lang)
	ctx := r.Context()
	c, fail := s.checkAuthz(ctx, r, q, t)
	if fail != nil {
		s.authzFail(w, r, q, t, fail)
		return
	}
	a := Actor{IP: s.clientIP(r), UserAgent: r.UserAgent()}
	switch r.PostForm.Get("action") {
	case "deny":
		s.audit(ctx, AuditRecord{Action: "oauth.authorize", Outcome: "refused", ClientID: c.ClientID, Detail: "denied by the user", IP: a.IP, UserAgent: a.UserAgent})
		s.redirectTo(w, r, q, url.Values{"error": {"access_denied"}, "error_description": {"the user denied the request"}})
		return
	case "approve", "review":
	default:
		s.renderConsent(w, r, http.StatusBadRequest, q, c, t, t.ChooseAction)
		return
	}
	p, secretHash, status, msg := s.signIn(ctx, r.PostForm, q, t)
	if status != 0 {
		s.audit(ctx, AuditRecord{Action: "oauth.authorize", Outcome: "refused", ClientID: c.ClientID, Detail: "invalid sign-in", IP: a.IP, UserAgent: a.UserAgent})
		s.renderConsent(w, r, status, q, c, t, msg)
		return
	}
	if r.PostForm.Get("action") == "review" {
		s.renderReview(w, r, q, c, t, p, secretHash)
		return
	}
	ap, n, status, msg := s.approval(ctx, c, q, p, secretHash, r.PostForm, t)
	if status != 0 {
		s.audit(ctx, AuditRecord{Action: "oauth.authorize", Outcome: "refused", Actor: p.TokenID, ClientID: c.ClientID, Tenant: p.Tenant, Detail: msg, IP: a.IP, UserAgent: a.UserAgent})
		s.renderConsent(w, r, status, q, c, t, msg)
		return
	}
	code := auth.NewSecret()
	now := s.nowMS()
	ac := authCode{ClientID: c.ClientID, RedirectURI: q.RedirectURI, Challenge: q.Challenge, Scope: q.Scope, Resource: q.Resource,
		Tenant: p.Tenant, Approver: ap, Narrowing: n, CreatedAt: now, ExpiresAt: now + s.ttl.code.Milliseconds()}
	it := itemOf(codes, secretRecord[authCode]{hash: auth.HashHex(code), v: ac})
	// A person approved: the client is no longer pending (no TTL, off the
	// cap), in the transaction that issues the code.
	// Only settling can lose to another writer (the client or its hour's
	// counter changed): the code and its audit record are new rows, so a
	// lost write without settling would lose again and is not retried.
	err := table.Conflicts{Op: "oauth.authorize", Field: "client_id", ID: c.ClientID, Max: 5, Unmapped: true}.Retry(ctx, func() error {
		settle, err := s.settleOps(ctx, c.ClientID)
		if err != nil {
			return err
		}
		err = s.st.Write(ctx, append(settle, store.Put(it, store.IfNotExists),
			s.auditOp(AuditRecord{Action: "oauth.authorize", Actor: p.TokenID, ClientID: c.ClientID, Tenant: p.Tenant, Profile: c.ScopeProfile, Detail: "authorization code issued", IP: a.IP, UserAgent: a.UserAgent}))...)
		if len(settle) == 0 && errors.Is(err, store.ErrConditionFailed) {
			return fmt.Errorf("the authorization code or its audit record exists already: %v", err)
		}
		return err
	})
	if err != nil {
		s.log.ErrorContext(ctx, "storing an authorization code", "err", err)
		s.renderConsent(w, r, http.StatusServiceUnavailable, q, c, t, t.ServerError)
		return
	}
	s.log.InfoContext(ctx, "oauth authorization approved", "clientId", c.ClientID, "tenant", p.Tenant, "approver", p.TokenID)
	s.redirectTo(w, r, q, url.Values{"code": {code}})
}

// approval is what the person approves: their token's rights, narrowed by
// the choice the form carries, which must cover every right the client
// asked for by name. A refusal is a status and the message the page shows.
func (s *Server) approval(ctx context.Context, c Client, q authzRequest, p vp.Principal, hash string, form url.Values, t texts) (rights.Approver, rights.Narrowing, int, string) {
	ap := rights.ApproverOf(p, hash)
	n, err := rights.NarrowingOf("oauth.authorize", ap, form.Get("narrow") != "", form["read"], form["write"])
	if err != nil {
		return ap, n, http.StatusBadRequest, err.Error()
	}
	pr, err := s.profileOrDefault(ctx, c.ScopeProfile)
	if err != nil {
		s.log.ErrorContext(ctx, "loading a scope profile", "profileId", c.ScopeProfile, "err", err)
		return ap, n, http.StatusServiceUnavailable, t.ServerError
	}
	wanted, _ := vp.ParseScopes("oauth.authorize", "scope", q.Scope) // checked by checkAuthz
	if missing := rights.Missing(rights.For(ceiling(pr), p.Tenant, &ap, &n), wanted); len(missing) > 0 {
		return ap, n, http.StatusForbidden, t.NotCovered + " " + strings.Join(missing, " ")
	}
	return ap, n, 0, ""
}

func (s *Server) authzFail(w http.ResponseWriter, r *http.Request, q authzRequest, t texts, f *authzFailure) {
	if f.redirect {
		s.redirectTo(w, r, q, url.Values{"error": {f.code}, "error_description": {f.msg}})
		return
	}
	status := http.StatusBadRequest
	if f.code == "server_error" {
		status = http.StatusInternalServerError
	}
	consent.Render(w, status, "", consent.Page{T: t, Lang: t.Lang, Error: f.msg, Fatal: true})
}

// ---- the page (package consent) ----

type texts = consent.Texts

// renderConsent shows step one: the client, what it would get, the token
// field.
func (s *Server) renderConsent(w http.ResponseWriter, r *http.Request, status int, q authzRequest, c Client, t texts, msg string) {
	s.render(w, r, status, q, c, t, msg, nil)
}

// renderReview shows step two: what the client gets from the person who
// signed in, a checkbox per namespace, and the ticket that carries the
// sign-in to the approval.
func (s *Server) renderReview(w http.ResponseWriter, r *http.Request, q authzRequest, c Client, t texts, p vp.Principal, hash string) {
	pr, err := s.profileOrDefault(r.Context(), c.ScopeProfile)
	if err != nil {
		s.renderConsent(w, r, http.StatusServiceUnavailable, q, c, t, t.ServerError)
		return
	}
	ticket, err := s.ticket(r.Context(), q, hash)
	if err != nil {
		s.log.ErrorContext(r.Context(), "signing a consent ticket", "err", err)
		s.renderConsent(w, r, http.StatusServiceUnavailable, q, c, t, t.ServerError)
		return
	}
	ap := rights.ApproverOf(p, hash)
	g := rights.For(ceiling(pr), p.Tenant, &ap, nil)
	msg := ""
	wanted, _ := vp.ParseScopes("oauth.authorize", "scope", q.Scope)
	if missing := rights.Missing(g, wanted); len(missing) > 0 {
		msg = t.NotCovered + " " + strings.Join(missing, " ")
	}
	s.render(w, r, http.StatusOK, q, c, t, msg, &consent.Review{Tenant: g.Tenant, Lists: consent.Lists{ActsAs: g.ActsAs, Read: g.Read, Write: g.Write}, Ticket: ticket})
}

func (s *Server) render(w http.ResponseWriter, r *http.Request, status int, q authzRequest, c Client, t texts, msg string, rv *consent.Review) {
	pr, err := s.profileOrDefault(r.Context(), c.ScopeProfile)
	if err != nil {
		pr = Profile{ID: c.ScopeProfile}
	}
	if d, ok := consent.Description(t.Lang, pr.ID); ok && isDefaultDescription(pr) {
		pr.Description = d
	}
	q.Lang = t.Lang
	host := q.RedirectURI
	if u, err := url.Parse(q.RedirectURI); err == nil {
		host = u.Scheme + "://" + u.Host
	}
	langURL := map[string]string{}
	for _, l := range []string{"en", "fr"} {
		v := url.Values{"client_id": {q.ClientID}, "redirect_uri": {q.RedirectURI}, "response_type": {q.ResponseType}, "code_challenge": {q.Challenge},
			"code_challenge_method": {q.Method}, "lang": {l}}
		for k, val := range map[string]string{"state": q.State, "scope": q.Scope, "resource": q.Resource} {
			if val != "" {
				v.Set(k, val)
			}
		}
		langURL[l] = "/oauth/authorize?" + v.Encode()
	}
	pg := consent.Page{T: t, Lang: t.Lang, Error: msg, ClientName: c.Name, ClientID: c.ClientID, Host: host, ProfileID: pr.ID,
		ProfileDescription: pr.Description, Review: rv, LangURL: langURL, Hidden: []consent.Field{
			{Name: "client_id", Value: q.ClientID}, {Name: "redirect_uri", Value: q.RedirectURI}, {Name: "response_type", Value: q.ResponseType},
			{Name: "state", Value: q.State}, {Name: "code_challenge", Value: q.Challenge}, {Name: "code_challenge_method", Value: q.Method},
			{Name: "scope", Value: q.Scope}, {Name: "resource", Value: q.Resource}, {Name: "lang", Value: t.Lang}}}
	if pr.ID != ProfileGeneric {
		pg.Ceiling = &consent.Lists{ActsAs: pr.FromAllowList, Read: pr.NamespaceReadPrefixes, Write: pr.NamespaceWritePrefixes}
	}
	wanted, _ := vp.ParseScopes("oauth.authorize", "scope", q.Scope)
	pg.Requested = rights.Missing(rights.Grant{}, wanted) // every right named, as scopes
	consent.Render(w, status, host, pg)
}

func isDefaultDescription(p Profile) bool {
	for _, d := range DefaultProfiles {
		if d.ID == p.ID {
			return d.Description == p.Description
		}
	}
	return false
}
