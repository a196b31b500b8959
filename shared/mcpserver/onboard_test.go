package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Tool descriptions are the product's, for any team: no in-house doctrine,
// jargon or another team's agent names.
func TestDescriptionsCarryNoInHouseDoctrine(t *testing.T) {
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	banned := []string{"doctrine", "dette", "fleet", "IRP", "T0-T13", "dev-convex-expert", "dev-fal-expert", "MUST", "sigma", "Gen UI", "SEP-"}
	for _, tool := range res.Tools {
		for _, b := range banned {
			if strings.Contains(tool.Description, b) {
				t.Errorf("%s: description carries %q: %s", tool.Name, b, tool.Description)
			}
		}
	}
}

// set_summary needs no instanceId: one session per agent is the usual case.
func TestSetSummaryDefaultsTheInstance(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}, TokenID: "tok_a"})
	res, text := call(t, cs, "set_summary", map[string]any{"summary": "reviewing the login flow"})
	if res.IsError || !strings.Contains(text, `"instanceId":"main"`) || !strings.Contains(text, "Summary set for alice (main)") {
		t.Fatalf("set_summary without instanceId: %s", text)
	}
	res, text = call(t, cs, "set_summary", map[string]any{"summary": "second laptop", "instanceId": "alice-laptop"})
	if res.IsError || !strings.Contains(text, `"instanceId":"alice-laptop"`) {
		t.Fatalf("set_summary with instanceId: %s", text)
	}
}

// A search by a token that may read no namespace says so instead of
// answering [] (which reads as "nothing matches").
func TestSearchWithNoReadableNamespaceIsAnError(t *testing.T) {
	cs, _ := connectMemory(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}, WritePrefixes: []string{"orchestrator/alice"}, TokenID: "tok_a"})
	for _, name := range []string{"recall", "text_search", "hybrid_search", "search_episodes_by_keyword", "search_episodes_by_semantic"} {
		res, text := call(t, cs, name, map[string]any{"query": "login"})
		if !res.IsError || !strings.Contains(text, "may read no namespace") || !strings.Contains(text, "--read") {
			t.Errorf("%s with no readable namespace: %s", name, text)
		}
	}
}
