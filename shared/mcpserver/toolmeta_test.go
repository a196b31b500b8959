package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestToolsHaveTitles: every registered tool has a short title of its
// own, which hosts show in place of its name.
func TestToolsHaveTitles(t *testing.T) {
	tools, _ := listTools(t, mcpserver.ToolProfileFull)
	if len(tools) < 100 {
		t.Fatalf("%d tools listed, want every tool (100+)", len(tools))
	}
	seen := map[string]string{}
	for _, tool := range tools {
		switch {
		case strings.TrimSpace(tool.Title) == "":
			t.Errorf("%s has no title", tool.Name)
		case len(tool.Title) > 32:
			t.Errorf("%s: title %q is %d bytes; keep it under 32", tool.Name, tool.Title, len(tool.Title))
		case seen[tool.Title] != "":
			t.Errorf("%s and %s share the title %q", seen[tool.Title], tool.Name, tool.Title)
		}
		seen[tool.Title] = tool.Name
	}
}

// TestCoreOutputSchemas: the core tools, and only they, declare an
// outputSchema, and the structuredContent of a call of each over seeded
// data validates against it (as the TypeScript SDK's client checks).
func TestCoreOutputSchemas(t *testing.T) {
	ctx := context.Background()
	alice := vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}, TokenID: "tok_a",
		ReadPrefixes: []string{"project/vp"}, WritePrefixes: []string{"project/vp"}}
	cs, drain := connectMemory(t, alice)
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	schemas := map[string]*jsonschema.Resolved{}
	for _, tool := range res.Tools {
		core := slices.Contains(coreProfile, tool.Name)
		if (tool.OutputSchema != nil) != core {
			t.Errorf("%s: core %v, declares an outputSchema %v", tool.Name, core, tool.OutputSchema != nil)
		}
		if tool.OutputSchema == nil {
			continue
		}
		b, _ := json.Marshal(tool.OutputSchema)
		var s jsonschema.Schema
		if err := json.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: outputSchema: %v", tool.Name, err)
		}
		if s.Type != "object" {
			t.Errorf("%s: outputSchema type %q, want object", tool.Name, s.Type)
		}
		if schemas[tool.Name], err = s.Resolve(nil); err != nil {
			t.Fatalf("%s: outputSchema: %v", tool.Name, err)
		}
	}

	called := map[string]bool{}
	// check calls name with args and validates its structuredContent; it
	// returns the result decoded into a map.
	check := func(name string, args map[string]any) map[string]any {
		t.Helper()
		res, text := call(t, cs, name, args)
		if res.IsError {
			t.Fatalf("%s: %s", name, text)
		}
		// The wire form, as a client sees it, not the server's Go value.
		b, _ := json.Marshal(res.StructuredContent)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatalf("%s: structuredContent: %v", name, err)
		}
		rs := schemas[name]
		if rs == nil {
			t.Fatalf("%s declares no outputSchema", name)
		}
		if err := rs.Validate(&v); err != nil {
			t.Errorf("%s: structuredContent %s does not match its outputSchema: %v", name, b, err)
		}
		called[name] = true
		m, _ := v.(map[string]any)
		return m
	}

	const n = 3
	check("whoami", nil)
	check("set_summary", map[string]any{"summary": "checking output schemas"})
	check("get_profile", map[string]any{"orchestratorId": "alice"})
	check("list_peers", nil)
	var receipts []any
	for i := range n {
		check("send_message", map[string]any{"channel": "alice", "content": fmt.Sprintf("note %d", i)})
	}
	inbox := check("check_messages", nil)
	msgs, _ := inbox["messages"].([]any)
	if len(msgs) != n {
		t.Fatalf("check_messages: %d messages, want %d", len(msgs), n)
	}
	for _, m := range msgs {
		receipts = append(receipts, m.(map[string]any)["receiptId"])
	}
	check("mark_as_read", map[string]any{"receiptIds": receipts})

	mission, text := call(t, cs, "create_mission", map[string]any{"name": "Ship", "project": "vp", "priority": "high"})
	if mission.IsError {
		t.Fatal(text)
	}
	missionID := decodeAs[map[string]any](t, text)["_id"]
	var taskIDs []any
	for i := range n {
		tk := check("create_task", map[string]any{"title": fmt.Sprintf("step %d", i), "assignedTo": "alice", "priority": "high",
			"missionId": missionID, "tags": []string{"a"}, "estimatedMinutes": 5})
		taskIDs = append(taskIDs, tk["_id"])
	}
	check("get_task", map[string]any{"taskId": taskIDs[0]})
	check("update_task", map[string]any{"taskId": taskIDs[0], "description": "with a description"})
	check("start_task", map[string]any{"taskId": taskIDs[0]})
	check("complete_task", map[string]any{"taskId": taskIDs[0], "completionNote": "done"})
	check("checkout_task", map[string]any{"taskId": taskIDs[1]})
	if page := check("list_tasks", map[string]any{"fields": "full"}); len(page["items"].([]any)) != n {
		t.Errorf("list_tasks: %d items, want %d", len(page["items"].([]any)), n)
	}
	if m := check("get_mission", map[string]any{"missionId": missionID}); len(m["tasks"].([]any)) != n {
		t.Errorf("get_mission: %d tasks, want %d", len(m["tasks"].([]any)), n)
	}
	check("list_missions", nil)

	for i := range n {
		check("store_memory", map[string]any{"namespace": "project/vp", "type": "fact", "content": fmt.Sprintf("output schemas are checked %d", i)})
	}
	drain()
	for _, name := range []string{"recall", "hybrid_search"} {
		if r := check(name, map[string]any{"query": "output schemas checked"}); len(r["results"].([]any)) != n {
			t.Errorf("%s: %d results, want %d", name, len(r["results"].([]any)), n)
		}
	}
	check("write_diary", map[string]any{"date": "2026-05-29", "content": "Checked output schemas."})
	check("wait_for_activity", map[string]any{"timeoutMs": 1})

	for _, name := range coreProfile {
		if !called[name] {
			t.Errorf("core tool %s was not called", name)
		}
	}
}

