package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestStuckWorkThroughTools: fail_task, block_task's blockedCause and
// check_messages' stuck work through the tools; null acts like an
// omitted argument, and stuckAfterHours outside 1–168 is refused naming
// the field and the bound.
func TestStuckWorkThroughTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice", "bob"}})
	mk := func(args map[string]any) vp.Task {
		t.Helper()
		res, text := call(t, cs, "create_task", args)
		if res.IsError {
			t.Fatal(text)
		}
		return decodeAs[vp.Task](t, text)
	}
	api := mk(map[string]any{"title": "API", "assignedTo": "alice", "priority": "high"})
	client := mk(map[string]any{"title": "Client", "assignedTo": "bob", "priority": "high", "createdBy": "bob", "dependsOn": []string{api.ID}})

	res, text := call(t, cs, "block_task", map[string]any{"taskId": client.ID, "reason": "alice's API", "blockedCause": "dependency", "callerOrchestrator": "bob"})
	if res.IsError || decodeAs[vp.Task](t, text).BlockedCause != "dependency" {
		t.Fatalf("block_task: %s", text)
	}
	res, text = call(t, cs, "block_task", map[string]any{"taskId": client.ID, "reason": "x", "blockedCause": "soon", "callerOrchestrator": "bob"})
	if !res.IsError || !strings.Contains(text, "blockedCause") {
		t.Fatalf("unknown blockedCause: %s", text)
	}

	for _, args := range []map[string]any{{}, {"stuckAfterHours": nil}, {"stuckAfterHours": 4}} {
		res, text = call(t, cs, "check_messages", mergeArgs(args, map[string]any{"recipient": "alice"}))
		if res.IsError {
			t.Fatalf("check_messages %v: %s", args, text)
		}
		in := decodeAs[message.Inbox](t, text)
		if len(in.PeersStuckOnYou) != 1 || in.PeersStuckOnYou[0].TaskID != client.ID || in.PeersStuckOnYou[0].BlockedCause != "dependency" {
			t.Fatalf("check_messages %v: peersStuckOnYou %+v", args, in.PeersStuckOnYou)
		}
	}
	for _, h := range []int{0, 169, -1} {
		res, text = call(t, cs, "check_messages", map[string]any{"stuckAfterHours": h})
		if !res.IsError || !strings.Contains(text, "stuckAfterHours") || !strings.Contains(text, "168") {
			t.Fatalf("stuckAfterHours %d: %s", h, text)
		}
	}

	res, text = call(t, cs, "update_task", map[string]any{"taskId": api.ID, "status": "failed"})
	if !res.IsError || !strings.Contains(text, "fail_task") {
		t.Fatalf("update_task status failed: %s", text)
	}
	res, text = call(t, cs, "fail_task", map[string]any{"taskId": api.ID, "reason": nil})
	if !res.IsError || !strings.Contains(text, "reason") {
		t.Fatalf("fail_task with a null reason: %s", text)
	}
	res, text = call(t, cs, "fail_task", map[string]any{"taskId": api.ID, "reason": strings.Repeat("r", task.FailTaskInput{}.Limits().Bytes+1)})
	if !res.IsError || !strings.Contains(text, "reason") {
		t.Fatalf("fail_task with an oversize reason: %s", text)
	}
	res, text = call(t, cs, "fail_task", map[string]any{"taskId": api.ID, "reason": "the vendor removed the endpoint", "callerOrchestrator": nil})
	if got := decodeAs[vp.Task](t, text); res.IsError || got.Status != vp.TaskFailed || got.FailReason != "the vendor removed the endpoint" {
		t.Fatalf("fail_task: %s", text)
	}
	res, text = call(t, cs, "list_tasks", map[string]any{"status": "failed"})
	if page := decodeAs[struct{ Items []vp.Task }](t, text); res.IsError || len(page.Items) != 1 || page.Items[0].ID != api.ID {
		t.Fatalf("list_tasks status failed: %s", text)
	}
	// A failed task is nobody's open work: bob's task no longer waits on alice.
	_, text = call(t, cs, "check_messages", map[string]any{"recipient": "alice"})
	if in := decodeAs[message.Inbox](t, text); len(in.PeersStuckOnYou) != 0 || strings.Contains(text, "peersStuckOnYou") {
		t.Fatalf("peers of a failed task: %s", text)
	}
}

func mergeArgs(a, b map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}
