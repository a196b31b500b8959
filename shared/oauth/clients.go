package oauth

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Grant types and authentication methods.
const (
	grantCode              = "authorization_code"
	grantRefresh           = "refresh_token"
	grantClientCredentials = "client_credentials"
	authNone               = "none"
	authBasic              = "client_secret_basic"
	authPost               = "client_secret_post"
)

// Limits of a registration.
const (
	MaxRedirectURIs     = 10
	MaxRedirectURIBytes = 2000
	MaxClientNameBytes  = 200
	maxRegisterBytes    = 64 << 10
	cimdMaxBytes        = 64 << 10
	cimdRefresh         = time.Hour
)

// Client is a registered OAuth client. Only the SHA-256 of its secret is
// stored.
type Client struct {
	ClientID                string   `json:"client_id"`
	Name                    string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	SecretHash              string   `json:"clientSecretHash,omitempty"`
	ScopeProfile            string   `json:"scope_profile"`
	// Tenant is where client-credentials tokens act; an admin sets it when
	// elevating (authorization-code tokens act in the approver's tenant).
	Tenant string `json:"tenant"`
	// MetadataDocument: the client id is the URL of its metadata document.
	MetadataDocument bool  `json:"metadataDocument,omitempty"`
	FetchedAt        int64 `json:"fetchedAt,omitempty"`
	CreatedAt        int64 `json:"createdAt"`
	UpdatedAt        int64 `json:"updatedAt,omitempty"`
	RevokedAt        int64 `json:"revokedAt,omitempty"`
	// PendingUntil (ms) is when a client that has completed no
	// authorization disappears (its item's TTL); zero once a person
	// approved an authorization for it or an admin elevated it.
	PendingUntil int64 `json:"pendingUntil,omitempty"`
	// AuthorizedAt is when a person first approved an authorization.
	AuthorizedAt int64 `json:"authorizedAt,omitempty"`
}

func (c Client) confidential() bool { return c.TokenEndpointAuthMethod != authNone }

func (s *Server) clientItem(c Client) store.Item { return itemOf(clients, c) }

// loadClient reads a live client; a deleted or unknown one is NotFound.
func (s *Server) loadClient(ctx context.Context, id string) (Client, store.Item, error) {
	const op = "oauth.client"
	if id == "" || len(id) > MaxRedirectURIBytes {
		return Client{}, store.Item{}, vp.E(op, vp.KindNotFound, "client_id", "unknown client")
	}
	c, it, err := getJSON[Client](ctx, s.st, clientKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return Client{}, it, vp.Errorf(op, vp.KindNotFound, "client_id", "unknown client %q: register it first (POST /oauth/register)", id)
	}
	if err != nil {
		return Client{}, it, vp.Wrap(op, vp.KindInternal, err)
	}
	return c, it, nil
}

// ---- registration (RFC 7591) ----

type registrationRequest struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
	Scope                   string   `json:"scope"`
	ScopeProfile            string   `json:"scope_profile"`
	ScopeProfileCamel       string   `json:"scopeProfile"`
}

type registrationResponse struct {
	ClientID                string   `json:"client_id"`
	ClientSecret            string   `json:"client_secret,omitempty"`
	ClientIDIssuedAt        int64    `json:"client_id_issued_at"`
	ClientSecretExpiresAt   *int64   `json:"client_secret_expires_at,omitempty"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope"`
	ScopeProfile            string   `json:"scope_profile"`
	TokenEndpoint           string   `json:"token_endpoint"`
}

