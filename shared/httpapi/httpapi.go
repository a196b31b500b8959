// Package httpapi is the HTTP surface of VantagePeers: /health and the
// Streamable HTTP MCP endpoint behind bearer authentication, and the
// OAuth and webhook handlers it is given. The same handler serves the
// embedded binary and the Lambda functions.
package httpapi

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
)

// MaxRequestBytes bounds a JSON-RPC request body.
const MaxRequestBytes = 4 << 20

// Defaults of the per-request bounds of Options.
const (
	// DefaultBodyReadTimeout is how long a request body may take to
	// arrive: 4 MiB in 30 s is 140 KB/s. Without it a client that drips
	// its body a byte at a time holds a connection (and its token's
	// request slot) as long as it likes — the server's ReadHeaderTimeout
	// covers only the headers.
	DefaultBodyReadTimeout = 30 * time.Second
	// DefaultMaxConcurrentPerToken bounds the requests one token has in
	// flight at once in this process; more are refused 429 with
	// Retry-After.
	DefaultMaxConcurrentPerToken = 16
	// DefaultMaxWaitsPerToken bounds one token's wait_for_activity calls
	// holding at once, counted apart from the requests in flight: a
	// waiting call hands its request slot back, so that an agent's waits
	// never starve its other calls.
	DefaultMaxWaitsPerToken = 4
	// DefaultMaxDrainBytes is four times the request limit: a body up to
	// that size gets its 413 read by the client; a larger one may see the
	// connection reset instead.
	DefaultMaxDrainBytes = 4 * MaxRequestBytes
)

// Verifier checks a bearer credential: the go-sdk's TokenVerifier, which
// *auth.Tokens is (Verify). Its TokenInfo carries the principal
// (auth.NewTokenInfo).
type Verifier interface {
	Verify(ctx context.Context, secret string, r *http.Request) (*sdkauth.TokenInfo, error)
}

// Options configures New.
type Options struct {
	MCP      *mcp.Server
	Tokens   Verifier
	Version  string
	Logger   *slog.Logger
	Started  time.Time
	Storage  string // "sqlite" or "dynamodb", reported by /health
	BasePath string // public base URL, for resource_metadata (optional)
	// OAuth, when set, serves /.well-known/ (the metadata resource_metadata
	// points at), /oauth/, /admin/ and /issueBearerFromClerk.
	OAuth http.Handler
	// Routes are the capability modules' routes (shared/app Routes), each
	// with its handler: the GitHub webhooks, OKF downloads, the Pacerelle
	// relay and its web app.
	Routes []Route
	// BodyReadTimeout bounds the time to read a request body
	// (DefaultBodyReadTimeout when zero).
	BodyReadTimeout time.Duration
	// MaxConcurrentPerToken bounds one token's requests in flight
	// (DefaultMaxConcurrentPerToken when zero).
	MaxConcurrentPerToken int
	// MaxWaitsPerToken bounds one token's waiting calls
	// (DefaultMaxWaitsPerToken when zero).
	MaxWaitsPerToken int
	// Limiter bounds the requests of one source address to the routes
	// open to all that this package serves (/health, the OKF download);
	// the OAuth server limits its own routes. Nil: counted in this
	// process only, with the default rules.
	Limiter *ratelimit.Limiter
	// MaxDrainBytes bounds what is read and discarded of a body the
	// handler refused unread, so that its client reads the answer
	// (DefaultMaxDrainBytes when zero).
	MaxDrainBytes int64
}

// TenantHeader lets the master token act in a tenant other than the default.
const TenantHeader = "X-VP-Tenant"

// New returns the HTTP handler: every route of Routes whose handler Options
// provides.
func New(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.BodyReadTimeout <= 0 {
		o.BodyReadTimeout = DefaultBodyReadTimeout
	}
	if o.MaxConcurrentPerToken <= 0 {
		o.MaxConcurrentPerToken = DefaultMaxConcurrentPerToken
	}
	if o.MaxWaitsPerToken <= 0 {
		o.MaxWaitsPerToken = DefaultMaxWaitsPerToken
	}
	if o.MaxDrainBytes <= 0 {
		o.MaxDrainBytes = DefaultMaxDrainBytes
	}
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return o.MCP },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: mcpserver.SDKLogger(o.Logger)})
	lim := o.Limiter
	if lim == nil {
		lim = ratelimit.New(ratelimit.Options{Logger: o.Logger})
	}
	authed := privateNoStore(bearer(o, lim, newRefusalLog(o.Logger, time.Now), newFlights(o), jsonrpcErrors(mcpHandler)))
	mux := http.NewServeMux()
	for _, r := range append(Routes(), o.Routes...) {
		h := r.Handler
		if r.handler != nil {
			h = r.handler(o, authed)
		}
		if h == nil {
			continue // OAuth not configured here: its routes are not served
		}
		if r.Limit != nil {
			rule, what := r.Limit(lim.Rules())
			h = lim.Wrap(rule, what, h)
		}
		for _, p := range r.MuxPatterns() {
			mux.Handle(p, h)
		}
	}
	return logRequests(o.Logger, bodyDeadline(o.BodyReadTimeout, drainBody(o.MaxDrainBytes, mux)))
}

// CacheControlMCP is the Cache-Control of every answer of /mcp: each
// depends on the caller's token (its tenant, grants and tool profile), so
// no shared cache may keep one and no client should reuse it.
const CacheControlMCP = "private, no-store"

// privateNoStore sets CacheControlMCP on every answer of next, over what
// the SDK sets (no-cache, no-transform), when the status is written.
func privateNoStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(&noStoreWriter{ResponseWriter: w}, r)
	})
}

type noStoreWriter struct {
	http.ResponseWriter
	wrote bool
}

func (n *noStoreWriter) WriteHeader(code int) {
	if !n.wrote {
		n.wrote = true
		n.Header().Set("Cache-Control", CacheControlMCP)
	}
	n.ResponseWriter.WriteHeader(code)
}

func (n *noStoreWriter) Write(b []byte) (int, error) {
	if !n.wrote {
		n.WriteHeader(http.StatusOK)
	}
	return n.ResponseWriter.Write(b)
}

func (n *noStoreWriter) Flush() {
	if !n.wrote {
		n.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(n.ResponseWriter).Flush()
}

// Unwrap lets http.ResponseController reach the connection.
func (n *noStoreWriter) Unwrap() http.ResponseWriter { return n.ResponseWriter }

func resourceMetadataURL(o Options, r *http.Request) string {
	base := o.BasePath
	if base == "" {
		scheme := "http"
		if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
			scheme = "https"
		}
		base = scheme + "://" + r.Host
	}
	return strings.TrimSuffix(base, "/") + "/.well-known/oauth-protected-resource"
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) { s.status = code; s.ResponseWriter.WriteHeader(code) }

// Unwrap lets http.ResponseController (bodyDeadline) and the WebSocket
// upgrade of the Pacerelle doorbell reach the connection.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func logRequests(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		log.DebugContext(r.Context(), "http", "method", r.Method, "path", r.URL.Path, "status", rec.status, "duration", time.Since(start))
	})
}

func health(o Options) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"status": "ok", "service": "vantagepeers", "version": o.Version, "transport": "streamable-http",
			"storage": o.Storage, "uptimeSeconds": int64(time.Since(o.Started).Seconds()),
		})
	})
}
