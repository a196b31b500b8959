package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/oauth/clerk"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Clerk exchange constants (platform.md §6.1). The JWT checks and the rate
// window are shared/oauth/clerk's.
const (
	ClerkTokenTTL        = 7 * 24 * time.Hour // TTL_7_DAYS, not configurable
	ClerkRateLimit       = clerk.RateLimit    // requests per user per minute
	maxClerkRequestBytes = 16 << 10
	DefaultClerkAudience = clerk.DefaultAudience // the Clerk JWT template named convex
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
	case s.clerk.Issuer() == "":
		clerkError(w, http.StatusInternalServerError, "Server misconfigured: CLERK_JWT_ISSUER_DOMAIN not set")
		return
	}
	claims, err := s.clerk.Verify(ctx, strings.TrimSpace(req.ClerkJWT))
	if err != nil {
		if !errors.Is(err, clerk.ErrInvalidJWT) {
			s.log.WarnContext(ctx, "clerk exchange: cannot verify", "err", err)
		} else {
			s.log.InfoContext(ctx, "clerk exchange refused", "reason", err.Error())
		}
		clerkError(w, http.StatusUnauthorized, "Invalid Clerk JWT")
		return
	}
	if !slices.Contains(s.clerkExts, req.ExtID) {
		s.audit(ctx, AuditRecord{Action: "clerk.issue", Outcome: "refused", ClerkUserID: claims.Sub, ExtID: truncate(req.ExtID, 200), Detail: "extension not authorized", IP: s.clientIP(r), UserAgent: r.UserAgent()})
		clerkError(w, http.StatusForbidden, "Extension not authorized")
		return
	}
	ok, err := clerk.Allow(ctx, s.st, claims.Sub, s.now)
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
	name := clerk.UserName(claims)
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
