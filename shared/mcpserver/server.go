// Package mcpserver exposes the domain services as MCP tools with the
// official Go SDK. Tool handlers are thin: decode arguments (validated
// against the schema inferred from their type, see schemas.go), resolve the
// caller's Principal, call one domain method, return its result. One file
// per capability.
//
// Arguments are checked centrally before any handler runs (decode.go): an
// argument given null is the same as one left out, at every level (so a
// required one given null is refused as missing, naming it); unknown
// arguments are named with the closest known one; every string argument
// of every tool has a maxLength (its tool's Limits, else defaultLengths),
// enforced; NUL, escaped lone surrogates and nesting past
// MaxArgumentDepth are refused naming the argument; identity arguments
// must be displayable names (vp.NameProblem). Errors never show a
// validator's or decoder's internals.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/emf"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Options configures New.
type Options struct {
	// Toolsets are the capabilities' tools (IssueTools, TaskTools, ...),
	// registered in order: tools/list offers exactly these. The module
	// list of shared/app gives them (app.MCPOptions).
	Toolsets []Toolset
	// Views are the services the MCP Apps views read their data from.
	Views   Views
	Version string
	Logger  *slog.Logger
	// LocalPrincipal is the identity of calls that carry no token: set for
	// stdio, where the process owner is the caller; never for HTTP.
	LocalPrincipal *vp.Principal
	// ToolProfile is the default profile advertised by tools/list
	// ("core" or "full"; default full).
	ToolProfile string
	// EmitUIMarkers appends a UI marker (shared/uimarker, platform spec
	// §15.3) to the text of the tools that have one (tool.Marker);
	// structuredContent is unchanged. Off: plain text (VP_EMIT_UI_MARKERS).
	EmitUIMarkers bool

	// EMF, when set (on Lambda), adds each tool call's CloudWatch
	// embedded-metric figures to its log line.
	EMF *emf.Recorder

	// Extend, when set, adds to the SDK's options what it takes only at
	// construction (the conformance build's completion and subscription
	// handlers, shared/conformance); release builds leave it nil.
	Extend func(*mcp.ServerOptions)

	// inferSchemas ignores schemas.json (its generator and test set it).
	inferSchemas bool
}

// Toolset is one capability's tools over its service, made by the
// capability's constructor in its file (IssueTools in issues.go, ...); the
// zero Toolset registers nothing.
type Toolset struct {
	add func(s *server, m *mcp.Server)
}

// CacheScopePrivate is the cacheScope of every result that has one.
const CacheScopePrivate = "private"

type server struct {
	opts Options
	log  *slog.Logger

	schemas *schemaSet
	// core lists the registered tools of the core profile, in order.
	core []string
}

// New builds the MCP server with every tool registered.
func New(o Options) *mcp.Server {
	_, m := build(o)
	return m
}

func build(o Options) (*server, *mcp.Server) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	schemas, err := newSchemaSet(o.inferSchemas)
	if err != nil {
		// schemas.json is embedded at build time; a broken one is a build error.
		panic(err)
	}
	s := &server{opts: o, log: o.Logger, schemas: schemas}
	so := &mcp.ServerOptions{
		Instructions: "VantagePeers coordinates a team of AI agents: profiles and presence (set_summary, list_peers), " +
			"messages with read receipts (send_message, check_messages, mark_as_read). Start a session with set_summary, " +
			"then check_messages. Identity comes from your token: omit from/createdBy and they default to you. " +
			"An argument given null is the same as leaving it out.",
		Logger:       SDKLogger(o.Logger),
		Capabilities: serverCapabilities(),
		// One page: clients get every advertised tool from one tools/list.
		PageSize: 1000,
		// Every list and read depends on the caller (tools/list on the
		// token's tool profile, a view on its tenant and grants): on the
		// 2026-07-28 wire, no cache but the caller's may keep one, and it
		// is stale at once. (Tool results carry no cache fields; the HTTP
		// layer sends Cache-Control: private, no-store.)
		SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.CacheScope, c.TTLMs = CacheScopePrivate, 0
		},
	}
	if o.Extend != nil {
		o.Extend(so)
	}
	m := mcp.NewServer(&mcp.Implementation{Name: "vantagepeers", Title: "VantagePeers", Version: o.Version}, so)
	m.AddReceivingMiddleware(s.filterToolList)
	for _, ts := range o.Toolsets {
		if ts.add != nil {
			ts.add(s, m)
		}
	}
	s.addUIResources(m)
	return s, m
}

// principal resolves who is calling.
func (s *server) principal(req *mcp.CallToolRequest) (vp.Principal, error) {
	if req == nil {
		return s.principalOf(nil)
	}
	return s.principalOf(req.Extra)
}

// principalOf resolves the caller of any request (a tool call, a
// resources/read) from its token, else LocalPrincipal.
func (s *server) principalOf(extra *mcp.RequestExtra) (vp.Principal, error) {
	if extra != nil {
		if p, ok := auth.PrincipalOf(extra.TokenInfo); ok {
			return p, nil
		}
	}
	if s.opts.LocalPrincipal != nil {
		return *s.opts.LocalPrincipal, nil
	}
	return vp.Principal{}, vp.E("", vp.KindUnauthorized, "", "no credential: send Authorization: Bearer <token>")
}

