package mcpserver

import (
	"context"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// Tool profiles keep tools/list small. A profile changes only what is
// advertised, never what a token may call: every tool stays callable.
const (
	ToolProfileCore = "core"
	ToolProfileFull = "full"
	// ToolProfileHeader selects the profile per request (HTTP); the HTTP
	// layer also maps ?profile= on the MCP URL onto it.
	ToolProfileHeader = "X-VP-Tool-Profile"
)

// The core profile is the everyday set — presence, messaging, and the task,
// mission, memory and diary tools an agent uses in every session — made of
// the registered tools whose definition says Core (see tool).

// CheckToolProfile validates a profile name ("" means the default).
func CheckToolProfile(name string) error {
	switch name {
	case "", ToolProfileCore, ToolProfileFull:
		return nil
	}
	return fmt.Errorf("tool profile %q: want %q or %q", name, ToolProfileCore, ToolProfileFull)
}

// profileFor picks the advertised profile of a tools/list request: the
// request's header, else the token's default, else the server's default.
func (s *server) profileFor(req mcp.Request) string {
	if extra := req.GetExtra(); extra != nil {
		if h := extra.Header.Get(ToolProfileHeader); h != "" {
			return h
		}
		if p, ok := auth.PrincipalOf(extra.TokenInfo); ok && p.ToolProfile != "" {
			return p.ToolProfile
		}
	}
	if s.opts.LocalPrincipal != nil && s.opts.LocalPrincipal.ToolProfile != "" {
		return s.opts.LocalPrincipal.ToolProfile
	}
	if s.opts.ToolProfile != "" {
		return s.opts.ToolProfile
	}
	return ToolProfileFull
}

// filterToolList is receiving middleware that trims tools/list to the core
// profile when asked.
func (s *server) filterToolList(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil || method != "tools/list" {
			return res, err
		}
		list, ok := res.(*mcp.ListToolsResult)
		if !ok {
			return res, err
		}
		profile := s.profileFor(req)
		if err := CheckToolProfile(profile); err != nil {
			return nil, err
		}
		kept := make([]*mcp.Tool, 0, len(list.Tools))
		for _, t := range list.Tools {
			if profile == ToolProfileCore && !slices.Contains(s.core, t.Name) {
				continue
			}
			kept = append(kept, t)
		}
		filtered := *list
		filtered.Tools = kept
		return &filtered, nil
	}
}
