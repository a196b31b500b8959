package awsapp

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/vantagepeers/vantagepeers/shared/emf"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
)

// HTTPFunc is the handler of an API Gateway HTTP API (payload format 2.0)
// integration.
type HTTPFunc func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// MCPHandler is the mcp function's HTTP handler: the same stateless
// Streamable HTTP handler, behind the same bearer authentication, that the
// embedded binary serves (shared/httpapi), on the DynamoDB store.
func (a *App) MCPHandler() http.Handler {
	a.OKFLinks = a.okfLinks()
	return httpapi.New(httpapi.Options{
		MCP: mcpserver.New(vpapp.MCPOptions(a.Services, mcpserver.Options{Version: a.Version, Logger: a.Log,
			ToolProfile: a.Config.ToolProfile, EmitUIMarkers: a.Config.EmitUIMarkers, EMF: emf.FromLambdaEnv()})),
		Tokens: a.Tokens, Version: a.Version, Logger: a.Log, Started: a.Started,
		Storage: "dynamodb", BasePath: a.Config.PublicBaseURL, Routes: vpapp.ModuleRoutes(a.Services), Limiter: a.Limiter,
	})
}

// limiter counts the requests of each source address in the table, so
// that its limits hold across instances. Behind API Gateway the source is
// the SourceIP of the event (aws-lambda-go-api-proxy's RemoteAddr), never
// an X-Forwarded-For a client wrote, unless VP_TRUSTED_PROXIES names the
// proxies in front (a CloudFront distribution, say).
func (a *App) limiter() *ratelimit.Limiter {
	return ratelimit.New(ratelimit.Options{Store: a.Store, Logger: a.Log, TrustedProxies: a.Config.TrustedProxies,
		Rules: ratelimit.Rules{Register: ratelimit.Rule{PerMinute: a.Config.RegisterPerMinute}}})
}

// OAuthHandler is the oauth function's HTTP handler: its routes of the
// table (httpapi.Routes) — the OAuth 2.1 authorization server
// (shared/oauth) and /health — with the same handlers the embedded binary
// serves next to /mcp.
func (a *App) OAuthHandler() http.Handler {
	api := httpapi.New(httpapi.Options{Tokens: a.Tokens, Version: a.Version, Logger: a.Log, Started: a.Started,
		Storage: "dynamodb", BasePath: a.Config.PublicBaseURL, OAuth: a.OAuth, Limiter: a.Limiter})
	return OnlyRoutesOf(FuncOAuth, api)
}

// OnlyRoutesOf serves with h the routes of the table (httpapi.Routes) that
// function serves and answers 404 on the others, as API Gateway would not
// send them here.
func OnlyRoutesOf(function string, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	for _, r := range vpapp.Routes(nil) {
		if r.Function == function {
			continue
		}
		for _, p := range r.MuxPatterns() {
			mux.Handle(p, http.NotFoundHandler())
		}
	}
	mux.Handle("/", h)
	return mux
}

// HTTP adapts h to API Gateway HTTP API events (payload v2) with
// aws-lambda-go-api-proxy, and logs one line per request.
func (a *App) HTTP(h http.Handler) HTTPFunc {
	adapter := httpadapter.NewV2(statusGuard(h))
	a.Log.Info("handler ready", "handlerMs", time.Since(a.loaded).Milliseconds(), "sinceProcessStartMs", time.Since(processStart).Milliseconds())
	return func(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		start := time.Now()
		resp, err := adapter.ProxyWithContext(ctx, ev)
		level := slog.LevelInfo
		if err != nil || resp.StatusCode >= 500 {
			level = slog.LevelError
		}
		a.Log.Log(ctx, level, "request", "method", ev.RequestContext.HTTP.Method, "path", ev.RawPath,
			"route", ev.RouteKey, "status", resp.StatusCode, "ms", time.Since(start).Milliseconds(), "err", err)
		return resp, err
	}
}

// statusGuard makes a handler that writes nothing answer 200 with an empty
// body, as net/http would: the proxy's response writer refuses a response
// without a status.
func statusGuard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g := &guardWriter{ResponseWriter: w}
		h.ServeHTTP(g, r)
		if !g.wrote {
			w.WriteHeader(http.StatusOK)
		}
	})
}

type guardWriter struct {
	http.ResponseWriter
	wrote bool
}

func (g *guardWriter) WriteHeader(code int) { g.wrote = true; g.ResponseWriter.WriteHeader(code) }
func (g *guardWriter) Write(b []byte) (int, error) {
	g.wrote = true
	return g.ResponseWriter.Write(b)
}

// Flush is a no-op: the proxy buffers the whole response.
func (g *guardWriter) Flush() {}
