package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/vp"
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

// coreTools is the everyday set: presence, messaging, and the task, mission,
// memory and diary tools an agent uses in every session. Names not (yet)
// registered are ignored.
var coreTools = []string{
	"whoami", "set_summary", "list_peers", "get_profile",
	"send_message", "check_messages", "mark_as_read",
	"create_task", "get_task", "list_tasks", "update_task", "checkout_task", "start_task", "complete_task",
	"get_mission", "list_missions",
	"store_memory", "recall", "hybrid_search",
	"write_diary",
}

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
		if extra.TokenInfo != nil {
			if p, ok := extra.TokenInfo.Extra[PrincipalKey].(vp.Principal); ok && p.ToolProfile != "" {
				return p.ToolProfile
			}
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
			if profile == ToolProfileCore && !slices.Contains(coreTools, t.Name) {
				continue
			}
			kept = append(kept, s.advertised(t))
		}
		filtered := *list
		filtered.Tools = kept
		return &filtered, nil
	}
}

// advertised returns the lean form of a tool that tools/list shows, computed
// once per tool. Every client loads tools/list into its model's context, so
// it drops what only a validator reads: output schemas (results still carry
// structuredContent and a JSON text copy), "additionalProperties": false and
// the "null" of optional fields' types. Arguments are still validated
// against the full input schema.
func (s *server) advertised(t *mcp.Tool) *mcp.Tool {
	s.leanMu.Lock()
	defer s.leanMu.Unlock()
	if lean, ok := s.lean[t.Name]; ok {
		return lean
	}
	lean := *t
	lean.OutputSchema = nil
	if b, err := json.Marshal(t.InputSchema); err == nil {
		var schema map[string]any
		if json.Unmarshal(b, &schema) == nil {
			compactSchema(schema)
			lean.InputSchema = schema
		}
	}
	if s.lean == nil {
		s.lean = map[string]*mcp.Tool{}
	}
	s.lean[t.Name] = &lean
	return &lean
}

func compactSchema(node any) {
	switch n := node.(type) {
	case map[string]any:
		if ap, ok := n["additionalProperties"].(bool); ok && !ap {
			delete(n, "additionalProperties")
		}
		if types, ok := n["type"].([]any); ok && len(types) == 2 {
			for i, ty := range types {
				if ty == "null" {
					n["type"] = types[1-i]
				}
			}
		}
		for _, v := range n {
			compactSchema(v)
		}
	case []any:
		for _, v := range n {
			compactSchema(v)
		}
	}
}
