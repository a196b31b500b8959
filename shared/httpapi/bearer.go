package httpapi

import (
	"context"
	"errors"
	"net/http"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// bearer authenticates the request and answers 401 with the JSON body and
// WWW-Authenticate header MCP clients expect. The refused tokens of one
// source address are counted (Rules.AuthFailure): past the limit they are
// answered 429. A valid token is never counted nor checked against the
// count, so others' failures never slow it; a request without a token
// (an MCP client's discovery) is not counted.
//
// The SDK's RequireBearerToken reads the Authorization header, the only
// reader of it on /mcp, and calls o.Tokens as its TokenVerifier: the
// TokenInfo the SDK hands every MCP request is the one the verifier made,
// with the principal in it. The SDK's own refusals (plain text) are
// discarded and answered as before; the per-token flight limit is counted
// after authentication, apart from it.
func bearer(o Options, lim *ratelimit.Limiter, refusals *refusalLog, flight flights, next http.Handler) http.Handler {
	opts := &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true} // the verifier has judged the expiry (auth.Tokens.Verify)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &check{tokens: o.Tokens}
		admitted := false
		sdkauth.RequireBearerToken(c.verify, opts)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
			admitted = true
			if c.clientID != "" && r.Method == http.MethodPost {
				stepUp(w, r, resourceMetadataURL(o, r), c.flightKey, flight, next)
				return
			}
			admit(w, r, c.flightKey, flight, next)
		})).ServeHTTP(discardWriter{}, r)
		if admitted {
			return
		}
		if c.deny != nil {
			c.deny(w)
			return
		}
		if c.err != nil && !errors.Is(c.err, auth.ErrInvalidToken) {
			o.Logger.ErrorContext(r.Context(), "resolving token", "err", c.err)
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "temporarily_unavailable", "error_description": "could not check the token; retry"})
			return
		}
		refusal := c.refusal(r)
		if refusal.Reason != auth.ReasonMissing {
			if d := lim.Check(r, lim.Rules().AuthFailure); !d.Allowed {
				ratelimit.Refuse(w, d, "rate_limited", d.Message("refused bearer tokens"))
				return
			}
		}
		refusals.log(r.Context(), refusal)
		writeRefusal(w, resourceMetadataURL(o, r), refusal)
	})
}

// admit serves an authenticated request: the tool profile it asks for, one
// of its token's request slots, its body bound.
func admit(w http.ResponseWriter, r *http.Request, flightKey string, flight flights, next http.Handler) {
	if profile := r.URL.Query().Get("profile"); profile != "" {
		r.Header.Set(mcpserver.ToolProfileHeader, profile)
	}
	if err := mcpserver.CheckToolProfile(r.Header.Get(mcpserver.ToolProfileHeader)); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": err.Error()})
		return
	}
	release, ok := flight.calls.acquire(flightKey)
	if !ok {
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusTooManyRequests, map[string]string{"error": "too_many_requests",
			"error_description": "this token already has " + itoa(flight.calls.max) + " requests in flight, the limit of concurrent requests per token: wait for one to finish, retry after 1 second"})
		return
	}
	slot := &waitSlot{key: flightKey, waits: flight.waits, release: release}
	defer slot.done()
	r.Body = http.MaxBytesReader(w, r.Body, MaxRequestBytes)
	next.ServeHTTP(w, r.WithContext(mcpserver.WithWaitSlot(r.Context(), slot)))
}

// check is one request's verification, as the SDK's RequireBearerToken
// runs it: what the verifier was asked and answered, for the refusal.
type check struct {
	tokens  Verifier
	checked bool  // the SDK found a credential and called verify
	err     error // the verifier's
	// flightKey is the token's own tenant and id: the master token's
	// X-VP-Tenant does not buy it a fresh set of request slots.
	flightKey string
	clientID  string                    // the OAuth client of the token, if any
	deny      func(http.ResponseWriter) // a refused X-VP-Tenant
}

// errDenied makes the SDK refuse a request whose answer check.deny writes.
var errDenied = errors.New("denied")

// verify is the TokenVerifier RequireBearerToken calls with the credential
// it read. The master token may act in the tenant X-VP-Tenant names: its
// TokenInfo says that tenant.
func (c *check) verify(ctx context.Context, secret string, r *http.Request) (*sdkauth.TokenInfo, error) {
	c.checked = true
	ti, err := c.tokens.Verify(ctx, secret, r)
	if err != nil {
		c.err = err
		return nil, err
	}
	p, ok := auth.PrincipalOf(ti)
	if !ok {
		c.err = errors.New("the token verifier returned no principal")
		return nil, c.err
	}
	c.flightKey = p.Tenant + "/" + p.TokenID
	c.clientID = p.ClientID
	if t := r.Header.Get(TenantHeader); t != "" {
		if p.TokenID != "master" {
			c.deny = func(w http.ResponseWriter) {
				writeJSON(w, http.StatusForbidden, map[string]string{"error": "forbidden", "error_description": TenantHeader + " is only honoured for the master token"})
			}
			return nil, errDenied
		}
		if !vp.ValidTenant(t) {
			c.deny = func(w http.ResponseWriter) {
				writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request", "error_description": TenantHeader + " is not a valid tenant id"})
			}
			return nil, errDenied
		}
		p.Tenant = t
		ti = auth.NewTokenInfo(p)
	}
	return ti, nil
}

// refusal says why the SDK refused the request.
func (c *check) refusal(r *http.Request) *auth.RefusedError {
	switch {
	case !c.checked:
		// The SDK takes a credential only when it is one word. A Bearer
		// header whose credential has spaces in it was always refused as
		// malformed, any other header as missing: the header is looked at
		// again here, on refusal only, to say which.
		if _, ok := auth.ParseBearer(r.Header.Get("Authorization")); ok {
			return &auth.RefusedError{Reason: auth.ReasonMalformed}
		}
		return &auth.RefusedError{Reason: auth.ReasonMissing}
	case c.err != nil:
		return auth.Refusal(c.err)
	}
	// Unreached: the SDK refuses a verified token only for a scope or an
	// expiry, and bearer asks for no scope and the TokenInfo has no expiry.
	return &auth.RefusedError{Reason: auth.ReasonUnknown}
}

// discardWriter takes the SDK's plain-text refusals, which bearer answers
// in its own words.
type discardWriter struct{}

func (discardWriter) Header() http.Header         { return http.Header{} }
func (discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (discardWriter) WriteHeader(int)             {}
