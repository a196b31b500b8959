package oauth

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Clerk exchange constants (platform.md §6.1).
const (
	ClerkTokenTTL        = 7 * 24 * time.Hour // TTL_7_DAYS, not configurable
	ClerkRateLimit       = 5                  // requests per user per minute
	clerkRateWindow      = time.Minute
	clerkLeeway          = 5 * time.Second
	jwksMaxAge           = time.Hour
	jwksMinRefetch       = 10 * time.Second // on an unknown kid
	maxClerkRequestBytes = 16 << 10
	DefaultClerkAudience = "convex" // the Clerk JWT template named convex
)

// ClerkOptions configures POST /issueBearerFromClerk.
type ClerkOptions struct {
	// Issuer is CLERK_JWT_ISSUER_DOMAIN (https://clerk.example.com). Empty:
	// every exchange answers 500 "Server misconfigured".
	Issuer string
	// Audience is the JWT's expected aud (default "convex").
	Audience string
	// AllowedExtIDs is VP_ALLOWED_EXT_IDS. Empty: no extension is allowed.
	AllowedExtIDs []string
	// JWKSURL defaults to Issuer + "/.well-known/jwks.json".
	JWKSURL    string
	HTTPClient *http.Client
}

// clerk verifies Clerk session JWTs (RS256) against the issuer's JWKS,
// cached for an hour and fetched again when a token names an unknown key
// (key rotation), at most every ten seconds.
type clerk struct {
	opts ClerkOptions
	now  func() time.Time

	mu        sync.Mutex
	keys      map[string]*rsa.PublicKey
	fetchedAt time.Time
}

func newClerk(o ClerkOptions, now func() time.Time) *clerk {
	o.Issuer = normalizeIssuer(o.Issuer)
	if o.Audience == "" {
		o.Audience = DefaultClerkAudience
	}
	if o.JWKSURL == "" && o.Issuer != "" {
		o.JWKSURL = o.Issuer + "/.well-known/jwks.json"
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &clerk{opts: o, now: now}
}

func normalizeIssuer(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/")
	if s != "" && !strings.Contains(s, "://") {
		s = "https://" + s
	}
	return s
}

// clerkClaims are the claims we read.
type clerkClaims struct {
	Sub      string          `json:"sub"`
	Iss      string          `json:"iss"`
	Aud      json.RawMessage `json:"aud"`
	Exp      *float64        `json:"exp"`
	Nbf      *float64        `json:"nbf"`
	Name     string          `json:"name"`
	Username string          `json:"username"`
	Email    string          `json:"email"`
}

var errInvalidJWT = errors.New("invalid Clerk JWT")

// verify checks signature, issuer, audience and times of a compact JWS.
func (c *clerk) verify(ctx context.Context, token string) (clerkClaims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return clerkClaims{}, fmt.Errorf("%w: not a compact JWS", errInvalidJWT)
	}
	var hdr struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}
	if err := decodeSegment(parts[0], &hdr); err != nil {
		return clerkClaims{}, fmt.Errorf("%w: header: %v", errInvalidJWT, err)
	}
	if hdr.Alg != "RS256" {
		return clerkClaims{}, fmt.Errorf("%w: alg %q (want RS256)", errInvalidJWT, hdr.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return clerkClaims{}, fmt.Errorf("%w: signature encoding", errInvalidJWT)
	}
	key, err := c.key(ctx, hdr.Kid)
	if err != nil {
		return clerkClaims{}, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig); err != nil {
		return clerkClaims{}, fmt.Errorf("%w: bad signature", errInvalidJWT)
	}
	var cl clerkClaims
	if err := decodeSegment(parts[1], &cl); err != nil {
		return clerkClaims{}, fmt.Errorf("%w: claims: %v", errInvalidJWT, err)
	}
	now := c.now()
	switch {
	case cl.Exp == nil || !now.Before(time.Unix(int64(*cl.Exp), 0).Add(clerkLeeway)):
		return clerkClaims{}, fmt.Errorf("%w: expired", errInvalidJWT)
	case cl.Nbf != nil && now.Add(clerkLeeway).Before(time.Unix(int64(*cl.Nbf), 0)):
		return clerkClaims{}, fmt.Errorf("%w: not valid yet", errInvalidJWT)
	case normalizeIssuer(cl.Iss) != c.opts.Issuer:
		return clerkClaims{}, fmt.Errorf("%w: issuer mismatch", errInvalidJWT)
	case !audienceHas(cl.Aud, c.opts.Audience):
		return clerkClaims{}, fmt.Errorf("%w: audience mismatch", errInvalidJWT)
	case cl.Sub == "" || len(cl.Sub) > 200:
		return clerkClaims{}, fmt.Errorf("%w: no subject", errInvalidJWT)
	}
	return cl, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && slices.Contains(many, want)
}

