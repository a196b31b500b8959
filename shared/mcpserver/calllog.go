package mcpserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// callInfo is what a tool call's log line needs from inside its handler:
// the kind of the error it failed with (toolError records it).
type callInfo struct{ kind string }

type callInfoKey struct{}

// logged wraps a tool handler with its one log line: tool, tenant, acting
// orchestrator, outcome ("ok" or the error kind) and duration — and, on
// Lambda, the call's CloudWatch figures in the same line (Options.EMF).
func (s *server) logged(name string, h mcp.ToolHandler) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		start := time.Now()
		info := &callInfo{}
		res, err := h(context.WithValue(ctx, callInfoKey{}, info), req)
		d := time.Since(start)
		outcome := "ok"
		if err != nil || res == nil || res.IsError {
			// An error without a kind failed before the domain saw it: the
			// arguments did not decode.
			outcome = info.kind
			if outcome == "" {
				outcome = vp.KindInvalid.String()
			}
		}
		attrs := []any{"tool", name, "outcome", outcome, "durationMs", float64(d.Microseconds()) / 1000}
		if p, perr := s.principal(req); perr == nil {
			attrs = append(attrs, "tenant", p.Tenant, "orchestrator", p.DefaultOrchestrator())
			if p.TokenID != "" {
				attrs = append(attrs, "tokenId", p.TokenID)
			}
		}
		if s.opts.EMF != nil {
			fault := outcome == vp.KindInternal.String() || outcome == vp.KindOther.String() || outcome == vp.KindUnavailable.String()
			attrs = append(attrs, s.opts.EMF.ToolCall(start, name, outcome != "ok", fault, d)...)
		}
		s.log.InfoContext(ctx, "tool call", attrs...)
		return res, err
	}
}

// noteKind records the error kind of the call in ctx, if any.
func noteKind(ctx context.Context, kind vp.Kind) {
	if info, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
		info.kind = kind.String()
	}
}

// SDKLogger is the logger to give the MCP SDK: its Info records ("server
// connecting", an empty session id, "disconnected": three a stateless HTTP
// request) go to Debug; its warnings and errors stay what they are. The
// tool call's own line (logged) is the one worth reading.
func SDKLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(demote{l.Handler()})
}

type demote struct{ h slog.Handler }

func (d demote) Enabled(ctx context.Context, l slog.Level) bool { return d.h.Enabled(ctx, d.level(l)) }

func (d demote) Handle(ctx context.Context, r slog.Record) error {
	r.Level = d.level(r.Level)
	return d.h.Handle(ctx, r)
}

func (d demote) WithAttrs(as []slog.Attr) slog.Handler { return demote{d.h.WithAttrs(as)} }
func (d demote) WithGroup(g string) slog.Handler       { return demote{d.h.WithGroup(g)} }

func (demote) level(l slog.Level) slog.Level {
	if l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}
