package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
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
	counts, tokensOf := map[string]int{}, map[string]int{}
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
		counts[c.profile], tokensOf[c.profile] = len(res.Tools), tokens
		_ = cs.Close()
	}
	readmeStatesTheToolList(t, counts, tokensOf)
}

// readmeStatesTheToolList: the README's "N tools today ... (~X.Xk tokens
// ...) ... the M an agent uses in every session (~Y.Yk tokens)" is what
// was just measured (tokens to the nearest hundred).
func readmeStatesTheToolList(t *testing.T, counts, tokens map[string]int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)(\d+) tools today\. .*?\(~(\d+\.\d)k tokens.*?the (\d+) an agent uses in every\s+session \(~(\d+\.\d)k tokens\)`).FindSubmatch(b)
	if m == nil {
		t.Fatal("README: no sentence \"N tools today ... (~X.Xk tokens ... the M an agent uses in every session (~Y.Yk tokens)\"")
	}
	k := func(n int) string { return fmt.Sprintf("%.1f", float64(n)/1000) }
	got := []string{string(m[1]), string(m[2]), string(m[3]), string(m[4])}
	want := []string{strconv.Itoa(counts[mcpserver.ToolProfileFull]), k(tokens[mcpserver.ToolProfileFull]),
		strconv.Itoa(counts[mcpserver.ToolProfileCore]), k(tokens[mcpserver.ToolProfileCore])}
	if !slices.Equal(got, want) {
		t.Errorf("README says %v (tools, ~k tokens; core tools, ~k tokens); measured %v", got, want)
	}
}
