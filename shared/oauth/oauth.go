// Package oauth is the OAuth 2.1 authorization server of VantagePeers, so
// that MCP clients (Claude.ai, ChatGPT, Claude Code, any MCP SDK client) can
// connect by themselves: discovery (RFC 9728, RFC 8414), dynamic client
// registration (RFC 7591) and client ID metadata documents, the
// authorization code grant with PKCE S256 behind a server-rendered consent
// page, refresh-token rotation with reuse detection, client credentials,
// revocation (RFC 7009), scope profiles, the admin endpoints, the Clerk JWT
// exchange and an append-only audit log.
//
// Everything is stored through the store port. Access tokens are ordinary
// auth.Token records (64 hex characters, only the SHA-256 stored, with an
// expiry), so the bearer check in front of /mcp resolves them unchanged; an
// OAuth token requires its client's item, so deleting a client revokes all
// of its tokens in one write.
package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/oauth/clerk"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Default lifetimes.
const (
	DefaultAccessTTL  = time.Hour
	DefaultRefreshTTL = 30 * 24 * time.Hour
	DefaultCodeTTL    = 60 * time.Second
	// ScopeMCP is the one OAuth scope; what a token may do is decided by
	// its client's scope profile, not by the scope string.
	ScopeMCP = vp.ScopeFull
)

// Options configures New.
type Options struct {
	Store  store.Store
	Tokens *auth.Tokens
	// BaseURL is the public base URL (PUBLIC_BASE_URL): the issuer and the
	// base of every advertised endpoint. Empty: taken from each request
	// (Host, X-Forwarded-Proto), which suits a local server.
	BaseURL string
	Now     func() time.Time
	Logger  *slog.Logger
	// Lifetimes; zero means the default.
	AccessTTL, RefreshTTL, CodeTTL time.Duration
	// FetchClientMetadata fetches a client ID metadata document (a client
	// whose client_id is an https URL). Nil: an https GET that refuses
	// private and loopback addresses.
	FetchClientMetadata func(ctx context.Context, url string) ([]byte, error)
	// Clerk configures POST /issueBearerFromClerk.
	Clerk ClerkOptions
	// Egress is the policy client ID metadata documents are fetched
	// through (the operator's allow-list included); nil: the default
	// policy, public https only.
	Egress *egress.Policy
	// Limiter bounds the requests of one source address to every
	// endpoint but /admin/ (ratelimit.Rules; registration: 10 a minute).
	// Nil: one over Store with the default rules. The source address is
	// the connection's peer, or behind the proxies the Limiter trusts,
	// the address they report; it is also what the audit log records.
	Limiter *ratelimit.Limiter
	// MaxPendingClients caps the clients that have not completed an
	// authorization (DefaultMaxPendingClients when zero); past it,
	// registration is refused.
	MaxPendingClients int
	// PendingClientTTL is how long such a client lives
	// (DefaultPendingClientTTL when zero).
	PendingClientTTL time.Duration
}

// Server is the authorization server. It is an http.Handler for
// /.well-known/, /oauth/, /admin/ and /issueBearerFromClerk.
type Server struct {
	st     store.Store
	tokens *auth.Tokens
	base   string
	now    func() time.Time
	log    *slog.Logger
	ids    *vp.IDs
	ttl    struct{ access, refresh, code time.Duration }
	fetch  func(ctx context.Context, url string) ([]byte, error)
	egress *egress.Policy
	clerk  *clerk.Verifier
	// clerkExts are the extensions allowed to exchange a Clerk JWT.
	clerkExts []string
	mux       *http.ServeMux
	lim       *ratelimit.Limiter
	// pending: the cap and lifetime of clients not yet authorized.
	pending struct {
		max int
		ttl time.Duration
	}
	// ticketKey signs the consent page's tickets (ticket.go).
	ticketKey struct {
		mu  sync.Mutex
		key []byte
	}
}

// New returns a Server.
func New(o Options) *Server {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Server{st: o.Store, tokens: o.Tokens, base: strings.TrimSuffix(o.BaseURL, "/"), now: o.Now, log: o.Logger, ids: vp.NewIDs(o.Now)}
	s.ttl.access, s.ttl.refresh, s.ttl.code = or(o.AccessTTL, DefaultAccessTTL), or(o.RefreshTTL, DefaultRefreshTTL), or(o.CodeTTL, DefaultCodeTTL)
	s.egress = o.Egress
	if s.egress == nil {
		s.egress = egress.New(egress.Options{})
	}
	s.fetch = o.FetchClientMetadata
	if s.fetch == nil {
		s.fetch = defaultFetch(s.egress)
	}
	s.clerk = clerk.NewVerifier(clerk.Options{Issuer: o.Clerk.Issuer, Audience: o.Clerk.Audience, JWKSURL: o.Clerk.JWKSURL, HTTPClient: o.Clerk.HTTPClient, Now: o.Now})
	s.clerkExts = o.Clerk.AllowedExtIDs
	s.lim = o.Limiter
	if s.lim == nil {
		s.lim = ratelimit.New(ratelimit.Options{Store: o.Store, Now: o.Now, Logger: o.Logger})
	}
	s.pending.max, s.pending.ttl = o.MaxPendingClients, or(o.PendingClientTTL, DefaultPendingClientTTL)
	if s.pending.max <= 0 {
		s.pending.max = DefaultMaxPendingClients
	}
	s.mux = s.routes()
	return s
}

