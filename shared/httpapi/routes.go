package httpapi

import (
	"net/http"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
)

// Auth says what a caller of a route must present.
type Auth string

const (
	// AuthNone: no credential at the door. A handler may still check one
	// of its own protocol: OAuth clients at the token endpoint, a Clerk JWT
	// in the body of the exchange.
	AuthNone Auth = "none"
	// AuthBearer: requests without a valid bearer token are answered 401
	// (on /mcp by this package, before the MCP handler; on /admin by the
	// OAuth server, which also audits the refusal).
	AuthBearer Auth = "bearer"
	// AuthSignature: the request body is signed with a shared secret: the
	// GitHub webhooks, whose handler (webhooks.New) answers 401 to a request
	// without a valid X-Hub-Signature-256.
	AuthSignature Auth = "signature"
)

// Route is one entry of the HTTP surface: what the embedded server mounts,
// what each Lambda function serves and what the CDK stack routes to it.
type Route struct {
	// Path in API Gateway syntax: "/mcp", "/oauth/{proxy+}" for a prefix,
	// "/webhooks/github/{tenant}" for one segment (the same in a ServeMux
	// pattern).
	Path string
	// Methods allowed; empty for any.
	Methods []string
	Auth    Auth
	// Function is the Lambda function API Gateway sends the route to.
	Function string

	handler func(o Options, mcp http.Handler) http.Handler
	// limit is the per-address rate limit this package puts in front of
	// an open route; nil where the handler limits itself (OAuth) or the
	// caller authenticates.
	limit func(ratelimit.Rules) (ratelimit.Rule, string)
}

// Routes returns the HTTP routes, in a fixed order. Each call returns
// fresh values.
func Routes() []Route {
	oauth := func(o Options, _ http.Handler) http.Handler { return o.OAuth }
	webhooks := func(o Options, _ http.Handler) http.Handler { return o.Webhooks }
	pacerelle := func(o Options, _ http.Handler) http.Handler { return o.Pacerelle }
	pacerelleApp := func(o Options, _ http.Handler) http.Handler { return o.PacerelleApp }
	post := []string{http.MethodPost}
	return []Route{
		{Path: "/mcp", Auth: AuthBearer, Function: awsenv.FuncMCP,
			handler: func(_ Options, mcp http.Handler) http.Handler { return mcp }},
		{Path: "/health", Methods: []string{http.MethodGet}, Auth: AuthNone, Function: awsenv.FuncOAuth,
			handler: func(o Options, _ http.Handler) http.Handler { return health(o) },
			limit:   func(r ratelimit.Rules) (ratelimit.Rule, string) { return r.Health, "health checks" }},
		{Path: "/.well-known/{proxy+}", Auth: AuthNone, Function: awsenv.FuncOAuth, handler: oauth},
		{Path: "/oauth/{proxy+}", Auth: AuthNone, Function: awsenv.FuncOAuth, handler: oauth},
		{Path: "/admin/{proxy+}", Auth: AuthBearer, Function: awsenv.FuncOAuth, handler: oauth},
		{Path: "/issueBearerFromClerk", Auth: AuthNone, Function: awsenv.FuncOAuth, handler: oauth},
		// GitHub deliveries for the default tenant, and for a named one.
		{Path: "/webhooks/github", Methods: post, Auth: AuthSignature, Function: awsenv.FuncWebhooks, handler: webhooks},
		{Path: "/webhooks/github/{tenant}", Methods: post, Auth: AuthSignature, Function: awsenv.FuncWebhooks, handler: webhooks},
		// Large OKF exports: the URL is signed (HMAC, tenant, expiry), no token.
		{Path: okfsvc.DownloadPath, Methods: []string{http.MethodGet}, Auth: AuthNone, Function: awsenv.FuncMCP,
			handler: func(o Options, _ http.Handler) http.Handler { return o.OKFDownload },
			limit:   func(r ratelimit.Rules) (ratelimit.Rule, string) { return r.Download, "downloads" }},
		// The Pacerelle relay (shared/pacerelle/relay): agent tokens and
		// person-device credentials, both as bearers, checked by the relay.
		// On AWS the doorbell is the WebSocket API (functions/doorbell).
		{Path: "/pacerelle/{proxy+}", Auth: AuthBearer, Function: awsenv.FuncMCP, handler: pacerelle},
		// The person's web app (shared/pacerelle/webapp): static pages and
		// scripts; the browser authenticates to the relay API itself.
		{Path: "/pacerelle/app/{proxy+}", Methods: []string{http.MethodGet}, Auth: AuthNone, Function: awsenv.FuncMCP, handler: pacerelleApp},
	}
}

// MuxPatterns are the net/http ServeMux patterns of the route: a prefix
// for a {proxy+} path, one pattern a method when methods are given.
func (r Route) MuxPatterns() []string {
	p := r.Path
	if prefix, ok := strings.CutSuffix(p, "{proxy+}"); ok {
		p = prefix
	}
	if len(r.Methods) == 0 {
		return []string{p}
	}
	out := make([]string, 0, len(r.Methods))
	for _, m := range r.Methods {
		out = append(out, m+" "+p)
	}
	return out
}
