package mcpserver_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// recordTools are the tools of the diary, briefing, component and business
// unit capabilities.
var recordTools = []string{
	"write_diary", "get_diary", "list_diaries", "list_diary_by_date_range",
	"create_briefing_note", "update_briefing_note", "get_briefing_note", "list_briefing_notes",
	"register_component", "get_component", "list_components", "update_component", "delete_component",
	"create_bu", "update_bu", "get_bu", "list_bus", "delete_bu",
}

func TestRecordToolsAreRegistered(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"sigma"}})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	for _, w := range recordTools {
		if !slices.Contains(names, w) {
			t.Errorf("tool %s is not advertised", w)
		}
	}
}

func TestDiaryThroughTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"sigma"}})
	res, text := call(t, cs, "write_diary", map[string]any{"date": "2026-05-29", "content": "Shipped M3.", "highlights": []string{"M3 on time"}})
	if res.IsError || !strings.Contains(text, `"created":true`) {
		t.Fatalf("write_diary: %s", text)
	}
	res, text = call(t, cs, "get_diary", map[string]any{"orchestrator": "sigma", "date": "2026-05-29"})
	var e vp.DiaryEntry
	if res.IsError || json.Unmarshal([]byte(text), &e) != nil || e.Content != "Shipped M3." || e.ID == "" {
		t.Fatalf("get_diary: %s", text)
	}
	res, text = call(t, cs, "list_diary_by_date_range", map[string]any{"from": "2026-05-01", "to": "2026-05-31", "fields": "lite"})
	if res.IsError || !strings.Contains(text, e.ID) || strings.Contains(text, "nextCursor") || strings.Contains(text, "Shipped") {
		t.Fatalf("list_diary_by_date_range: %s", text)
	}
	res, text = call(t, cs, "write_diary", map[string]any{"date": "2026-02-30", "content": "x"})
	if !res.IsError || !strings.Contains(text, "date") || !strings.Contains(text, "YYYY-MM-DD") {
		t.Fatalf("bad date: %s", text)
	}
	res, text = call(t, cs, "list_diary_by_date_range", map[string]any{"from": "2026-05-01"})
	if !res.IsError || !strings.Contains(text, "to") {
		t.Fatalf("missing to: %s", text)
	}
}

func TestBriefingsThroughTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"pi"}})
	res, text := call(t, cs, "create_briefing_note", map[string]any{"title": "Day 82 close", "topic": "sprint-review",
		"participants": []string{"pi", "sigma"}, "content": "M3 done.", "decisions": []string{"ship M4 Monday"}})
	var n vp.BriefingNote
	if res.IsError || json.Unmarshal([]byte(text), &n) != nil || n.ID == "" || n.CreatedBy != "pi" {
		t.Fatalf("create_briefing_note: %s", text)
	}
	res, text = call(t, cs, "update_briefing_note", map[string]any{"noteId": n.ID, "decisions": []string{}})
	if res.IsError || strings.Contains(text, "decisions") || !strings.Contains(text, `"updatedBy":"pi"`) {
		t.Fatalf("update_briefing_note: %s", text)
	}
	res, text = call(t, cs, "list_briefing_notes", map[string]any{"topic": "sprint-review", "fields": "lite"})
	if res.IsError || !strings.Contains(text, n.ID) || strings.Contains(text, "M3 done.") {
		t.Fatalf("list_briefing_notes: %s", text)
	}
	res, text = call(t, cs, "update_briefing_note", map[string]any{"noteId": n.ID, "callerOrchestrator": "sigma", "title": "x"})
	if !res.IsError || !strings.Contains(text, "forbidden") || !strings.Contains(text, "callerOrchestrator") {
		t.Fatalf("non-creator update: %s", text)
	}
	res, text = call(t, cs, "get_briefing_note", map[string]any{"noteId": "brf_nope"})
	if !res.IsError || !strings.Contains(text, "noteId") {
		t.Fatalf("unknown note: %s", text)
	}
}

func TestComponentsThroughTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"carol"}})
	res, text := call(t, cs, "register_component", map[string]any{"name": "dev-convex-expert", "type": "agent", "team": "development",
		"content": "---\nname: dev\n---\n", "version": "1.0.0"})
	var c vp.Component
	if res.IsError || json.Unmarshal([]byte(text), &c) != nil || c.Revision != 1 || c.CreatedBy != "carol" {
		t.Fatalf("register_component: %s", text)
	}
	res, text = call(t, cs, "update_component", map[string]any{"name": "dev-convex-expert", "type": "agent", "content": "v2"})
	if res.IsError || !strings.Contains(text, `"revision":2`) {
		t.Fatalf("update_component: %s", text)
	}
	res, text = call(t, cs, "get_component", map[string]any{"name": "dev-convex-expert", "type": "agent", "revision": 1})
	if res.IsError || !strings.Contains(text, "name: dev") {
		t.Fatalf("get_component revision 1: %s", text)
	}
	res, text = call(t, cs, "list_components", map[string]any{"type": "agent", "fields": "lite"})
	if res.IsError || !strings.Contains(text, c.ID) || strings.Contains(text, "content") {
		t.Fatalf("list_components: %s", text)
	}
	res, text = call(t, cs, "register_component", map[string]any{"name": "x", "type": "runbook", "content": "x"})
	if !res.IsError || !strings.Contains(text, "type") || !strings.Contains(text, "agent, skill, hook, plugin") {
		t.Fatalf("bad type: %s", text)
	}
	res, text = call(t, cs, "delete_component", map[string]any{"name": "dev-convex-expert", "type": "agent"})
	if res.IsError || !strings.Contains(text, `"revisionsDeleted":1`) {
		t.Fatalf("delete_component: %s", text)
	}
}

func TestBusinessUnitsThroughTools(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"sigma"}})
	res, text := call(t, cs, "create_bu", map[string]any{"name": "VantagePeers", "description": "d", "purpose": "p",
		"businessModel": "SaaS", "targetCustomers": "studios", "services": []string{"hosting"}, "pricing": "49 EUR",
		"revenueProjections": map[string]any{"A1": 50000, "A2": 150000, "A3": 400000}})
	var b vp.BusinessUnit
	if res.IsError || json.Unmarshal([]byte(text), &b) != nil || b.Status != "idea" || b.ManagementFee != 10 || b.OrchestratorID != "sigma" {
		t.Fatalf("create_bu: %s", text)
	}
	res, text = call(t, cs, "update_bu", map[string]any{"buId": b.ID, "status": "live"})
	if res.IsError || !strings.Contains(text, `"status":"live"`) {
		t.Fatalf("update_bu: %s", text)
	}
	res, text = call(t, cs, "list_bus", map[string]any{"status": "live", "fields": "lite"})
	if res.IsError || !strings.Contains(text, b.ID) || strings.Contains(text, "pricing") {
		t.Fatalf("list_bus: %s", text)
	}
	res, text = call(t, cs, "update_bu", map[string]any{"buId": b.ID, "status": "launched"})
	if !res.IsError || !strings.Contains(text, "status") || !strings.Contains(text, "idea, building, live, revenue") {
		t.Fatalf("bad status: %s", text)
	}
	res, text = call(t, cs, "create_bu", map[string]any{"name": "x"})
	if !res.IsError || !strings.Contains(text, "description") {
		t.Fatalf("missing fields: %s", text)
	}
	res, text = call(t, cs, "delete_bu", map[string]any{"buId": b.ID})
	if res.IsError || text != `{"deleted":true}` {
		t.Fatalf("delete_bu: %s", text)
	}
	res, text = call(t, cs, "get_bu", map[string]any{"buId": b.ID})
	if !res.IsError || !strings.Contains(text, "not_found") {
		t.Fatalf("get_bu after delete: %s", text)
	}
}
