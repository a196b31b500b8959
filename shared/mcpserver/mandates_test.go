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

// TestMandateRemedyHints: the mandate errors carry remedies in domain
// terms; the text a model reads names the tool, as it always has.
func TestMandateRemedyHints(t *testing.T) {
	cs := connect(t, auth.MasterPrincipal("acme"))
	res, text := call(t, cs, "create_mandate", map[string]any{"requestedBy": "bob", "fulfilledBy": "alice", "service": "Build landing page", "budget": 100})
	if res.IsError {
		t.Fatal(text)
	}
	var m vp.Mandate
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		t.Fatal(err)
	}
	wantError := func(tool string, args map[string]any, want string) {
		t.Helper()
		res, text := call(t, cs, tool, args)
		if !res.IsError || text != want {
			t.Fatalf("%s: got %q, want the error %q", tool, text, want)
		}
	}
	wantError("update_mandate", map[string]any{"mandateId": m.ID, "callerOrchestrator": "system", "status": "accepted"},
		"invalid_argument: update_mandate: status: use accept_mandate to accept a mandate (it records who accepted)")
	wantError("update_mandate", map[string]any{"mandateId": m.ID, "callerOrchestrator": "system", "status": "settled"},
		"invalid_argument: update_mandate: status: use settle_mandate to settle a mandate (it records the final cost)")
	wantError("settle_mandate", map[string]any{"mandateId": m.ID, "finalCost": 10, "callerOrchestrator": "bob"},
		"conflict: settle_mandate: status: mandate "+m.ID+" is requested: it cannot move to settled; the only allowed next state is accepted (with accept_mandate)")
	for _, step := range []struct{ tool, caller, status string }{{"accept_mandate", "alice", ""}, {"update_mandate", "alice", "in_progress"}} {
		args := map[string]any{"mandateId": m.ID, "callerOrchestrator": step.caller}
		if step.status != "" {
			args["status"] = step.status
		}
		if res, text := call(t, cs, step.tool, args); res.IsError {
			t.Fatalf("%s: %s", step.tool, text)
		}
	}
	wantError("settle_mandate", map[string]any{"mandateId": m.ID, "finalCost": 10, "callerOrchestrator": "bob"},
		"conflict: settle_mandate: status: mandate "+m.ID+" is in_progress: it cannot move to settled; the only allowed next state is delivered (with update_mandate)")
	if res, text := call(t, cs, "update_mandate", map[string]any{"mandateId": m.ID, "callerOrchestrator": "alice", "status": "delivered"}); res.IsError {
		t.Fatal(text)
	}
	wantError("settle_mandate", map[string]any{"mandateId": m.ID, "finalCost": 150, "callerOrchestrator": "bob"},
		"invalid_argument: settle_mandate: finalCost: 150 exceeds the budget of mandate "+m.ID+" (100) by 50; raise the budget with update_mandate first, or settle at most 100")
}

// TestRecurringTools lives here too (the brief gives this capability no
// test file of its own in this package).
func TestRecurringTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"bob"}})
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	for _, w := range []string{"create_recurring_task", "get_recurring_task", "list_recurring_tasks", "update_recurring_task",
		"delete_recurring_task", "pause_recurring_task", "resume_recurring_task"} {
		if !slices.Contains(names, w) {
			t.Errorf("tool %s is not advertised", w)
		}
	}
	res, text := call(t, cs, "create_recurring_task", map[string]any{"title": "Daily standup", "assignedTo": "carol", "priority": "medium",
		"cronExpression": "0 9 * * 1-5", "timezone": "Europe/Paris"})
	if res.IsError {
		t.Fatal(text)
	}
	var r vp.RecurringTask
	if err := json.Unmarshal([]byte(text), &r); err != nil || r.ID == "" || r.NextRunAt == 0 || r.CreatedBy != "bob" {
		t.Fatalf("create_recurring_task returned %s", text)
	}
	res, text = call(t, cs, "create_recurring_task", map[string]any{"title": "x", "assignedTo": "carol", "priority": "medium", "cronExpression": "0 9 * *"})
	if !res.IsError || !strings.Contains(text, "cronExpression") || !strings.Contains(text, "0 9 * * 1-5") {
		t.Fatalf("a 4-field cron is not refused with the field and an example: %s", text)
	}
	if res, text = call(t, cs, "pause_recurring_task", map[string]any{"recurringTaskId": r.ID}); res.IsError || !strings.Contains(text, `"paused":true`) {
		t.Fatalf("pause_recurring_task: %s", text)
	}
	if res, text = call(t, cs, "list_recurring_tasks", map[string]any{"fields": "lite"}); res.IsError || !strings.Contains(text, r.ID) {
		t.Fatalf("list_recurring_tasks: %s", text)
	}
	if res, text = call(t, cs, "delete_recurring_task", map[string]any{"recurringTaskId": r.ID}); res.IsError || !strings.Contains(text, `"deleted":true`) {
		t.Fatalf("delete_recurring_task: %s", text)
	}
}
