package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMandateTools(t *testing.T) {
	cs := connect(t, auth.MasterPrincipal("acme"))
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	for _, w := range []string{"create_mandate", "accept_mandate", "update_mandate", "settle_mandate", "validate_mandate_spending", "list_mandates", "get_mandate"} {
		if !slices.Contains(names, w) {
			t.Errorf("tool %s is not advertised", w)
		}
	}

	res, text := call(t, cs, "create_mandate", map[string]any{"requestedBy": "bob", "fulfilledBy": "alice", "service": "Build landing page", "budget": 100000})
	if res.IsError {
		t.Fatal(text)
	}
	var m vp.Mandate
	if err := json.Unmarshal([]byte(text), &m); err != nil || m.ID == "" || m.Status != vp.MandateRequested {
		t.Fatalf("create_mandate returned %s", text)
	}
	if res, text = call(t, cs, "accept_mandate", map[string]any{"mandateId": m.ID, "callerOrchestrator": "alice"}); res.IsError || !strings.Contains(text, `"accepted"`) {
		t.Fatalf("accept_mandate: %s", text)
	}
	res, text = call(t, cs, "validate_mandate_spending", map[string]any{"mandateId": m.ID, "proposedAmount": 150000})
	if !res.IsError || !strings.Contains(text, "proposedAmount") || !strings.Contains(text, "150000") || !strings.Contains(text, "100000") {
		t.Fatalf("over-budget spend not refused with the numbers: %s", text)
	}
	res, text = call(t, cs, "settle_mandate", map[string]any{"mandateId": m.ID, "finalCost": 10, "callerOrchestrator": "bob"})
	if !res.IsError || !strings.Contains(text, "is accepted") || !strings.Contains(text, "in_progress") {
		t.Fatalf("settling an accepted mandate: %s", text)
	}
	if res, text = call(t, cs, "list_mandates", map[string]any{"fulfilledBy": "alice", "fields": "lite"}); res.IsError || !strings.Contains(text, m.ID) {
		t.Fatalf("list_mandates: %s", text)
	}
}
