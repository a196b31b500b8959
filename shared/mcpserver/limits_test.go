package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
)

// limitCase calls tool with args plus field set at its limit, which the
// domain must accept, and one byte (item, unit) over, which it must refuse
// with an error naming the field and the limit. The limit is the one
// tools/list advertises, which is the domain's declaration
// (TestAdvertisedLimitsAreTheDeclaredOnes): the probe shows that the
// domain's check enforces what it declares.
type limitCase struct {
	tool, field string // field: a top-level argument, or "a.b"
	limit       int    // set from the advertised schema
	kind        string // "bytes", "items" or "number"
	args        map[string]any
	// found: the value at the limit names nothing that exists; the call
	// may fail, but not for its size.
	found bool
}

func (c limitCase) value(n int) any {
	switch c.kind {
	case "items":
		items := make([]any, n)
		for i := range items {
			items[i] = fmt.Sprintf("i%d", i)
		}
		return items
	case "number":
		return n
	}
	return strings.Repeat("a", n)
}

// with returns a copy of c.args with field set to v.
func (c limitCase) with(v any) map[string]any {
	out := map[string]any{}
	for k, x := range c.args {
		out[k] = x
	}
	if obj, sub, ok := strings.Cut(c.field, "."); ok {
		inner := map[string]any{}
		if m, ok := out[obj].(map[string]any); ok {
			for k, x := range m {
				inner[k] = x
			}
		}
		inner[sub] = v
		out[obj] = inner
		return out
	}
	out[c.field] = v
	return out
}

func TestLimitsProbeTheDomain(t *testing.T) {
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	_, text := call(t, cs, "create_task", map[string]any{"title": "seed", "assignedTo": "alice", "createdBy": "alice", "priority": "low"})
	var seed struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal([]byte(text), &seed); err != nil || seed.ID == "" {
		t.Fatalf("create_task: %s", text)
	}
	task := map[string]any{"title": "t", "assignedTo": "alice", "createdBy": "alice", "priority": "low"}
	mission := map[string]any{"name": "m", "project": "p", "priority": "low", "createdBy": "alice"}
	memory := map[string]any{"namespace": "global", "type": "fact", "content": "c", "createdBy": "alice"}
	fix := map[string]any{"symptom": "s", "rootCause": "r", "tags": []string{}, "stack": []string{}, "sourceProject": "p", "severity": "minor", "createdBy": "alice"}
	diary := map[string]any{"date": "2026-05-29", "content": "c", "orchestrator": "alice"}
	bu := map[string]any{"name": "n", "description": "d", "purpose": "p", "businessModel": "b", "targetCustomers": "t", "pricing": "p", "services": []string{},
		"revenueProjections": map[string]any{"A1": 1, "A2": 2, "A3": 3}, "createdBy": "alice"}
	brief := map[string]any{"title": "t", "topic": "x", "content": "c", "participants": []string{"alice"}, "createdBy": "alice"}
	comp := map[string]any{"name": "n", "type": "skill", "content": "c", "createdBy": "alice"}
	mand := map[string]any{"fulfilledBy": "bob", "service": "s", "budget": 10, "requestedBy": "alice"}
	rec := map[string]any{"title": "t", "assignedTo": "alice", "cronExpression": "0 6 * * *", "priority": "low", "createdBy": "alice"}
	episode := map[string]any{"context": "c", "goal": "g", "action": "a", "outcome": "o", "insight": "i", "severity": "low", "namespace": "global", "createdBy": "alice"}
	iframeArgs := func() map[string]any {
		return map[string]any{"sessionId": "s", "origin": "https://app.example.com", "expiresAt": time.Now().Add(time.Hour).UnixMilli()}
	}
	cases := []limitCase{
		{tool: "set_summary", field: "summary", args: map[string]any{"orchestratorId": "alice", "instanceId": "a1"}},
		{tool: "set_summary", field: "instanceId", args: map[string]any{"orchestratorId": "alice", "summary": "s"}},
		{tool: "update_profile", field: "name", args: map[string]any{"orchestratorId": "alice"}},
		{tool: "send_message", field: "content", args: map[string]any{"from": "alice", "channel": "bob"}},
		{tool: "search_messages_by_keyword", field: "channel", args: map[string]any{"query": "x"}},
		{tool: "mark_as_read", field: "receiptIds", kind: "items", found: true},
		{tool: "create_task", field: "title", args: task},
		{tool: "create_task", field: "description", args: task},
		{tool: "create_task", field: "project", args: task},
		{tool: "create_task", field: "tags", kind: "items", args: task},
		{tool: "create_task", field: "estimatedMinutes", kind: "number", args: task},
		{tool: "update_task", field: "completionNote", args: map[string]any{"taskId": seed.ID, "callerOrchestrator": "alice"}},
		{tool: "block_task", field: "reason", args: map[string]any{"taskId": seed.ID, "callerOrchestrator": "alice"}},
		{tool: "get_task", field: "taskId", found: true},
		{tool: "create_mission", field: "name", args: mission},
		{tool: "create_mission", field: "brief", args: mission},
		{tool: "create_mission", field: "agents", kind: "items", args: mission},
		{tool: "create_recurring_task", field: "cronExpression", args: rec, found: true},
		{tool: "create_recurring_task", field: "timezone", args: rec, found: true},
		{tool: "store_memory", field: "content", args: memory},
		{tool: "store_memory", field: "namespace", args: memory},
		{tool: "store_episode", field: "goal", args: episode},
		{tool: "recall", field: "query"},
		{tool: "create_fix_pattern", field: "symptom", args: fix},
		{tool: "create_fix_pattern", field: "rootCause", args: fix},
		{tool: "create_fix_pattern", field: "stack", kind: "items", args: fix},
		{tool: "write_diary", field: "content", args: diary},
		{tool: "write_diary", field: "highlights", kind: "items", args: diary},
		{tool: "create_briefing_note", field: "content", args: brief},
		{tool: "create_briefing_note", field: "decisions", kind: "items", args: brief},
		{tool: "create_bu", field: "pricing", args: bu},
		{tool: "create_bu", field: "services", kind: "items", args: bu},
		{tool: "register_component", field: "name", args: comp},
		{tool: "register_component", field: "content", args: comp},
		{tool: "create_iframe_session", field: "origin", args: iframeArgs(), found: true},
		{tool: "create_mandate", field: "approvedCategories", kind: "items", args: mand},
		{tool: "create_mandate", field: "spendingLimits.periodDays", kind: "number",
			args: map[string]any{"fulfilledBy": "bob", "service": "s", "budget": 10, "requestedBy": "alice",
				"spendingLimits": map[string]any{"maxPerTransaction": 1, "maxPerPeriod": 2}}},
		{tool: "instantiate_template_into_mission", field: "titlePrefix", found: true,
			args: map[string]any{"missionId": "msn_nope", "templateName": "issue-resolution-v2"}},
		{tool: "search_tasks_by_keyword", field: "query"},
	}
	advertised := advertisedSchemas(t)
	for _, c := range cases {
		if c.kind == "" {
			c.kind = "bytes"
		}
		c.limit = advertisedLimit(t, advertised, c)
		t.Run(c.tool+"/"+c.field, func(t *testing.T) {
			res, text := call(t, cs, c.tool, c.with(c.value(c.limit)))
			if strings.Contains(text, "too_large") || strings.Contains(text, "the limit is") || (res.IsError && !c.found) {
				t.Errorf("at the limit (%d %s): %s", c.limit, c.kind, trim(text))
			}
			res, text = call(t, cs, c.tool, c.with(c.value(c.limit+1)))
			if !res.IsError || !strings.Contains(text, c.field[strings.LastIndex(c.field, ".")+1:]) || !strings.Contains(text, strconv.Itoa(c.limit)) {
				t.Errorf("one over the limit (%d %s): %s", c.limit, c.kind, trim(text))
			}
		})
	}
}