// TestOutputSchemaCatchesAMismatch: the check above can fail — a result
// missing a required member, or with a member of the wrong type, does
// not validate against the declared schema.
func TestOutputSchemaCatchesAMismatch(t *testing.T) {
	tools, _ := listTools(t, mcpserver.ToolProfileCore)
	i := slices.IndexFunc(tools, func(tool *mcp.Tool) bool { return tool.Name == "get_task" })
	if i < 0 || tools[i].OutputSchema == nil {
		t.Fatal("get_task declares no outputSchema")
	}
	b, _ := json.Marshal(tools[i].OutputSchema)
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{`{"title":"no id"}`, `{"_id":1,"_creationTime":1,"title":"t","assignedTo":"a","priority":"high","status":"todo","createdBy":"a","updatedAt":1}`} {
		var v any
		_ = json.Unmarshal([]byte(bad), &v)
		if err := rs.Validate(&v); err == nil {
			t.Errorf("%s validates against get_task's outputSchema", bad)
		}
	}
}

// TestCompatArgumentsAreUnlistedButKept: callerOrchestrator,
// callerInstance, tenantId and a writer's createdBy are not in
// tools/list, yet every tool that took one still accepts it, bounded as
// before.
func TestCompatArgumentsAreUnlistedButKept(t *testing.T) {
	tools, _ := listTools(t, mcpserver.ToolProfileFull)
	filters := 0
	for _, tool := range tools {
		b, _ := json.Marshal(tool.InputSchema)
		for _, name := range []string{"callerOrchestrator", "callerInstance", "tenantId", "createdBy"} {
			listed := strings.Contains(string(b), `"`+name+`"`)
			// createdBy is who acts only in a tool that writes; in a
			// reader it is a filter, and stays listed.
			if name == "createdBy" && tool.Annotations.ReadOnlyHint {
				if listed {
					filters++
				}
				continue
			}
			if listed {
				t.Errorf("%s lists %s", tool.Name, name)
			}
		}
	}
	if filters < 2 {
		t.Errorf("%d readers list their createdBy filter; list_tasks and list_tasks_by_mission do", filters)
	}
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	if res, text := call(t, cs, "check_messages", map[string]any{"tenantId": "ws1"}); res.IsError {
		t.Errorf("check_messages with tenantId: %s", text)
	}
	_, text := call(t, cs, "create_task", map[string]any{"title": "t", "assignedTo": "alice", "priority": "low"})
	id := decodeAs[map[string]any](t, text)["_id"]
	if res, text := call(t, cs, "start_task", map[string]any{"taskId": id, "callerOrchestrator": "alice"}); res.IsError {
		t.Errorf("start_task with callerOrchestrator: %s", text)
	}
	if res, text := call(t, cs, "pause_task", map[string]any{"taskId": id, "callerOrchestrator": "bob"}); !res.IsError || !strings.Contains(text, "callerOrchestrator") {
		t.Errorf("pause_task as bob with a token for alice: %v %s", res.IsError, text)
	}
	if res, text := call(t, cs, "create_task", map[string]any{"title": "t", "assignedTo": "alice", "priority": "low", "createdBy": "alice"}); res.IsError {
		t.Errorf("create_task with createdBy: %s", text)
	}
	if res, text := call(t, cs, "create_task", map[string]any{"title": "t", "assignedTo": "alice", "priority": "low", "createdBy": "bob"}); !res.IsError {
		t.Errorf("create_task as bob with a token for alice: %s", text)
	}
	for _, c := range []struct{ tool, arg string }{{"start_task", "callerOrchestrator"}, {"checkout_task", "callerInstance"}, {"send_message", "tenantId"}, {"create_task", "createdBy"}} {
		args := map[string]any{"taskId": id, c.arg: strings.Repeat("a", vp.MaxNameBytes+1)}
		switch c.tool {
		case "send_message":
			args = map[string]any{"channel": "alice", "content": "x", c.arg: args[c.arg]}
		case "create_task":
			args = map[string]any{"title": "t", "assignedTo": "alice", "priority": "low", c.arg: args[c.arg]}
		}
		if res, text := call(t, cs, c.tool, args); !res.IsError || !strings.Contains(text, "too_large") || !strings.Contains(text, c.arg) {
			t.Errorf("%s with a %d-byte %s: %v %s", c.tool, vp.MaxNameBytes+1, c.arg, res.IsError, text)
		}
	}
}
