package oauth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth/rights"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Authorization codes, refresh tokens and grant families are credential
// lookups: global keys on the SHA-256 of the secret (never the secret).

// codeReplayWindow is how long a used code is kept to recognise a replay.
const codeReplayWindow = 10 * 60 // seconds

// authCode is a pending authorization: single use, short-lived, bound to
// the client, the redirect URI and the PKCE challenge.
type authCode struct {
	ClientID    string           `json:"clientId"`
	RedirectURI string           `json:"redirectUri"`
	Challenge   string           `json:"codeChallenge"`
	Scope       string           `json:"scope,omitempty"`
	Resource    string           `json:"resource,omitempty"`
	Tenant      string           `json:"tenant"`
	Approver    rights.Approver  `json:"approver"`
	Narrowing   rights.Narrowing `json:"narrowing,omitzero"`
	CreatedAt   int64            `json:"createdAt"`
	ExpiresAt   int64            `json:"expiresAt"`
	UsedAt      int64            `json:"usedAt,omitempty"`
	FamilyID    string           `json:"familyId,omitempty"`
}

// family is one grant: the chain of refresh tokens issued from one
// authorization. It names the current refresh and access tokens, so that
// presenting an older refresh token (a reuse) revokes the live ones.
type family struct {
	ID          string            `json:"familyId"`
	ClientID    string            `json:"clientId"`
	Tenant      string            `json:"tenant"`
	Approver    *rights.Approver  `json:"approver,omitempty"`
	Narrowing   *rights.Narrowing `json:"narrowing,omitempty"`
	RefreshHash string            `json:"refreshHash"`
	AccessHash  string            `json:"accessHash"`
	Rotations   int               `json:"rotations"`
	CreatedAt   int64             `json:"createdAt"`
	UpdatedAt   int64             `json:"updatedAt,omitempty"`
	ExpiresAt   int64             `json:"expiresAt"`
	RevokedAt   int64             `json:"revokedAt,omitempty"`
}

type refreshToken struct {
	FamilyID  string `json:"familyId"`
	ClientID  string `json:"clientId"`
	CreatedAt int64  `json:"createdAt"`
	ExpiresAt int64  `json:"expiresAt"`
}

// errClientDeleted answers a grant whose client disappeared meanwhile: every
// token requires its client's item, so the write's condition failed.
var errClientDeleted = &tokenError{status: http.StatusUnauthorized, code: "invalid_client", desc: "the client was deleted"}

// commitGrant writes the issuance of a code or refresh grant. A failed
// condition is either a concurrent redemption (the lost write is returned:
// the caller's table.Conflicts retries, and the loser then finds the grant
// used) or a deleted client (refused).
func (s *Server) commitGrant(ctx context.Context, clientID string, ops []store.Op) error {
	err := s.st.Write(ctx, ops...)
	if errors.Is(err, store.ErrConditionFailed) {
		if _, _, cerr := s.loadClient(ctx, clientID); cerr != nil {
			return errClientDeleted
		}
	}
	return err
}

func (s *Server) familyItem(f family) store.Item { return itemOf(families, f) }

// tokenResponse is the RFC 6749 §5.1 body.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope"`
}

// tokenError is a refusal of the token endpoint.
type tokenError struct {
	status      int
	code, desc  string
	basicHeader bool
}

func (e *tokenError) Error() string { return e.code + ": " + e.desc }

func invalidGrant(desc string) *tokenError {
	return &tokenError{status: http.StatusBadRequest, code: "invalid_grant", desc: desc}
}

func writeTokenError(w http.ResponseWriter, err error) {
	var te *tokenError
	if !errors.As(err, &te) {
		writeError(w, http.StatusInternalServerError, "server_error", "the token could not be issued; retry")
		return
	}
	if te.basicHeader {
		w.Header().Set("WWW-Authenticate", `Basic realm="vantagepeers"`)
	}
	writeError(w, te.status, te.code, te.desc)
}