// ErrScopeViolation is the error code of a self-registration that asks for
// a profile other than client-generic.
const ErrScopeViolation = "ScopeViolation"

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	limitBody(w, r, maxRegisterBytes)
	var req registrationRequest
	dec := json.NewDecoder(r.Body)
	if err := dec.Decode(&req); err != nil {
		if tooLarge(w, err) {
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_client_metadata", "the body must be a JSON object of client metadata (RFC 7591): "+err.Error())
		return
	}
	c, err := s.newClient(req)
	if err != nil {
		code := "invalid_client_metadata"
		var e *vp.Error
		if errors.As(err, &e) && e.Field == "redirect_uris" {
			code = "invalid_redirect_uri"
		}
		if errors.As(err, &e) && e.Field == "scope_profile" {
			code = ErrScopeViolation
			s.audit(r.Context(), AuditRecord{Action: "oauth.client.register", Outcome: "refused", Detail: e.Msg, IP: s.clientIP(r), UserAgent: r.UserAgent()})
		}
		writeError(w, http.StatusBadRequest, code, err.Error())
		return
	}
	var secret string
	if c.confidential() {
		secret = auth.NewSecret()
		c.SecretHash = auth.HashHex(secret)
	}
	if err := s.storeNewClient(r, &c); err != nil {
		if vp.IsKind(err, vp.KindRateLimited) {
			s.log.WarnContext(r.Context(), "oauth registration refused: pending clients at the cap", "max", s.pending.max)
			w.Header().Set("Retry-After", strconv.Itoa(secondsToNextHour(s.now())))
			writeError(w, http.StatusServiceUnavailable, "temporarily_unavailable", err.Error())
			return
		}
		s.log.ErrorContext(r.Context(), "registering a client", "err", err)
		writeError(w, http.StatusInternalServerError, "server_error", "could not store the client; retry")
		return
	}
	s.log.InfoContext(r.Context(), "oauth client registered", "clientId", c.ClientID, "name", c.Name, "authMethod", c.TokenEndpointAuthMethod)
	resp := registrationResponse{
		ClientID: c.ClientID, ClientSecret: secret, ClientIDIssuedAt: c.CreatedAt / 1000, ClientName: c.Name,
		RedirectURIs: c.RedirectURIs, GrantTypes: c.GrantTypes, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: c.TokenEndpointAuthMethod, Scope: ScopeMCP, ScopeProfile: c.ScopeProfile,
		TokenEndpoint: s.baseURL(r) + "/oauth/token",
	}
	if secret != "" {
		zero := int64(0)
		resp.ClientSecretExpiresAt = &zero
	}
	writeJSON(w, http.StatusCreated, resp)
}

// storeNewClient stores a registered client as pending, counted against
// the cap, with its audit record.
func (s *Server) storeNewClient(r *http.Request, c *Client) error {
	const op = "oauth.register"
	return table.Conflicts{Op: op, Unmapped: true, Exhausted: func() error {
		return vp.E(op, vp.KindUnavailable, "", "too many concurrent registrations; retry")
	}}.Retry(r.Context(), func() error {
		count, err := s.admitPending(r.Context(), op, c)
		if err != nil {
			return err
		}
		// A lost write is another registration counted meanwhile: count
		// again.
		return s.st.Write(r.Context(), store.Put(s.clientItem(*c), store.IfNotExists), count,
			s.auditOp(AuditRecord{Action: "oauth.client.register", ClientID: c.ClientID, Profile: c.ScopeProfile, Detail: c.Name, IP: s.clientIP(r), UserAgent: r.UserAgent()}))
	})
}

// secondsToNextHour is when the count of pending clients next drops by a
// whole hour's registrations.
func secondsToNextHour(now time.Time) int {
	return max(1, int(now.Truncate(time.Hour).Add(time.Hour).Sub(now)/time.Second))
}