func or(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (s *Server) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("GET /.well-known/oauth-protected-resource", s.protectedResource)
	m.HandleFunc("GET /.well-known/oauth-protected-resource/{rest...}", s.protectedResource)
	m.HandleFunc("GET /.well-known/oauth-authorization-server", s.authServerMeta)
	m.HandleFunc("GET /.well-known/oauth-authorization-server/{rest...}", s.authServerMeta)
	m.HandleFunc("POST /oauth/register", s.register)
	m.HandleFunc("GET /oauth/authorize", s.authorizeGet)
	m.HandleFunc("POST /oauth/authorize", s.authorizePost)
	m.HandleFunc("POST /oauth/token", s.token)
	m.HandleFunc("POST /oauth/revoke", s.revoke)
	m.HandleFunc("POST /issueBearerFromClerk", s.issueBearerFromClerk)
	s.adminRoutes(m)
	return m
}

// ServeHTTP answers CORS preflights for the endpoints browsers call from
// other origins, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if strings.HasPrefix(p, "/.well-known/") || p == "/oauth/register" || p == "/oauth/token" || p == "/oauth/revoke" || p == "/issueBearerFromClerk" {
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "Content-Type, Authorization, mcp-session-id, Last-Event-ID, mcp-protocol-version")
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if rule, what, ok := s.ruleFor(r); ok {
		if d := s.lim.Check(r, rule); !d.Allowed {
			ratelimit.Refuse(w, d, "rate_limited", d.Message(what))
			return
		}
	}
	s.mux.ServeHTTP(w, r)
}

// ruleFor is the rate limit of a request: every endpoint an outsider can
// call. /admin/ needs the master token and is not limited here.
func (s *Server) ruleFor(r *http.Request) (ratelimit.Rule, string, bool) {
	rules := s.lim.Rules()
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/.well-known/"):
		return rules.Discovery, "discovery requests", true
	case p == "/oauth/register":
		return rules.Register, "client registrations", true
	case p == "/oauth/authorize" && r.Method == http.MethodPost:
		return ratelimit.Rule{}, "", false // by what it carries: consentLimit
	case p == "/oauth/authorize":
		return rules.Authorize, "authorization requests", true
	case p == "/oauth/token", p == "/oauth/revoke":
		return rules.Token, "token requests", true
	case p == "/issueBearerFromClerk":
		return rules.Clerk, "Clerk exchanges", true
	case strings.HasPrefix(p, "/oauth/"):
		return rules.Authorize, "OAuth requests", true
	}
	return ratelimit.Rule{}, "", false
}

// baseURL is the public base URL: configured, or derived from the request.
func (s *Server) baseURL(r *http.Request) string {
	if s.base != "" {
		return s.base
	}
	scheme := "http"
	if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func (s *Server) nowMS() int64 { return s.now().UnixMilli() }

// ---- responses ----

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// oauthError is the RFC 6749 error body.
type oauthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description,omitempty"`
}

func writeError(w http.ResponseWriter, status int, code, desc string) {
	writeJSON(w, status, oauthError{Code: code, Description: desc})
}

// clientIP is the request's source address as the limiter sees it: the
// peer, never an X-Forwarded-For a client wrote, unless the operator
// trusts the proxy that added it.
func (s *Server) clientIP(r *http.Request) string {
	if a := s.lim.Source(r); a.IsValid() {
		return a.String()
	}
	return r.RemoteAddr
}

// tooLarge answers 413 naming the limit when err is a body over it, and
// reports whether it did.
func tooLarge(w http.ResponseWriter, err error) bool {
	var mbe *http.MaxBytesError
	if !errors.As(err, &mbe) {
		return false
	}
	writeError(w, http.StatusRequestEntityTooLarge, "invalid_request", fmt.Sprintf("the request body is over the limit of %d bytes", mbe.Limit))
	return true
}

// limitBody bounds a request body.
func limitBody(w http.ResponseWriter, r *http.Request, n int64) {
	r.Body = http.MaxBytesReader(w, r.Body, n)
}

const maxFormBytes = 64 << 10

// getJSON reads and decodes one item; a missing one is store.ErrNotFound.
func getJSON[T any](ctx context.Context, st store.Store, k store.Key) (T, store.Item, error) {
	var v T
	it, err := st.Get(ctx, k)
	if err != nil {
		return v, it, err
	}
	if err := json.Unmarshal(it.Data, &v); err != nil {
		return v, it, fmt.Errorf("decoding %s %s: %w", k.PK, k.SK, err)
	}
	return v, it, nil
}