// token is the token endpoint.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	limitBody(w, r, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		if tooLarge(w, err) {
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request", "send application/x-www-form-urlencoded parameters")
		return
	}
	c, err := s.authenticateClient(r)
	if err != nil {
		writeTokenError(w, err)
		return
	}
	var resp tokenResponse
	switch gt := r.PostForm.Get("grant_type"); gt {
	case grantCode:
		resp, err = s.redeemCode(r, c)
	case grantRefresh:
		resp, err = s.refresh(r, c)
	case grantClientCredentials:
		resp, err = s.clientCredentials(r, c)
	case "":
		err = &tokenError{status: http.StatusBadRequest, code: "invalid_request", desc: "grant_type is required"}
	default:
		err = &tokenError{status: http.StatusBadRequest, code: "unsupported_grant_type", desc: "use authorization_code, refresh_token or client_credentials"}
	}
	if err != nil {
		var te *tokenError
		if !errors.As(err, &te) {
			s.log.ErrorContext(r.Context(), "token endpoint", "clientId", c.ClientID, "err", err)
		} else {
			s.log.InfoContext(r.Context(), "token refused", "clientId", c.ClientID, "grantType", r.PostForm.Get("grant_type"), "error", te.code, "reason", te.desc)
		}
		writeTokenError(w, err)
		return
	}
	w.Header().Set("Pragma", "no-cache")
	writeJSON(w, http.StatusOK, resp)
}