// newClient validates a registration. Self-registration always gets the
// client-generic profile; asking for another one is a ScopeViolation.
func (s *Server) newClient(req registrationRequest) (Client, error) {
	const op = "oauth.register"
	for _, want := range []string{req.ScopeProfile, req.ScopeProfileCamel} {
		if want != "" && want != ProfileGeneric {
			return Client{}, vp.Errorf(op, vp.KindForbidden, "scope_profile", "self-registration always gets %q; %q can only be assigned by an admin", ProfileGeneric, want)
		}
	}
	name := strings.TrimSpace(req.ClientName)
	if name == "" {
		name = "Unnamed client"
	}
	if err := vp.CheckText(op, "client_name", name, MaxClientNameBytes, true); err != nil {
		return Client{}, err
	}
	method := req.TokenEndpointAuthMethod
	if method == "" {
		method = authBasic
	}
	if !slices.Contains(authMethods, method) {
		return Client{}, vp.Errorf(op, vp.KindInvalid, "token_endpoint_auth_method", "%q is not supported; use one of %s", method, strings.Join(authMethods, ", "))
	}
	grants := req.GrantTypes
	if len(grants) == 0 {
		grants = []string{grantCode, grantRefresh}
	}
	for _, g := range grants {
		if g != grantCode && g != grantRefresh && g != grantClientCredentials {
			return Client{}, vp.Errorf(op, vp.KindInvalid, "grant_types", "%q is not supported; use authorization_code, refresh_token or client_credentials", g)
		}
	}
	grants = dedupe(grants)
	for _, rt := range req.ResponseTypes {
		if rt != "code" {
			return Client{}, vp.Errorf(op, vp.KindInvalid, "response_types", "%q is not supported; only code", rt)
		}
	}
	if slices.Contains(grants, grantClientCredentials) && method == authNone {
		return Client{}, vp.E(op, vp.KindInvalid, "grant_types", "client_credentials needs a client secret: use token_endpoint_auth_method client_secret_basic or client_secret_post")
	}
	if err := checkRedirectURIs(op, req.RedirectURIs, slices.Contains(grants, grantCode)); err != nil {
		return Client{}, err
	}
	return Client{
		ClientID: newClientID(), Name: name, RedirectURIs: req.RedirectURIs, GrantTypes: grants,
		TokenEndpointAuthMethod: method, ScopeProfile: ProfileGeneric, Tenant: vp.DefaultTenant, CreatedAt: s.nowMS(),
	}, nil
}

func newClientID() string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic("oauth: no randomness: " + err.Error())
	}
	return "vp_client_" + hex.EncodeToString(b[:])
}