// advertisedLimit is the bound enforced on c's field: the one tools/list
// shows, or the default its instructions state.
func advertisedLimit(t *testing.T, advertised map[string]map[string]any, c limitCase) int {
	t.Helper()
	key := map[string]string{"bytes": "maxLength", "items": "maxItems", "number": "maximum"}[c.kind]
	node := advertised[c.tool]
	for seg := range strings.SplitSeq(c.field, ".") {
		node, _ = node["properties"].(map[string]any)[seg].(map[string]any)
	}
	got, ok := node[key].(float64)
	if !ok || got < 1 {
		t.Fatalf("%s %s: no %s advertised", c.tool, c.field, key)
	}
	return int(got)
}

func trim(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// advertisedSchemas reads schemas.json and returns the schemas the
// checker enforces: the listed ones with the default bound tools/list
// leaves to the instructions (DefaultStringBytes). It also checks that
// limits are advertised only: the full schemas that arguments are
// validated against carry none, so that the domain's own errors name
// field and limit.
func advertisedSchemas(t *testing.T) map[string]map[string]any {
	t.Helper()
	b, err := os.ReadFile("schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	var entries map[string]struct {
		Schema     json.RawMessage `json:"schema"`
		Advertised map[string]any  `json:"advertised"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for name, e := range entries {
		for _, kw := range []string{`"maxLength"`, `"maxItems"`, `"minimum"`, `"maximum"`} {
			if strings.Contains(string(e.Schema), kw) {
				t.Errorf("%s: the validated schema has %s; limits belong to the advertised schema only", name, kw)
			}
		}
	}
	enforced, err := mcpserver.EnforcedSchemas()
	if err != nil {
		t.Fatal(err)
	}
	for name := range entries {
		out[name] = enforced[name]
	}
	return out
}