// grantsNothing reports a principal that authenticates but may do nothing:
// no orchestrator, no namespace (the deny-by-default client-generic
// profile). It may still call whoami.
func grantsNothing(p vp.Principal) bool {
	return !p.Admin && len(p.Orchestrators) == 0 && len(p.ReadPrefixes) == 0 && len(p.WritePrefixes) == 0
}

func ptr[T any](v T) *T { return &v }

// Annotation presets.
var (
	readOnly    = &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	write       = &mcp.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	idempotent  = &mcp.ToolAnnotations{DestructiveHint: ptr(false), IdempotentHint: true, OpenWorldHint: ptr(false)}
	destructive = &mcp.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
)

// add registers tool t, whose handler is a domain call taking the
// principal and the decoded arguments of type In.
//
// It uses the SDK's low-level registration: arguments are validated against
// the tool's schema (schemas.go) and decoded once, and the result is
// marshalled once, into structuredContent and its text copy. The SDK's
// generic path would infer the schema at start-up and, on every call,
// decode the arguments twice and re-validate an inferred output schema;
// output shapes are checked by tests instead.
func add[In, Out any](s *server, m *mcp.Server, t tool, fn func(context.Context, vp.Principal, In) (Out, error)) {
	schema, err := schemaFor[In](s.schemas, t)
	if err != nil {
		// An argument type that has no JSON schema, or limits that name no
		// argument, are programming errors.
		panic(err)
	}
	if t.Core {
		s.core = append(s.core, t.Name)
	}
	m.AddTool(&mcp.Tool{Name: t.Name, Annotations: t.Annotations, Description: t.Description, InputSchema: schema.advertised,
		Meta: uiToolMeta(t.UI)}, s.logged(t.Name, func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.ErrorContext(ctx, "tool panicked", "tool", t.Name, "panic", r, "stack", string(debug.Stack()))
				noteKind(ctx, vp.KindInternal)
				res, err = errorResult(fmt.Errorf("internal error in %s; it was logged — retry, and report it if it persists", t.Name)), nil
			}
		}()
		in, err := decodeArgs[In](schema, req.Params.Arguments)
		if err != nil {
			return errorResult(s.toolError(ctx, t.Name, err)), nil
		}
		p, err := s.principal(req)
		if err == nil && grantsNothing(p) && t.Name != "whoami" {
			err = vp.E(t.Name, vp.KindForbidden, "", "this token may act as no orchestrator and read or write no namespace "+
				"(an OAuth client without a person's approval, or one whose profile grants nothing): sign in again with an agent token, or ask an admin to elevate the client")
		}
		if err != nil {
			return errorResult(s.toolError(ctx, t.Name, err)), nil
		}
		out, err := fn(ctx, p, in)
		if err != nil {
			noteStepUp(ctx, p, err)
			return errorResult(s.toolError(ctx, t.Name, err)), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return errorResult(s.toolError(ctx, t.Name, vp.Wrap(t.Name, vp.KindInternal, err))), nil
		}
		// The typed value, not b: the SDK re-validates a json.RawMessage byte
		// by byte, and the result is large enough for that to show (tests/bench).
		text := string(b)
		if s.opts.EmitUIMarkers && t.Marker != nil {
			text += s.marker(ctx, t, b)
		}
		return &mcp.CallToolResult{
			StructuredContent: out,
			Content:           []mcp.Content{&mcp.TextContent{Text: text}},
		}, nil
	}))
}

// errorResult is the isError result of a failed call.
func errorResult(err error) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	res.SetError(err)
	return res
}

// toolError turns a domain error into the text of an isError result: the
// kind, the operation, the field and what to do. Internal details are
// logged, not returned.
func (s *server) toolError(ctx context.Context, tool string, err error) error {
	kind := vp.KindOf(err)
	noteKind(ctx, kind)
	if kind == vp.KindOther || kind == vp.KindInternal {
		s.log.ErrorContext(ctx, "tool failed", "tool", tool, "err", err)
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("%s: the request was cancelled or timed out; retry", tool)
		}
		return fmt.Errorf("internal error in %s; it was logged — retry, and report it if it persists", tool)
	}
	if kind == vp.KindUnavailable || kind == vp.KindRateLimited {
		// The wrapped cause names backend internals (SQL, AWS error codes):
		// log it; tell the caller only that waiting and retrying will do.
		s.log.WarnContext(ctx, "tool deferred", "tool", tool, "kind", kind.String(), "err", err)
		what := "too many requests right now"
		// A refusal the domain composed itself, with no backend cause (a
		// memory budget, a quota), says which limit: show it.
		if e := (*vp.Error)(nil); kind == vp.KindRateLimited && errors.As(err, &e) && e.Kind == kind && e.Msg != "" && e.Err == nil {
			what = e.Msg
			if e.Field != "" {
				what = e.Field + ": " + e.Msg
			}
		}
		if d, _ := vp.RetryAfter(err); d > 0 {
			secs := int((d + time.Second - 1) / time.Second) // round up: retrying early fails again
			return fmt.Errorf("%s: %s: %s; retry after %d seconds", tool, kind, what, secs)
		}
		if kind == vp.KindRateLimited {
			return fmt.Errorf("%s: %s: %s; retry in a few seconds", tool, kind, what)
		}
		return fmt.Errorf("%s: %s: a dependency is busy or unavailable right now; retry in a few seconds", tool, kind)
	}
	return fmt.Errorf("%s: %s", kind, withRemedy(err.Error(), err))
}