func dedupe(v []string) []string {
	out := []string{}
	for _, s := range v {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// checkRedirectURIs: absolute https URLs, or http on a loopback host for
// native clients; no fragment, no user info.
func checkRedirectURIs(op string, uris []string, required bool) error {
	if required && len(uris) == 0 {
		return vp.E(op, vp.KindInvalid, "redirect_uris", "is required for the authorization_code grant")
	}
	if len(uris) > MaxRedirectURIs {
		return vp.Errorf(op, vp.KindTooLarge, "redirect_uris", "has %d entries; the limit is %d", len(uris), MaxRedirectURIs)
	}
	for _, u := range uris {
		if err := checkRedirectURI(u); err != nil {
			return vp.Errorf(op, vp.KindInvalid, "redirect_uris", "%q: %v", truncate(u, 200), err)
		}
	}
	return nil
}

func checkRedirectURI(u string) error {
	if len(u) > MaxRedirectURIBytes {
		return fmt.Errorf("longer than %d bytes", MaxRedirectURIBytes)
	}
	if strings.Contains(u, "#") {
		return errors.New("must not contain a fragment")
	}
	p, err := url.Parse(u)
	if err != nil || !p.IsAbs() || p.Host == "" {
		return errors.New("must be an absolute URL")
	}
	if p.User != nil {
		return errors.New("must not carry user info")
	}
	switch p.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(p.Hostname()) {
			return nil
		}
		return errors.New("http is only allowed on a loopback host (127.0.0.1, [::1], localhost); use https")
	}
	return fmt.Errorf("scheme %q is not allowed; use https (or http on a loopback host)", p.Scheme)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// ---- client ID metadata documents ----

func isURLClientID(id string) bool { return strings.HasPrefix(id, "https://") }

// cimdDocument is the part of a client ID metadata document we use.
type cimdDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

// clientForAuthorize returns the client an authorization request names,
// fetching (and caching) the metadata document of a URL client id.
func (s *Server) clientForAuthorize(ctx context.Context, id string) (Client, error) {
	c, it, err := s.loadClient(ctx, id)
	if !isURLClientID(id) {
		return c, err
	}
	if err == nil && s.nowMS()-c.FetchedAt < cimdRefresh.Milliseconds() {
		return c, nil
	}
	if err != nil && !vp.IsKind(err, vp.KindNotFound) {
		return c, err
	}
	fresh, ferr := s.fetchClientDocument(ctx, id)
	if ferr != nil {
		return Client{}, ferr
	}
	cond := store.IfNotExists
	var count store.Op
	if err == nil { // keep what an admin assigned, and whether it is still pending
		fresh.ScopeProfile, fresh.Tenant, fresh.CreatedAt, fresh.UpdatedAt = c.ScopeProfile, c.Tenant, c.CreatedAt, s.nowMS()
		fresh.PendingUntil, fresh.AuthorizedAt = c.PendingUntil, c.AuthorizedAt
		cond = store.IfVersion(it.Version)
	} else if count, err = s.admitPending(ctx, "oauth.client_metadata", &fresh); err != nil {
		return Client{}, err
	}
	ops := []store.Op{store.Put(s.clientItem(fresh), cond)}
	if cond == store.IfNotExists {
		ops = append(ops, count, s.auditOp(AuditRecord{Action: "oauth.client.register", ClientID: id, Profile: fresh.ScopeProfile, Detail: "client ID metadata document: " + fresh.Name}))
	}
	if werr := s.st.Write(ctx, ops...); werr != nil && !errors.Is(werr, store.ErrConditionFailed) {
		return Client{}, vp.Wrap("oauth.client", vp.KindInternal, werr)
	}
	return fresh, nil
}

// fetchClientDocument fetches and checks the document a URL client id
// names. Whoever sends an authorization request names that URL, so what
// it is told carries a classification of the failure, never the bytes
// of the document or of the answer: not its values, not the decoder's
// quote of it.
func (s *Server) fetchClientDocument(ctx context.Context, id string) (Client, error) {
	const op = "oauth.client_metadata"
	u, err := url.Parse(id)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" || u.Fragment != "" || u.User != nil {
		return Client{}, vp.E(op, vp.KindInvalid, "client_id", "a URL client id must be an https URL with a path and no fragment")
	}
	if _, err := s.egress.CheckURL(id); err != nil {
		return Client{}, vp.Errorf(op, vp.KindInvalid, "client_id", "the client metadata document's URL is %s", egress.Classify(err))
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	raw, err := s.fetch(ctx, id)
	if err != nil {
		return Client{}, vp.Errorf(op, vp.KindInvalid, "client_id", "could not fetch the client metadata document: %s", egress.Classify(err))
	}
	var doc cimdDocument
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Client{}, vp.E(op, vp.KindInvalid, "client_id", "the client metadata document is not a JSON object of client metadata")
	}
	if doc.ClientID != id {
		return Client{}, vp.E(op, vp.KindInvalid, "client_id", "the metadata document's client_id must equal its URL")
	}
	method := doc.TokenEndpointAuthMethod
	if method == "" {
		method = authNone
	}
	if method != authNone {
		return Client{}, vp.E(op, vp.KindInvalid, "token_endpoint_auth_method", "a metadata-document client is public: its token_endpoint_auth_method must be none")
	}
	grants := doc.GrantTypes
	if len(grants) == 0 {
		grants = []string{grantCode, grantRefresh}
	}
	for _, g := range grants {
		if g != grantCode && g != grantRefresh {
			return Client{}, vp.E(op, vp.KindInvalid, "grant_types", "a metadata-document client may only use authorization_code and refresh_token")
		}
	}
	if err := checkRedirectURIs(op, doc.RedirectURIs, true); err != nil {
		return Client{}, vp.Errorf(op, vp.KindInvalid, "redirect_uris", "the metadata document's redirect_uris must be 1 to %d absolute https URLs (or http on a loopback host), without fragment or user info", MaxRedirectURIs)
	}
	name := strings.TrimSpace(doc.ClientName)
	if name == "" {
		name = u.Host
	}
	if err := vp.CheckText(op, "client_name", name, MaxClientNameBytes, true); err != nil {
		return Client{}, err
	}
	now := s.nowMS()
	return Client{ClientID: id, Name: name, RedirectURIs: doc.RedirectURIs, GrantTypes: dedupe(grants), TokenEndpointAuthMethod: authNone,
		ScopeProfile: ProfileGeneric, Tenant: vp.DefaultTenant, MetadataDocument: true, FetchedAt: now, CreatedAt: now}, nil
}

// defaultFetch GETs metadata documents through the egress policy (https,
// public addresses or the operator's allow-list, checked at dial time; no
// redirects; 10 s; 64 KiB).
func defaultFetch(pol *egress.Policy) func(ctx context.Context, u string) ([]byte, error) {
	hc := pol.Client(egress.ClientOptions{Timeout: 10 * time.Second, MaxBody: cimdMaxBytes})
	return func(ctx context.Context, u string) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, &egress.StatusError{Code: resp.StatusCode}
		}
		return io.ReadAll(resp.Body)
	}
}

