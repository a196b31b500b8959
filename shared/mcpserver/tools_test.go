package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
)

// coreProfile is the core profile, exactly: a tool marked Core that is not
// registered, or one marked by mistake, fails TestCoreProfile.
var coreProfile = []string{
	"whoami", "set_summary", "list_peers", "get_profile",
	"send_message", "check_messages", "mark_as_read",
	"create_task", "get_task", "list_tasks", "update_task", "checkout_task", "start_task", "complete_task",
	"get_mission", "list_missions",
	"store_memory", "recall", "hybrid_search",
	"write_diary", "wait_for_activity",
}

// listTools returns tools/list of a fully wired server in profile and its
// size in tokens (characters / 4).
func listTools(t *testing.T, profile string) ([]*mcp.Tool, int) {
	t.Helper()
	p := auth.MasterPrincipal("acme")
	p.ToolProfile = profile
	cs, _ := connectMemory(t, p)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	return res.Tools, len(b) / 4
}

func names(tools []*mcp.Tool) []string {
	var out []string
	for _, tool := range tools {
		out = append(out, tool.Name)
	}
	return out
}

// TestCoreProfile: the core profile is derived from the tool definitions;
// it has exactly the everyday 21 tools, each registered, and both profiles
// stay within the DESIGN budgets (full < 20,000 tokens, core < 8,000).
func TestCoreProfile(t *testing.T) {
	full, fullTokens := listTools(t, mcpserver.ToolProfileFull)
	core, coreTokens := listTools(t, mcpserver.ToolProfileCore)
	all := names(full)
	for _, name := range coreProfile {
		if !slices.Contains(all, name) {
			t.Errorf("core tool %s is not registered", name)
		}
	}
	got, want := names(core), slices.Clone(coreProfile)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("core profile = %v, want %v", got, want)
	}
	t.Logf("tools/list: full %d tools ~%d tokens, core %d tools ~%d tokens", len(full), fullTokens, len(core), coreTokens)
	if fullTokens >= 20_000 || coreTokens >= 8_000 {
		t.Errorf("tools/list is ~%d tokens (full) and ~%d (core); the budgets are 20,000 and 8,000", fullTokens, coreTokens)
	}
}