// key returns the verification key kid, fetching the JWKS when the cache
// is old or does not know kid (rotation).
func (c *clerk) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	k, ok := c.keys[kid]
	stale := now.Sub(c.fetchedAt) > jwksMaxAge
	if ok && !stale {
		return k, nil
	}
	if c.keys == nil || stale || now.Sub(c.fetchedAt) >= jwksMinRefetch {
		keys, err := c.fetchJWKS(ctx)
		if err != nil {
			if ok { // keep using a known key while the issuer is unreachable
				return k, nil
			}
			return nil, fmt.Errorf("fetching the JWKS: %w", err)
		}
		c.keys, c.fetchedAt = keys, now
		k, ok = keys[kid]
	}
	if !ok {
		return nil, fmt.Errorf("%w: unknown key id %q", errInvalidJWT, kid)
	}
	return k, nil
}

func (c *clerk) fetchJWKS(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.opts.JWKSURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d from %s", resp.StatusCode, c.opts.JWKSURL)
	}
	var set struct {
		Keys []struct {
			Kty, Kid, Use, Alg, N, E string
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "RS256") {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) > 4 || len(n) < 256 {
			continue // refuse keys under 2048 bits
		}
		exp := 0
		for _, b := range e {
			exp = exp<<8 | int(b)
		}
		keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}
	}
	return keys, nil
}

// ---- the exchange ----

type clerkRequest struct {
	ClerkJWT   string `json:"clerkJwt"`
	ExtID      string `json:"extId"`
	ExtVersion string `json:"extVersion"`
}

type clerkResponse struct {
	WorkspaceID   string `json:"workspaceId"`
	Bearer        string `json:"bearer"`
	ExpiresAt     int64  `json:"expiresAt"`
	UserName      string `json:"userName"`
	WorkspaceName string `json:"workspaceName"`
}

func clerkError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]string{"error": msg})
}

// issueBearerFromClerk exchanges a Clerk session JWT for a 7-day bearer, in
// the order of the spec: fields, JWT, extension allow-list, rate limit,
// workspace, issuance with its audit record.
func (s *Server) issueBearerFromClerk(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	limitBody(w, r, maxClerkRequestBytes)
	var req clerkRequest
	_ = json.NewDecoder(r.Body).Decode(&req)
	switch {
	case strings.TrimSpace(req.ClerkJWT) == "":
		clerkError(w, http.StatusBadRequest, "Missing required field: clerkJwt")
		return
	case strings.TrimSpace(req.ExtID) == "":
		clerkError(w, http.StatusBadRequest, "Missing required field: extId")
		return
	case s.clerk.opts.Issuer == "":
		clerkError(w, http.StatusInternalServerError, "Server misconfigured: CLERK_JWT_ISSUER_DOMAIN not set")
		return
	}
	claims, err := s.clerk.verify(ctx, strings.TrimSpace(req.ClerkJWT))
	if err != nil {
		if !errors.Is(err, errInvalidJWT) {
			s.log.WarnContext(ctx, "clerk exchange: cannot verify", "err", err)
		} else {
			s.log.InfoContext(ctx, "clerk exchange refused", "reason", err.Error())
		}
		clerkError(w, http.StatusUnauthorized, "Invalid Clerk JWT")
		return
	}
	if !slices.Contains(s.clerk.opts.AllowedExtIDs, req.ExtID) {
		s.audit(ctx, AuditRecord{Action: "clerk.issue", Outcome: "refused", ClerkUserID: claims.Sub, ExtID: truncate(req.ExtID, 200), Detail: "extension not authorized", IP: s.clientIP(r), UserAgent: r.UserAgent()})
		clerkError(w, http.StatusForbidden, "Extension not authorized")
		return
	}
	ok, err := s.clerkAllow(ctx, claims.Sub)
	if err != nil {
		s.log.ErrorContext(ctx, "clerk exchange: rate limit", "err", err)
		clerkError(w, http.StatusInternalServerError, "Internal error")
		return
	}
	if !ok {
		w.Header().Set("Retry-After", "60")
		clerkError(w, http.StatusTooManyRequests, "Rate limit exceeded. Try again in 1 minute.")
		return
	}
	tenant, err := s.clerkTenant(ctx, claims.Sub)
	if err != nil {
		s.log.ErrorContext(ctx, "clerk exchange: workspace", "err", err)
		clerkError(w, http.StatusInternalServerError, "Internal error")
		return
	}
	name := clerkUserName(claims)
	bearer, tok, op, err := s.tokens.Prepare(auth.Spec{
		Tenant: tenant, ActsAs: []string{name}, ReadPrefixes: []string{vp.Wildcard}, WritePrefixes: []string{vp.Wildcard},
		Scopes: []string{"clerk"}, Label: "clerk " + claims.Sub + " via " + truncate(req.ExtID, 100), TTL: ClerkTokenTTL, Kind: "clerk",
	})
	if err != nil {
		s.log.ErrorContext(ctx, "clerk exchange: token", "err", err)
		clerkError(w, http.StatusInternalServerError, "Internal error")
		return
	}
	now := s.nowMS()
	err = s.st.Write(ctx, op, s.auditOp(AuditRecord{
		Action: "clerk.issue", ClerkUserID: claims.Sub, WorkspaceID: claims.Sub, Tenant: tenant, TokenID: tok.ID,
		ExtID: truncate(req.ExtID, 200), ExtVersion: truncate(req.ExtVersion, 100), IssuedAt: now, IP: s.clientIP(r), UserAgent: r.UserAgent(),
	}))
	if err != nil {
		s.log.ErrorContext(ctx, "clerk exchange: storing the token", "err", err)
		clerkError(w, http.StatusInternalServerError, "Internal error")
		return
	}
	s.log.InfoContext(ctx, "clerk bearer issued", "clerkUserId", claims.Sub, "tenant", tenant, "tokenId", tok.ID, "extId", req.ExtID)
	writeJSON(w, http.StatusOK, clerkResponse{WorkspaceID: claims.Sub, Bearer: bearer, ExpiresAt: tok.ExpiresAt, UserName: name, WorkspaceName: name})
}

