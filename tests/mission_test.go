package tests

import (
	"fmt"
	"slices"
	"testing"
)

// TestMissionClient runs a whole mission through the official MCP
// TypeScript SDK over Streamable HTTP (clients/mission.mjs): a mission from
// the built-in repo-fix-v1 template, alice and bob (each with a token of its
// own) racing to check out every task, then pause, resume, block, start and
// complete each in dependency order. The mission must complete by itself;
// the Go side cross-checks the summary and reads the mission back over raw
// HTTP as the master token.
func TestMissionClient(t *testing.T) {
	requireNode(t)
	tenant := newTenant("mission")
	s := runClient(t, "mission.mjs", "mission", map[string]any{
		"url": srv.url, "tenant": tenant,
		"tokens": map[string]string{"alice": createToken(t, tenant, "alice"), "bob": createToken(t, tenant, "bob")},
	})
	if s.Passed < 10*25 {
		t.Errorf("only %d checks passed; the scenario makes at least 25 per task", s.Passed)
	}
	if got := s.Facts["taskCount"]; got != float64(10) {
		t.Errorf("taskCount = %v, want 10 (repo-fix-v1 has 10 steps)", got)
	}
	if got := s.Facts["missionStatus"]; got != "complete" {
		t.Errorf("missionStatus = %v, want complete", got)
	}
	if got := s.Facts["autoCompleted"]; got != true {
		t.Errorf("autoCompleted = %v, want true", got)
	}
	if got := fmt.Sprint(s.Facts["taskCounts"]); got != "map[done:10]" {
		t.Errorf("taskCounts = %s, want map[done:10]", got)
	}
	winners := factStrings(t, s.Facts["winners"])
	if len(winners) != 10 {
		t.Fatalf("winners = %v, want one per task", winners)
	}
	for i, w := range winners {
		if w != "alice" && w != "bob" {
			t.Errorf("task %d won by %q", i+1, w)
		}
	}
	if got := factStrings(t, s.Facts["assignees"]); !slices.Equal(got, winners) {
		t.Errorf("assignees = %v, want the winners %v", got, winners)
	}
	for i, n := range factStrings(t, s.Facts["completionNotes"]) {
		if n == "" {
			t.Errorf("task %d has no completion note", i+1)
		}
	}

	// Cross-check with another client: the master, raw JSON-RPC over HTTP.
	id, _ := s.Facts["missionId"].(string)
	m := decode[struct {
		Status        string         `json:"status"`
		AutoCompleted bool           `json:"autoCompleted"`
		TaskCounts    map[string]int `json:"taskCounts"`
		Tasks         []struct {
			Status     string `json:"status"`
			AssignedTo string `json:"assignedTo"`
		} `json:"tasks"`
	}](t, callTool(t, masterToken, tenant, "get_mission", map[string]any{"missionId": id}))
	if m.Status != "complete" || !m.AutoCompleted || m.TaskCounts["done"] != 10 || len(m.Tasks) != 10 {
		t.Errorf("get_mission %s over raw HTTP = %+v", id, m)
	}
	for i, task := range m.Tasks {
		if task.Status != "done" || task.AssignedTo != winners[i] {
			t.Errorf("task %d over raw HTTP: %s assigned to %s, want done by %s", i+1, task.Status, task.AssignedTo, winners[i])
		}
	}
}

// factStrings reads a JSON array of strings from a summary fact.
func factStrings(t *testing.T, v any) []string {
	t.Helper()
	arr, ok := v.([]any)
	if !ok {
		t.Fatalf("fact %v is not an array", v)
	}
	out := make([]string, len(arr))
	for i, x := range arr {
		out[i], _ = x.(string)
	}
	return out
}