// authenticateClient checks the client's credentials: HTTP Basic or the
// form's client_id/client_secret for a confidential client, client_id alone
// for a public one.
func (s *Server) authenticateClient(r *http.Request) (Client, error) {
	id, secret, basic := r.BasicAuth()
	if basic {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil || r.PostForm.Get("client_secret") != "" {
			return Client{}, &tokenError{status: http.StatusBadRequest, code: "invalid_request", desc: "use one client authentication method"}
		}
		if fid := r.PostForm.Get("client_id"); fid != "" && fid != id {
			return Client{}, &tokenError{status: http.StatusBadRequest, code: "invalid_request", desc: "client_id does not match the Basic credentials"}
		}
	} else {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	bad := &tokenError{status: http.StatusUnauthorized, code: "invalid_client", desc: "client authentication failed", basicHeader: basic}
	if id == "" {
		bad.desc = "client_id is required"
		return Client{}, bad
	}
	c, _, err := s.loadClient(r.Context(), id)
	if vp.IsKind(err, vp.KindNotFound) {
		bad.desc = "unknown client: register again (POST /oauth/register)"
		return Client{}, bad
	}
	if err != nil {
		return Client{}, err
	}
	if c.confidential() {
		if secret == "" {
			bad.desc = "this client must authenticate with its client_secret"
			return Client{}, bad
		}
		got := auth.HashHex(secret)
		if subtle.ConstantTimeCompare([]byte(got), []byte(c.SecretHash)) != 1 {
			return Client{}, bad
		}
	}
	return c, nil
}

// pkceOK checks a PKCE S256 verifier against the challenge.
func pkceOK(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for _, c := range verifier {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	want := base64.RawURLEncoding.EncodeToString(sum[:])
	return subtle.ConstantTimeCompare([]byte(want), []byte(challenge)) == 1
}

// accessSpec is the auth token an OAuth grant issues.
func (s *Server) accessSpec(c Client, g rights.Grant, ap *rights.Approver, familyID string) auth.Spec {
	k := clientKey(c.ClientID)
	approver := ""
	if ap != nil {
		approver = ap.Hash
	}
	return auth.Spec{Approver: approver,
		Tenant: g.Tenant, ActsAs: g.ActsAs, ReadPrefixes: g.Read, WritePrefixes: g.Write, Admin: g.Admin,
		Scopes: []string{ScopeMCP, "profile:" + g.Profile}, Label: "oauth: " + truncate(c.Name, 100), TTL: s.ttl.access,
		Kind: "oauth", ClientID: c.ClientID, FamilyID: familyID, Requires: &k,
	}
}

// redeemCode is the authorization_code grant. Consuming the code is one
// conditional write (its version) in the transaction that issues the
// tokens, so exactly one redemption wins; a second one revokes what the
// first got (RFC 6749 §4.1.2).
func (s *Server) redeemCode(r *http.Request, c Client) (tokenResponse, error) {
	ctx := r.Context()
	code, verifier, redirect := r.PostForm.Get("code"), r.PostForm.Get("code_verifier"), r.PostForm.Get("redirect_uri")
	if code == "" || verifier == "" {
		return tokenResponse{}, &tokenError{status: http.StatusBadRequest, code: "invalid_request", desc: "code and code_verifier are required"}
	}
	if !slices.Contains(c.GrantTypes, grantCode) {
		return tokenResponse{}, &tokenError{status: http.StatusBadRequest, code: "unauthorized_client", desc: "this client is not registered for authorization_code"}
	}
	key := codeKey(auth.HashHex(code))
	var resp tokenResponse
	err := table.Conflicts{Op: "oauth.token", Field: "code", Max: 5, Unmapped: true, Exhausted: func() error {
		return invalidGrant("the authorization code is being redeemed concurrently")
	}}.Retry(ctx, func() error {
		ac, it, err := getJSON[authCode](ctx, s.st, key)
		if errors.Is(err, store.ErrNotFound) {
			return invalidGrant("the authorization code is unknown or expired")
		}
		if err != nil {
			return err
		}
		now := s.nowMS()
		switch {
		case ac.ClientID != c.ClientID:
			return invalidGrant("the authorization code was issued to another client")
		case ac.UsedAt != 0:
			s.revokeFamily(ctx, ac.FamilyID, Actor{ID: c.ClientID, IP: s.clientIP(r), UserAgent: r.UserAgent()}, "authorization code replayed")
			return invalidGrant("the authorization code was already used; the tokens issued for it are revoked")
		case ac.ExpiresAt <= now:
			return invalidGrant("the authorization code has expired; authorize again")
		case redirect != ac.RedirectURI:
			return invalidGrant("redirect_uri does not match the one of the authorization request")
		case !pkceOK(verifier, ac.Challenge):
			return invalidGrant("code_verifier does not match the code_challenge (PKCE S256)")
		case r.PostForm.Get("resource") != "" && ac.Resource != "" && r.PostForm.Get("resource") != ac.Resource:
			return &tokenError{status: http.StatusBadRequest, code: "invalid_target", desc: "resource does not match the authorization request"}
		}
		pr, err := s.profileOrDefault(ctx, c.ScopeProfile)
		if err != nil {
			return err
		}
		g := rights.For(ceiling(pr), ac.Tenant, &ac.Approver, &ac.Narrowing)
		f := family{ID: s.ids.New("fam"), ClientID: c.ClientID, Tenant: ac.Tenant, Approver: &ac.Approver, Narrowing: &ac.Narrowing, CreatedAt: now, ExpiresAt: now + s.ttl.refresh.Milliseconds()}
		r1, ops, err := s.issue(c, g, &f)
		if err != nil {
			return err
		}
		ac.UsedAt, ac.FamilyID = now, f.ID
		it.Data = mustJSON(ac)
		ops = append(ops, store.Put(it, store.IfVersion(it.Version)), store.Put(s.familyItem(f), store.IfNotExists),
			s.auditOp(AuditRecord{Action: "oauth.token.issue", Actor: ac.Approver.TokenID, ClientID: c.ClientID, Tenant: g.Tenant, FamilyID: f.ID, Profile: g.Profile, Detail: grantCode, IP: s.clientIP(r), UserAgent: r.UserAgent()}))
		if err := s.commitGrant(ctx, c.ClientID, ops); err != nil {
			return err
		}
		resp = r1
		s.log.InfoContext(ctx, "oauth tokens issued", "grantType", grantCode, "clientId", c.ClientID, "tenant", g.Tenant, "profile", g.Profile, "familyId", f.ID)
		return nil
	})
	if err != nil {
		return tokenResponse{}, err
	}
	return resp, nil
}

// issue prepares an access token (and, with a family, a refresh token) and
// the writes that store them; the client must still exist when they land.
func (s *Server) issue(c Client, g rights.Grant, f *family) (tokenResponse, []store.Op, error) {
	famID := ""
	var ap *rights.Approver
	if f != nil {
		famID, ap = f.ID, f.Approver
	}
	access, _, atOp, err := s.tokens.Prepare(s.accessSpec(c, g, ap, famID))
	if err != nil {
		return tokenResponse{}, nil, err
	}
	resp := tokenResponse{AccessToken: access, TokenType: "Bearer", ExpiresIn: int64(s.ttl.access.Seconds()), Scope: ScopeMCP}
	ops := []store.Op{atOp, store.Check(clientKey(c.ClientID), store.IfExists)}
	if f == nil {
		return resp, ops, nil
	}
	now := s.nowMS()
	refresh := auth.NewSecret()
	rh := auth.HashHex(refresh)
	rt := refreshToken{FamilyID: f.ID, ClientID: c.ClientID, CreatedAt: now, ExpiresAt: now + s.ttl.refresh.Milliseconds()}
	ops = append(ops, store.Put(itemOf(refreshTokens, secretRecord[refreshToken]{hash: rh, v: rt}), store.IfNotExists))
	f.RefreshHash, f.AccessHash = rh, auth.HashHex(access)
	resp.RefreshToken = refresh
	return resp, ops, nil
}

// refresh is the refresh_token grant with rotation. The family names its
// current refresh token; an older one presented again is a reuse, which
// revokes the family (its live access and refresh tokens).
func (s *Server) refresh(r *http.Request, c Client) (tokenResponse, error) {
	ctx := r.Context()
	presented := r.PostForm.Get("refresh_token")
	if presented == "" {
		return tokenResponse{}, &tokenError{status: http.StatusBadRequest, code: "invalid_request", desc: "refresh_token is required"}
	}
	hash := auth.HashHex(presented)
	var resp tokenResponse
	err := table.Conflicts{Op: "oauth.token", Field: "refresh_token", Max: 5, Unmapped: true, Exhausted: func() error {
		return invalidGrant("the refresh token is being used concurrently")
	}}.Retry(ctx, func() error {
		rt, _, err := getJSON[refreshToken](ctx, s.st, refreshKey(hash))
		if errors.Is(err, store.ErrNotFound) {
			return invalidGrant("the refresh token is unknown or expired")
		}
		if err != nil {
			return err
		}
		if rt.ClientID != c.ClientID {
			return invalidGrant("the refresh token was issued to another client")
		}
		f, famIt, err := getJSON[family](ctx, s.st, familyKey(rt.FamilyID))
		if errors.Is(err, store.ErrNotFound) {
			return invalidGrant("the grant has expired; authorize again")
		}
		if err != nil {
			return err
		}
		now := s.nowMS()
		switch {
		case f.RevokedAt != 0:
			return invalidGrant("the grant was revoked; authorize again")
		case f.RefreshHash != hash:
			s.revokeFamily(ctx, f.ID, Actor{ID: c.ClientID, IP: s.clientIP(r), UserAgent: r.UserAgent()}, "rotated refresh token reused")
			return invalidGrant("the refresh token was already used; the whole grant is revoked — authorize again")
		case rt.ExpiresAt <= now:
			return invalidGrant("the refresh token has expired; authorize again")
		}
		pr, err := s.profileOrDefault(ctx, c.ScopeProfile)
		if err != nil {
			return err
		}
		if err := s.approverLive(ctx, f.Approver); err != nil {
			s.revokeFamily(ctx, f.ID, Actor{ID: c.ClientID, IP: s.clientIP(r), UserAgent: r.UserAgent()}, "the approving token is no longer valid")
			return err
		}
		g := rights.For(ceiling(pr), f.Tenant, f.Approver, f.Narrowing)
		oldAccess := f.AccessHash
		r1, ops, err := s.issue(c, g, &f)
		if err != nil {
			return err
		}
		if atIt, err := s.st.Get(ctx, auth.TokenKey(oldAccess)); err == nil {
			if op, ok, err := auth.RevokeOp(atIt, now); err == nil && ok {
				ops = append(ops, op)
			}
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		f.Rotations++
		f.UpdatedAt, f.ExpiresAt = now, now+s.ttl.refresh.Milliseconds()
		ops = append(ops, store.Put(s.familyItem(f), store.IfVersion(famIt.Version)),
			s.auditOp(AuditRecord{Action: "oauth.token.issue", Actor: c.ClientID, ClientID: c.ClientID, Tenant: g.Tenant, FamilyID: f.ID, Profile: g.Profile, Detail: grantRefresh, IP: s.clientIP(r), UserAgent: r.UserAgent()}))
		if err := s.commitGrant(ctx, c.ClientID, ops); err != nil {
			return err
		}
		resp = r1
		s.log.InfoContext(ctx, "oauth tokens issued", "grantType", grantRefresh, "clientId", c.ClientID, "tenant", g.Tenant, "profile", g.Profile, "familyId", f.ID)
		return nil
	})
	if err != nil {
		return tokenResponse{}, err
	}
	return resp, nil
}

// clientCredentials is the client_credentials grant: the client's profile
// in the client's tenant, no refresh token.
func (s *Server) clientCredentials(r *http.Request, c Client) (tokenResponse, error) {
	ctx := r.Context()
	if !c.confidential() || !slices.Contains(c.GrantTypes, grantClientCredentials) {
		return tokenResponse{}, &tokenError{status: http.StatusBadRequest, code: "unauthorized_client", desc: "this client is not registered for client_credentials (it needs a secret and the grant type)"}
	}
	pr, err := s.profileOrDefault(ctx, c.ScopeProfile)
	if err != nil {
		return tokenResponse{}, err
	}
	g := rights.For(ceiling(pr), c.Tenant, nil, nil)
	resp, ops, err := s.issue(c, g, nil)
	if err != nil {
		return tokenResponse{}, err
	}
	ops = append(ops, s.auditOp(AuditRecord{Action: "oauth.token.issue", Actor: c.ClientID, ClientID: c.ClientID, Tenant: g.Tenant, Profile: g.Profile, Detail: grantClientCredentials, IP: s.clientIP(r), UserAgent: r.UserAgent()}))
	if err := s.st.Write(ctx, ops...); errors.Is(err, store.ErrConditionFailed) {
		return tokenResponse{}, errClientDeleted
	} else if err != nil {
		return tokenResponse{}, err
	}
	s.log.InfoContext(ctx, "oauth tokens issued", "grantType", grantClientCredentials, "clientId", c.ClientID, "tenant", g.Tenant, "profile", g.Profile)
	return resp, nil
}

// approverLive refuses a refresh whose approving token was revoked or
// expired since: the grant ends with it.
func (s *Server) approverLive(ctx context.Context, ap *rights.Approver) error {
	if ap == nil || ap.Hash == "" {
		return nil
	}
	_, err := s.tokens.Live(ctx, ap.Hash)
	if r := auth.Refusal(err); r != nil && ap.TokenID == auth.MasterPrincipal("").TokenID {
		return invalidGrant("the master token, which approved this grant, was changed since; authorize again")
	} else if r != nil {
		return invalidGrant("token " + ap.TokenID + ", which approved this grant, is no longer valid (" + string(r.Reason) + "); authorize again")
	}
	return err
}

// revokeFamily marks a grant revoked along with its live access token.
func (s *Server) revokeFamily(ctx context.Context, id string, a Actor, reason string) {
	if id == "" {
		return
	}
	// Five lost writes end it without a word, as the grant's other writers
	// (a refresh, another revocation) kept winning.
	err := table.Conflicts{Op: "oauth.token.revoke", Field: "familyId", ID: id, Max: 5, Unmapped: true, Exhausted: func() error { return nil }}.Retry(ctx, func() error {
		it, err := s.st.Get(ctx, familyKey(id))
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		var f family
		if err := json.Unmarshal(it.Data, &f); err != nil || f.RevokedAt != 0 {
			return nil
		}
		now := s.nowMS()
		f.RevokedAt = now
		it.Data = mustJSON(f)
		ops := []store.Op{store.Put(it, store.IfVersion(it.Version))}
		revokedTokens := 0
		if atIt, err := s.st.Get(ctx, auth.TokenKey(f.AccessHash)); err == nil {
			if op, ok, err := auth.RevokeOp(atIt, now); err == nil && ok {
				ops = append(ops, op)
				revokedTokens = 1
			}
		}
		ops = append(ops, s.auditOp(AuditRecord{Action: "oauth.token.revoke", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, ClientID: f.ClientID, Tenant: f.Tenant, FamilyID: id, Detail: reason,
			Counts: map[string]int{"revokedTokens": revokedTokens, "revokedRefresh": 1}}))
		if err := s.st.Write(ctx, ops...); err != nil {
			return err
		}
		s.log.WarnContext(ctx, "oauth grant revoked", "familyId", id, "clientId", f.ClientID, "reason", reason)
		return nil
	})
	if err != nil {
		s.log.ErrorContext(ctx, "revoking a grant", "familyId", id, "err", err)
	}
}

// revoke is RFC 7009 token revocation: a client revokes one of its own
// refresh tokens (the whole grant) or access tokens. Unknown tokens, and
// tokens of other clients, are answered 200 without effect.
func (s *Server) revoke(w http.ResponseWriter, r *http.Request) {
	limitBody(w, r, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		if tooLarge(w, err) {
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request", "send application/x-www-form-urlencoded parameters")
		return
	}
	c, err := s.authenticateClient(r)
	if err != nil {
		writeTokenError(w, err)
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	if tok == "" {
		writeError(w, http.StatusBadRequest, "invalid_request", "token is required")
		return
	}
	ctx := r.Context()
	a := Actor{ID: c.ClientID, IP: s.clientIP(r), UserAgent: r.UserAgent()}
	hash := auth.HashHex(tok)
	if it, err := s.st.Get(ctx, refreshKey(hash)); err == nil {
		var rt refreshToken
		if json.Unmarshal(it.Data, &rt) == nil && rt.ClientID == c.ClientID {
			s.revokeFamily(ctx, rt.FamilyID, a, "revoked by the client (RFC 7009)")
		}
	} else if it, err := s.st.Get(ctx, auth.TokenKey(hash)); err == nil {
		if t, err := auth.DecodeToken(it); err == nil && t.ClientID == c.ClientID {
			if op, ok, _ := auth.RevokeOp(it, s.nowMS()); ok {
				err := s.st.Write(ctx, op, s.auditOp(AuditRecord{Action: "oauth.token.revoke", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, ClientID: c.ClientID, Tenant: t.Tenant, TokenID: t.ID, Detail: "revoked by the client (RFC 7009)"}))
				if err != nil && !errors.Is(err, store.ErrConditionFailed) {
					s.log.ErrorContext(ctx, "revoking a token", "err", err)
					writeError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "retry")
					return
				}
			}
		}
	}
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
}
