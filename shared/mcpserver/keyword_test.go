package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// connectKeyword starts a server whose coordination service has a search
// index, as the embedded binary wires it.
func connectKeyword(t *testing.T, p vp.Principal) *mcp.ClientSession {
	cs, _ := connectMemory(t, p)
	return cs
}

type keywordOut struct {
	Items []map[string]any `json:"items"`
	Count int              `json:"count"`
}

func TestKeywordToolsThroughTools(t *testing.T) {
	cs := connectKeyword(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	writes := []struct {
		tool string
		args map[string]any
	}{
		{"send_message", map[string]any{"channel": "bob", "content": "the lemur deploy is green"}},
		{"send_message", map[string]any{"channel": "bob", "content": "unrelated chatter"}},
		{"create_task", map[string]any{"title": "Roll out the lemur cache", "assignedTo": "bob", "priority": "high"}},
		{"create_briefing_note", map[string]any{"title": "Lemur review", "topic": "standup", "participants": []string{"alice"}, "content": "shipped"}},
		{"register_component", map[string]any{"name": "lemur-expert", "type": "agent", "content": "---\ndescription: knows lemurs\n---\n"}},
	}
	for _, w := range writes {
		if res, text := call(t, cs, w.tool, w.args); res.IsError {
			t.Fatalf("%s: %s", w.tool, text)
		}
	}
	for _, c := range []struct {
		tool  string
		args  map[string]any
		field string // a field of the entity, present in the hit
		want  string
	}{
		{"search_messages_by_keyword", map[string]any{"query": "lemur", "from": "alice"}, "content", "the lemur deploy is green"},
		{"search_tasks_by_keyword", map[string]any{"query": "lemur", "status": "open", "assignedTo": "bob"}, "title", "Roll out the lemur cache"},
		{"search_briefing_notes_by_keyword", map[string]any{"query": "lemur", "topic": "standup"}, "title", "Lemur review"},
		{"search_components", map[string]any{"query": "lemur", "type": "agent"}, "name", "lemur-expert"},
	} {
		res, text := call(t, cs, c.tool, c.args)
		if res.IsError {
			t.Fatalf("%s: %s", c.tool, text)
		}
		out := decodeAs[keywordOut](t, text)
		if out.Count != 1 || len(out.Items) != 1 || out.Items[0][c.field] != c.want || out.Items[0]["_id"] == "" {
			t.Fatalf("%s: %s", c.tool, text)
		}
		if sc, _ := out.Items[0]["score"].(float64); sc <= 0 {
			t.Fatalf("%s: no score in %s", c.tool, text)
		}
		// An empty query is an invalid argument naming query.
		c.args["query"] = " ?! "
		res, text = call(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text, "invalid_argument") || !strings.Contains(text, "query") {
			t.Fatalf("%s with no words: %v %s", c.tool, res.IsError, text)
		}
	}
}

func TestKeywordToolsWithoutIndex(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	for _, tool := range []string{"search_messages_by_keyword", "search_tasks_by_keyword", "search_briefing_notes_by_keyword", "search_components"} {
		res, text := call(t, cs, tool, map[string]any{"query": "anything"})
		if !res.IsError || !strings.Contains(text, "not configured") {
			t.Errorf("%s without an index: %v %s", tool, res.IsError, text)
		}
	}
}
