package mcpserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	"github.com/vantagepeers/vantagepeers/shared/search"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// connectMemory starts a server with the memory service and the search
// index wired as the embedded binary wires them, and returns a client acting as p and a function
// that runs the embedding worker until the queue is empty.
func connectMemory(t *testing.T, p vp.Principal) (*mcp.ClientSession, func()) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "vantagepeers.db"), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dir, "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	key, _ := auth.EnsureKey(ctx, st, "cursor")
	signer, _ := listing.NewSigner(key)
	q := storequeue.New(storequeue.Options{Store: st, Name: "embed"})
	mem := memory.New(memory.Options{Store: st, Index: idx, Embedder: embedlocal.New(embedlocal.Options{}), Queue: q, Cursors: signer})
	o := withLeaves(mcpserver.Options{Toolsets: []mcpserver.Toolset{mcpserver.KeywordTools(keyword.New(keyword.Options{Store: st, Cursors: signer, Index: idx})),
		mcpserver.MemoryTools(mem)}, Views: mcpserver.Views{Memory: mem}, Version: "test", LocalPrincipal: &p}, st, signer, idx)
	o.Toolsets = append(o.Toolsets, mcpserver.OKFTools(okfsvc.New(okfsvc.Options{Store: st, Memory: mem, Tasks: o.Views.Tasks, Search: &search.Writer{Index: idx}, Version: "test"}), nil))
	cs := clientOf(t, mcpserver.New(o))
	drain := func() {
		for {
			n, err := jobs.ProcessEmbedJobs(ctx, jobs.EmbedderOptions{Queue: q, Memory: mem})
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				return
			}
		}
	}
	return cs, drain
}

var memoryTools = []string{
	"store_memory", "get_memory", "list_memories", "soft_delete_memory", "recall", "text_search", "hybrid_search",
	"store_episode", "get_episode", "list_episodes", "search_episodes_by_keyword", "search_episodes_by_semantic",
	"create_fix_pattern", "get_fix_pattern", "add_fix_attempt", "validate_fix", "search_fix_patterns", "list_fix_patterns",
}

func TestMemoryToolsAreRegistered(t *testing.T) {
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		byName[tool.Name] = tool
	}
	size := 0
	for _, name := range memoryTools {
		tool, ok := byName[name]
		if !ok {
			t.Errorf("tool %s is not advertised", name)
			continue
		}
		b, _ := json.Marshal(tool)
		size += len(b)
		if !strings.Contains(tool.Description, "Example: {") || tool.InputSchema == nil {
			t.Errorf("%s: no example or no input schema", name)
		}
		readOnly := strings.HasPrefix(name, "get_") || strings.HasPrefix(name, "list_") || strings.HasPrefix(name, "search_") ||
			slices.Contains([]string{"recall", "text_search", "hybrid_search"}, name)
		if tool.Annotations.ReadOnlyHint != readOnly {
			t.Errorf("%s: readOnlyHint %v", name, tool.Annotations.ReadOnlyHint)
		}
	}
	if d := byName["soft_delete_memory"].Annotations.DestructiveHint; d == nil || !*d {
		t.Error("soft_delete_memory is not marked destructive")
	}
	t.Logf("memory, episode and fix-pattern tools: %d bytes in tools/list, ~%d tokens", size, size/4)

	// Without a memory service none of them is registered.
	plain := connect(t, auth.MasterPrincipal("acme"))
	res, _ = plain.ListTools(context.Background(), nil)
	for _, tool := range res.Tools {
		if slices.Contains(memoryTools, tool.Name) {
			t.Errorf("%s registered without Options.Memory", tool.Name)
		}
	}
}

