package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/digest"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

var taskMissionTools = []string{
	"create_task", "get_task", "list_tasks", "list_tasks_by_mission", "update_task", "start_task", "pause_task", "resume_task",
	"complete_task", "block_task", "fail_task", "add_task_dependency", "checkout_task", "delete_task", "bulk_complete_tasks", "validate_task_payload",
	"create_mission", "get_mission", "list_missions", "update_mission", "update_mission_status", "update_mission_progress",
	"get_mission_template", "update_mission_template", "instantiate_template_into_mission",
}

func TestTaskAndMissionToolsAreRegistered(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	size := 0
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if slices.Contains(taskMissionTools, tool.Name) {
			b, _ := json.Marshal(tool)
			size += len(b)
		}
	}
	for _, w := range taskMissionTools {
		if !slices.Contains(names, w) {
			t.Errorf("tool %s is not advertised", w)
		}
	}
	t.Logf("task and mission tools: %d, %d bytes, ~%d tokens of tools/list", len(taskMissionTools), size, size/4)
}

// withTasks adds to o the tasks, missions and recurring capabilities on
// st, wired as main wires them (idx, when set, indexes the tasks).
func withTasks(o mcpserver.Options, st store.Store, signer *listing.Signer, idx search.Index) mcpserver.Options {
	var w *search.Writer
	if idx != nil {
		w = &search.Writer{Index: idx}
	}
	o.Views.Tasks = task.New(task.Options{Store: st, Cursors: signer, Search: w})
	o.Views.Missions = mission.New(mission.Options{Store: st, Cursors: signer, Tasks: o.Views.Tasks})
	o.Views.Tasks.UseMissions(o.Views.Missions)
	if o.Views.Messages != nil {
		o.Views.Messages.UseWork(o.Views.Tasks)
	}
	issues := issue.New(issue.Options{Store: st, Cursors: signer, Missions: o.Views.Missions, Notices: o.Views.Messages})
	o.Toolsets = append(o.Toolsets, mcpserver.TaskTools(o.Views.Tasks), mcpserver.MissionTools(o.Views.Missions),
		mcpserver.RecurringTools(recurring.New(recurring.Options{Store: st, Cursors: signer, Tasks: o.Views.Tasks})),
		mcpserver.IssueTools(issues, o.Views.Memory),
		mcpserver.ErrorTools(errormon.New(errormon.Options{Store: st, Cursors: signer, Issues: issues})),
		mcpserver.DigestTools(digest.New(digest.Options{Store: st})),
		mcpserver.ActivityTools(activity.New(activity.Options{Sources: []activity.Source{activity.Tasks(st), activity.Unblocked(st)}})))
	return o
}

func decodeAs[T any](t *testing.T, text string) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(text), &v); err != nil {
		t.Fatalf("decoding %q: %v", text, err)
	}
	return v
}

func TestTasksThroughTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	res, text := call(t, cs, "create_task", map[string]any{"title": "Fix login redirect (#142)", "assignedTo": "bob", "priority": "high"})
	if res.IsError {
		t.Fatal(text)
	}
	tk := decodeAs[vp.Task](t, text)
	res, text = call(t, cs, "checkout_task", map[string]any{"taskId": tk.ID, "callerInstance": "alice-main"})
	if co := decodeAs[task.CheckoutResult](t, text); res.IsError || !co.Claimed || co.Task.AssignedTo != "alice" {
		t.Fatalf("checkout: %s", text)
	}
	res, text = call(t, cs, "complete_task", map[string]any{"taskId": tk.ID, "completionNote": ""})
	if !res.IsError || !strings.Contains(text, "completionNote") {
		t.Fatalf("empty note accepted: %s", text)
	}
	res, text = call(t, cs, "complete_task", map[string]any{"taskId": tk.ID, "completionNote": "Fixed in PR #47, tests pass"})
	if res.IsError || decodeAs[vp.Task](t, text).Status != vp.TaskDone {
		t.Fatalf("complete: %s", text)
	}
	res, text = call(t, cs, "start_task", map[string]any{"taskId": tk.ID})
	if !res.IsError || !strings.Contains(text, "conflict") || !strings.Contains(text, "done") {
		t.Fatalf("start of a done task: %s", text)
	}
	res, text = call(t, cs, "create_task", map[string]any{"title": "x", "assignedTo": "bob", "priority": 1})
	if !res.IsError || !strings.Contains(text, "priority") {
		t.Fatalf("numeric priority: %s", text)
	}
	_, text = call(t, cs, "list_tasks", map[string]any{"status": []string{"done"}, "fields": "lite"})
	if !strings.Contains(text, tk.ID) || strings.Contains(text, "completionNote") || strings.Contains(text, "nextCursor") {
		t.Fatalf("list: %s", text)
	}
	_, text = call(t, cs, "validate_task_payload", map[string]any{"tool": "create_task", "arguments": map[string]any{"title": "x", "priority": 1}})
	rep := decodeAs[task.PayloadReport](t, text)
	if rep.Valid || len(rep.Failures) != 2 || rep.Corrected["priority"] != "high" {
		t.Fatalf("validate: %s", text)
	}
	res, text = call(t, cs, "bulk_complete_tasks", map[string]any{"filter": map[string]any{}})
	if !res.IsError || !strings.Contains(text, "BULK_FILTER_TOO_BROAD") {
		t.Fatalf("bulk without a filter: %s", text)
	}
}

func TestMissionsThroughTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"pi"}})
	res, text := call(t, cs, "create_mission", map[string]any{"name": "fix-issue-142", "project": "studio/ws1", "priority": "high"})
	if res.IsError {
		t.Fatal(text)
	}
	m := decodeAs[vp.Mission](t, text)
	res, text = call(t, cs, "instantiate_template_into_mission", map[string]any{"templateName": "issue-resolution-v2", "missionId": m.ID,
		"titlePrefix": "[#142]", "context": map[string]any{"issueNumber": "142", "repo": "vantage-memory"}})
	if res.IsError || decodeAs[mission.InstantiateResult](t, text).Count != 14 {
		t.Fatalf("instantiate: %s", text)
	}
	_, text = call(t, cs, "get_mission", map[string]any{"missionId": m.ID})
	view := decodeAs[mission.MissionView](t, text)
	if len(view.Tasks) != 14 || view.Tasks[6].Title != "[#142] T6 — Write Missing Tests" {
		t.Fatalf("mission view: %d tasks", len(view.Tasks))
	}
	res, text = call(t, cs, "update_mission_progress", map[string]any{"missionId": m.ID, "progress": 150})
	if !res.IsError || !strings.Contains(text, "progress") {
		t.Fatalf("progress 150: %s", text)
	}
	_, text = call(t, cs, "list_missions", map[string]any{"status": "open", "fields": "lite"})
	if !strings.Contains(text, m.ID) {
		t.Fatalf("list_missions: %s", text)
	}
}

// TestTaskRemedyHints: the domain names a remedy, the tool error names the
// tool, in the words the tools always used.
func TestTaskRemedyHints(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	_, text := call(t, cs, "create_task", map[string]any{"title": "Hint me", "assignedTo": "alice", "priority": "low"})
	tk := decodeAs[vp.Task](t, text)
	for _, tool := range []string{"start_task", "pause_task"} {
		if res, text := call(t, cs, tool, map[string]any{"taskId": tk.ID}); res.IsError {
			t.Fatalf("%s: %s", tool, text)
		}
	}
	cases := []struct{ tool, want string }{
		{"start_task", "conflict: start_task: taskId: task " + tk.ID + " is paused: use resume_task to reopen it"},
		{"update_task", "conflict: update_task: status: task " + tk.ID + " is paused: use resume_task to reopen it"},
	}
	for _, c := range cases {
		args := map[string]any{"taskId": tk.ID}
		if c.tool == "update_task" {
			args["status"] = vp.TaskInProgress
		}
		if res, text := call(t, cs, c.tool, args); !res.IsError || text != c.want {
			t.Errorf("%s: %q, want %q", c.tool, text, c.want)
		}
	}
	if res, text := call(t, cs, "resume_task", map[string]any{"taskId": tk.ID}); res.IsError {
		t.Fatal(text)
	}
	res, text := call(t, cs, "start_task", map[string]any{"taskId": tk.ID})
	if !res.IsError || !strings.HasSuffix(text, ". Use pause_task to step away or complete_task to finish") {
		t.Errorf("start of a started task: %s", text)
	}
	res, text = call(t, cs, "resume_task", map[string]any{"taskId": tk.ID})
	if !res.IsError || !strings.HasSuffix(text, "is not paused (it is in_progress): resume_task only reopens a task paused with pause_task; use start_task") {
		t.Errorf("resume of a running task: %s", text)
	}
	_, text = call(t, cs, "create_mission", map[string]any{"name": "m", "project": "p", "priority": "low"})
	m := decodeAs[vp.Mission](t, text)
	res, text = call(t, cs, "update_mission_status", map[string]any{"missionId": m.ID, "status": "cancelled"})
	want := `invalid_argument: update_mission_status: status: cancelling needs a reason and the creator: use update_mission {"missionId":...,"status":"cancelled","cancelReason":"..."}`
	if !res.IsError || text != want {
		t.Errorf("cancel through update_mission_status: %q, want %q", text, want)
	}
	res, text = call(t, cs, "get_mission_template", map[string]any{"name": "no-such-template"})
	if !res.IsError || !strings.HasSuffix(text, "); create one with update_mission_template") {
		t.Errorf("missing template: %s", text)
	}
}