// clerkUserName: the name claim, the username, the e-mail's local part, or
// user-<end of the id>; made a valid orchestrator id.
func clerkUserName(c clerkClaims) string {
	for _, v := range []string{c.Username, c.Name, strings.SplitN(c.Email, "@", 2)[0]} {
		v = strings.TrimSpace(v)
		if v != "" && vp.CheckName("", "", v, true) == nil && vp.NormalizeOrchestrator(v) != vp.SystemCaller {
			return v
		}
	}
	tail := c.Sub
	if len(tail) > 8 {
		tail = tail[len(tail)-8:]
	}
	return "user-" + strings.ToLower(tail)
}

// ---- rate limit: a sliding window per Clerk user, in the store ----

// clerkAllow records one request of sub and reports whether it is within
// ClerkRateLimit per minute. A refused request is not counted.
func (s *Server) clerkAllow(ctx context.Context, sub string) (bool, error) {
	for try := 0; try < 10; try++ {
		now := s.now()
		var times []int64
		cond := store.IfNotExists
		it, err := s.st.Get(ctx, clerkRateKey(sub))
		switch {
		case err == nil:
			_ = json.Unmarshal(it.Data, &times)
			cond = store.IfVersion(it.Version)
		case !errors.Is(err, store.ErrNotFound):
			return false, err
		}
		cut := now.Add(-clerkRateWindow).UnixMilli()
		kept := times[:0]
		for _, t := range times {
			if t > cut {
				kept = append(kept, t)
			}
		}
		if len(kept) >= ClerkRateLimit {
			return false, nil
		}
		kept = append(kept, now.UnixMilli())
		err = s.st.Write(ctx, store.Put(itemOf(clerkWindows, clerkWindow{sub: sub, times: kept, expires: now.Add(2 * clerkRateWindow).Unix()}), cond))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		return err == nil, err
	}
	return false, errors.New("rate-limit record kept changing")
}

// ---- workspace → tenant ----

type clerkWorkspace struct {
	ClerkUserID string `json:"clerkUserId"`
	Tenant      string `json:"tenant"`
	CreatedAt   int64  `json:"createdAt"`
	UpdatedAt   int64  `json:"updatedAt,omitempty"`
}

// clerkTenant resolves a Clerk user's workspace to a tenant: the one an
// admin mapped it to, else a tenant of its own derived from the user id
// (recorded on first use so that it never changes).
func (s *Server) clerkTenant(ctx context.Context, sub string) (string, error) {
	it, err := s.st.Get(ctx, clerkUserKey(sub))
	if err == nil {
		var ws clerkWorkspace
		if err := json.Unmarshal(it.Data, &ws); err != nil {
			return "", err
		}
		return ws.Tenant, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	sum := sha256.Sum256([]byte(sub))
	ws := clerkWorkspace{ClerkUserID: sub, Tenant: "clerk-" + hex.EncodeToString(sum[:])[:24], CreatedAt: s.nowMS()}
	err = s.st.Write(ctx, store.Put(itemOf(clerkUsers, ws), store.IfNotExists))
	if errors.Is(err, store.ErrConditionFailed) {
		return s.clerkTenant(ctx, sub)
	}
	return ws.Tenant, err
}

// MapClerkUser makes a Clerk user's workspace resolve to tenant (for
// example a team's). Bearers issued before keep their tenant.
func (s *Server) MapClerkUser(ctx context.Context, a Actor, sub, tenant string) error {
	const op = "clerk.map_user"
	if sub == "" || len(sub) > 200 || strings.ContainsAny(sub, "#\x00") {
		return vp.E(op, vp.KindInvalid, "clerkUserId", "give the Clerk user id (sub), e.g. user_2abc123")
	}
	if !vp.ValidTenant(tenant) {
		return vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a tenant id", tenant)
	}
	ws := clerkWorkspace{ClerkUserID: sub, Tenant: tenant, CreatedAt: s.nowMS(), UpdatedAt: s.nowMS()}
	err := s.st.Write(ctx, store.Put(itemOf(clerkUsers, ws), store.Always),
		s.auditOp(AuditRecord{Action: "clerk.map_user", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, ClerkUserID: sub, WorkspaceID: sub, Tenant: tenant}))
	return vp.Wrap(op, vp.KindInternal, err)
}