func TestMemoryThroughTools(t *testing.T) {
	cs, drain := connectMemory(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"},
		ReadPrefixes: []string{"project/vp", "global"}, WritePrefixes: []string{"project/vp"}})
	res, text := call(t, cs, "store_memory", map[string]any{"namespace": "project/vp", "type": "decision",
		"content": "Rate limiting lives in the API gateway, per tenant."})
	if res.IsError {
		t.Fatal(text)
	}
	var stored memory.StoreResult
	if err := json.Unmarshal([]byte(text), &stored); err != nil || stored.MemoryID == "" {
		t.Fatalf("store_memory result %s", text)
	}
	_, text = call(t, cs, "text_search", map[string]any{"query": "rate limiting gateway"})
	var found memory.SearchResult
	if err := json.Unmarshal([]byte(text), &found); err != nil || found.Count != 1 || found.Results[0].ID != stored.MemoryID || found.Results[0].Content == "" {
		t.Fatalf("text_search %s", text)
	}
	drain()
	for _, tool := range []string{"recall", "hybrid_search"} {
		res, text = call(t, cs, tool, map[string]any{"query": "where is rate limiting enforced", "namespace": "project/vp", "limit": 3})
		if res.IsError || !strings.Contains(text, stored.MemoryID) || !strings.Contains(text, `"score"`) {
			t.Fatalf("%s: %s", tool, text)
		}
	}
	res, text = call(t, cs, "list_memories", map[string]any{"namespace": "project/vp", "fields": "lite"})
	if res.IsError || !strings.Contains(text, stored.MemoryID) || strings.Contains(text, "nextCursor") {
		t.Fatalf("list_memories: %s", text)
	}
	res, text = call(t, cs, "store_episode", map[string]any{"namespace": "project/vp", "context": "c", "goal": "g", "action": "a",
		"outcome": "o", "insight": "i", "severity": "minor"})
	if res.IsError {
		t.Fatal(text)
	}
	res, text = call(t, cs, "create_fix_pattern", map[string]any{"symptom": "chat message disappears", "rootCause": "optimistic update rolled back",
		"tags": []string{"ui"}, "stack": []string{"react"}, "sourceProject": "vp", "severity": "major"})
	if res.IsError || !strings.Contains(text, "patternId") {
		t.Fatalf("create_fix_pattern: %s", text)
	}

	// Errors name the field and say what to do.
	cases := []struct {
		name, tool string
		args       map[string]any
		want       []string
	}{
		{"unknown type", "store_memory", map[string]any{"namespace": "project/vp", "type": "gossip", "content": "x"}, []string{"type", "fact, decision"}},
		{"oversize", "store_memory", map[string]any{"namespace": "project/vp", "type": "note", "content": strings.Repeat("x", 100_001)}, []string{"content", "100000"}},
		{"write outside prefixes", "store_memory", map[string]any{"namespace": "global", "type": "note", "content": "x"}, []string{"forbidden", "namespace"}},
		{"bad ttl", "store_memory", map[string]any{"namespace": "project/vp", "type": "note", "content": "x", "ttl": "next week"}, []string{"ttl", "ISO 8601"}},
		{"missing relation target", "store_memory", map[string]any{"namespace": "project/vp", "type": "note", "content": "x",
			"relations": []map[string]string{{"targetId": "mem_missing", "type": "updates"}}}, []string{"not_found", "relations"}},
		{"empty query", "recall", map[string]any{"query": ""}, []string{"query"}},
		{"read outside prefixes", "hybrid_search", map[string]any{"query": "x", "namespace": "orchestrator/bob"}, []string{"forbidden", "namespace"}},
		{"episode severity", "store_episode", map[string]any{"namespace": "project/vp", "context": "c", "goal": "g", "action": "a",
			"outcome": "o", "insight": "i", "severity": "5"}, []string{"severity", "low, medium, high, critical"}},
		{"missing worked", "add_fix_attempt", map[string]any{"patternId": "fix_x", "description": "d", "why": "w"}, []string{"worked"}},
		{"unknown pattern", "get_fix_pattern", map[string]any{"patternId": "fix_missing"}, []string{"not_found", "patternId"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, text := call(t, cs, c.tool, c.args)
			if !res.IsError {
				t.Fatalf("not an error: %.200s", text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("error %q does not mention %q", text, w)
				}
			}
		})
	}
	// Nothing of it was written.
	_, text = call(t, cs, "list_memories", map[string]any{"namespace": "project/vp", "includeSuperseded": true})
	var page struct{ Items []map[string]any }
	if err := json.Unmarshal([]byte(text), &page); err != nil || len(page.Items) != 2 {
		t.Fatalf("after the refused calls: %s", text)
	}
}

// TestGetEpisodeOfAMemoryNamesGetMemory: the hint that moved from the
// memory domain to remedies.go reads as it did.
func TestGetEpisodeOfAMemoryNamesGetMemory(t *testing.T) {
	cs, _ := connectMemory(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"},
		ReadPrefixes: []string{"project/vp"}, WritePrefixes: []string{"project/vp"}})
	_, text := call(t, cs, "store_memory", map[string]any{"namespace": "project/vp", "type": "note", "content": "not an episode"})
	var stored memory.StoreResult
	if err := json.Unmarshal([]byte(text), &stored); err != nil {
		t.Fatalf("store_memory: %s", text)
	}
	res, text := call(t, cs, "get_episode", map[string]any{"memoryId": stored.MemoryID})
	want := `not_found: get_episode: memoryId: memory "` + stored.MemoryID + `" is a "note" memory, not an episode: use get_memory`
	if !res.IsError || text != want {
		t.Fatalf("get_episode of a note = %q,\nwant %q", text, want)
	}
}