// ---- admin ----

// ListClients returns every client (deleted ones last seen as revoked),
// without secret hashes.
func (s *Server) ListClients(ctx context.Context) ([]Client, error) {
	rows, err := records.QueryAll(ctx, s.st, clients.Query("", store.GSI1, nil), 100_000)
	if err != nil {
		return nil, vp.Wrap("oauth.client.list", vp.KindInternal, err)
	}
	out := []Client{}
	for _, it := range rows {
		var c Client
		if err := json.Unmarshal(it.Data, &c); err != nil {
			return nil, vp.Wrap("oauth.client.list", vp.KindInternal, err)
		}
		c.SecretHash = ""
		out = append(out, c)
	}
	return out, nil
}

// Elevate assigns a scope profile to a client (and, when tenant is not
// empty, the tenant its client-credentials tokens act in). Tokens issued
// from now on, refreshes included, carry the new profile.
func (s *Server) Elevate(ctx context.Context, a Actor, clientID, profile, tenant string) (Client, error) {
	const op = "oauth.client.elevate"
	if _, err := s.profileOrDefault(ctx, profile); err != nil {
		return Client{}, err
	}
	if tenant != "" && !vp.ValidTenant(tenant) {
		return Client{}, vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a tenant id", tenant)
	}
	var out Client
	err := table.Conflicts{Op: op, Max: 5, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "client_id", "the client kept changing underneath; retry")
	}}.Retry(ctx, func() error {
		c, it, err := s.loadClient(ctx, clientID)
		if err != nil {
			return err
		}
		from := c.ScopeProfile
		c.ScopeProfile = profile
		if tenant != "" {
			c.Tenant = tenant
		}
		c.UpdatedAt = s.nowMS()
		settle, err := s.leavePending(ctx, &c) // an admin chose to keep it
		if err != nil {
			return vp.Wrap(op, vp.KindInternal, err)
		}
		err = s.st.Write(ctx, append(settle, store.Put(s.clientItem(c), store.IfVersion(it.Version)),
			s.auditOp(AuditRecord{Action: "oauth.client.elevate", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, ClientID: clientID, Profile: profile, Tenant: c.Tenant, Detail: "from " + from}))...)
		if err != nil {
			return vp.Wrap(op, vp.KindInternal, err) // a lost write stays a condition failure: read again
		}
		out = c
		return nil
	})
	if err != nil {
		return Client{}, err
	}
	s.log.InfoContext(ctx, "oauth client elevated", "clientId", clientID, "profile", profile, "tenant", out.Tenant)
	out.SecretHash = ""
	return out, nil
}

// DeleteResult is what DeleteClient revoked.
type DeleteResult struct {
	RevokedClient  bool `json:"revokedClient"`
	RevokedTokens  int  `json:"revokedTokens"`
	RevokedRefresh int  `json:"revokedRefresh"`
}

