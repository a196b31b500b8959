package main

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
)

// TestToolListBudget measures tools/list of the fully wired product in
// tokens (characters / 4): every client loads it into its model's context.
func TestToolListBudget(t *testing.T) {
	ctx := context.Background()
	a, err := openApp(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, c := range []struct {
		profile string
		budget  int
	}{{mcpserver.ToolProfileFull, 20_000}, {mcpserver.ToolProfileCore, 8_000}} {
		p := auth.MasterPrincipal("default")
		p.ToolProfile = c.profile
		ct, st := mcp.NewInMemoryTransports()
		if _, err := a.mcpServer(&p).Connect(ctx, st, nil); err != nil {
			t.Fatal(err)
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "budget"}, nil).Connect(ctx, ct, nil)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(res)
		tokens := len(b) / 4
		type size struct {
			name         string
			desc, schema int
		}
		var sizes []size
		descs, schemas := 0, 0
		for _, tool := range res.Tools {
			s, _ := json.Marshal(tool.InputSchema)
			sizes = append(sizes, size{tool.Name, len(tool.Description), len(s)})
			descs += len(tool.Description)
			schemas += len(s)
		}
		sort.Slice(sizes, func(i, j int) bool { return sizes[i].desc+sizes[i].schema > sizes[j].desc+sizes[j].schema })
		var top []string
		for _, s := range sizes[:min(8, len(sizes))] {
			top = append(top, s.name)
		}
		t.Logf("%s: %d tools, ~%d tokens (descriptions ~%d, input schemas ~%d); largest: %s",
			c.profile, len(res.Tools), tokens, descs/4, schemas/4, strings.Join(top, ", "))
		if tokens >= c.budget {
			t.Errorf("%s tools/list is ~%d tokens; the budget is %d", c.profile, tokens, c.budget)
		}
		_ = cs.Close()
	}
}
