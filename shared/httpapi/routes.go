package httpapi

import (
	"net/http"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
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

	// Handler serves a route a capability module contributes (shared/app),
	// built over its services; nil in the table the CDK stack is generated
	// from. The core routes below are served from Options instead.
	Handler http.Handler
	// Limit is the per-address rate limit this package puts in front of
	// an open route; nil where the handler limits itself (OAuth) or the
	// caller authenticates.
	Limit func(ratelimit.Rules) (ratelimit.Rule, string)

	handler func(o Options, mcp http.Handler) http.Handler
}

// Routes returns the core HTTP routes — the MCP endpoint, health and the
// OAuth server — in a fixed order; the capability modules add theirs
// (shared/app Routes, Options.Routes). Each call returns fresh values.
func Routes() []Route {
	oauth := func(o Options, _ http.Handler) http.Handler { return o.OAuth }
	return []Route{
		{Path: "/mcp", Auth: AuthBearer, Function: awsenv.FuncMCP,
			handler: func(_ Options, mcp http.Handler) http.Handler { return mcp }},
		{Path: "/health", Methods: []string{http.MethodGet}, Auth: AuthNone, Function: awsenv.FuncOAuth,
			handler: func(o Options, _ http.Handler) http.Handler { return health(o) },
			Limit:   func(r ratelimit.Rules) (ratelimit.Rule, string) { return r.Health, "health checks" }},
		{Path: "/.well-known/{proxy+}", Auth: AuthNone, Function: awsenv.FuncOAuth, handler: oauth},
		{Path: "/oauth/{proxy+}", Auth: AuthNone, Function: awsenv.FuncOAuth, handler: oauth},
		{Path: "/admin/{proxy+}", Auth: AuthBearer, Function: awsenv.FuncOAuth, handler: oauth},
		{Path: "/issueBearerFromClerk", Auth: AuthNone, Function: awsenv.FuncOAuth, handler: oauth},
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