// DeleteClient revokes a client and every token issued to it. The client's
// item is what its tokens require, so removing it (one transaction, with
// the tombstone and the audit record) revokes them all at once; their rows
// are marked revoked in that same transaction when they fit, in follow-up
// batches otherwise. The client must register again to reconnect.
func (s *Server) DeleteClient(ctx context.Context, a Actor, clientID string) (DeleteResult, error) {
	const op = "oauth.client.delete"
	var res DeleteResult
	var later []store.Op // the revocations that did not fit in the transaction
	err := table.Conflicts{Op: op, Max: 5, Unmapped: true, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "client_id", "the client's tokens kept changing underneath; retry")
	}}.Retry(ctx, func() error {
		c, it, err := s.loadClient(ctx, clientID)
		if err != nil {
			return err
		}
		now := s.nowMS()
		tokOps, famOps, err := s.clientRevocations(ctx, clientID, now)
		if err != nil {
			return err
		}
		c.RevokedAt = now
		settle, err := s.leavePending(ctx, &c)
		if err != nil {
			return vp.Wrap(op, vp.KindInternal, err)
		}
		tomb := itemOf(deletedClients, c)
		res = DeleteResult{RevokedClient: true, RevokedTokens: len(tokOps), RevokedRefresh: len(famOps)}
		ops := []store.Op{
			store.Delete(it.Key, store.IfVersion(it.Version)),
			store.Put(tomb, store.IfNotExists),
			s.auditOp(AuditRecord{Action: "oauth.client.delete", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, ClientID: clientID, Profile: c.ScopeProfile,
				Counts: map[string]int{"revokedTokens": res.RevokedTokens, "revokedRefresh": res.RevokedRefresh}}),
		}
		ops = append(ops, settle...)
		rest := append(tokOps, famOps...)
		n := min(len(rest), store.MaxTransactOps-len(ops))
		ops = append(ops, rest[:n]...)
		later = rest[n:]
		// A lost write stays a condition failure through the wrap: the
		// next attempt reads the client and its tokens again.
		return vp.Wrap(op, vp.KindInternal, s.st.Write(ctx, ops...))
	})
	if err != nil {
		return DeleteResult{}, err
	}
	s.writeBatches(ctx, later)
	s.log.InfoContext(ctx, "oauth client deleted", "clientId", clientID, "revokedTokens", res.RevokedTokens, "revokedRefresh", res.RevokedRefresh)
	return res, nil
}

// clientRevocations returns the writes that mark the client's live access
// tokens and refresh-token families revoked.
func (s *Server) clientRevocations(ctx context.Context, clientID string, now int64) (tokOps, famOps []store.Op, err error) {
	items, err := s.tokens.ClientTokens(ctx, clientID)
	if err != nil {
		return nil, nil, err
	}
	for _, it := range items {
		op, ok, err := auth.RevokeOp(it, now)
		if err != nil {
			return nil, nil, vp.Wrap("oauth.client.delete", vp.KindInternal, err)
		}
		if ok {
			tokOps = append(tokOps, op)
		}
	}
	fams, err := records.QueryAll(ctx, s.st, families.Query("", store.GSI3, table.Values{"clientId": clientID}), 1_000_000)
	if err != nil {
		return nil, nil, vp.Wrap("oauth.client.delete", vp.KindInternal, err)
	}
	for _, it := range fams {
		var f family
		if err := json.Unmarshal(it.Data, &f); err != nil {
			return nil, nil, vp.Wrap("oauth.client.delete", vp.KindInternal, err)
		}
		if f.RevokedAt != 0 || f.ExpiresAt <= now {
			continue
		}
		f.RevokedAt = now
		it.Data = mustJSON(f)
		famOps = append(famOps, store.Put(it, store.IfVersion(it.Version)))
	}
	return tokOps, famOps, nil
}

// writeBatches applies revocation marks that did not fit the first
// transaction. They are bookkeeping (the tokens no longer resolve), so a
// mark that lost a race is skipped.
func (s *Server) writeBatches(ctx context.Context, ops []store.Op) {
	for len(ops) > 0 {
		n := min(len(ops), store.MaxTransactOps)
		if err := s.st.Write(ctx, ops[:n]...); err != nil {
			for _, op := range ops[:n] {
				if err := s.st.Write(ctx, op); err != nil && !errors.Is(err, store.ErrConditionFailed) {
					s.log.WarnContext(ctx, "marking a token revoked", "err", err)
				}
			}
		}
		ops = ops[n:]
	}
}
