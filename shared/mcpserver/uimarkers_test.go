package mcpserver_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/uimarker"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// connectMarkers is connect with Options.EmitUIMarkers set to emit.
func connectMarkers(t *testing.T, p vp.Principal, emit bool) func(name string, args any) (string, []byte) {
	t.Helper()
	cs := connect(t, p, func(o *mcpserver.Options) { o.EmitUIMarkers = emit })
	return func(name string, args any) (string, []byte) {
		t.Helper()
		res, text := call(t, cs, name, args)
		if res.IsError {
			t.Fatalf("%s: %s", name, text)
		}
		sc, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		return text, sc
	}
}

func TestUIMarkers(t *testing.T) {
	p := vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}}
	titles := []string{"Fix login (#142)", "Write <docs> & __END__", "Ship"}
	for _, emit := range []bool{true, false} {
		callTool := connectMarkers(t, p, emit)
		for _, title := range titles {
			callTool("create_task", map[string]any{"title": title, "assignedTo": "alice", "priority": "high"})
		}
		callTool("create_mission", map[string]any{"name": "fix-issue-142", "project": "studio/ws1", "priority": "high"})

		text, sc := callTool("list_tasks", map[string]any{})
		if strings.Contains(string(sc), uimarker.Start) {
			t.Fatalf("structuredContent has a marker: %s", sc)
		}
		if !emit {
			if strings.Contains(text, uimarker.Start) || uimarker.Parse(text) != nil {
				t.Fatalf("marker without the flag: %s", text)
			}
			if !json.Valid([]byte(text)) {
				t.Fatalf("text is not the JSON result: %s", text)
			}
			continue
		}
		json0, marker, ok := strings.Cut(text, "\n"+uimarker.Start)
		if !ok || !strings.HasSuffix(text, uimarker.End) || !json.Valid([]byte(json0)) {
			t.Fatalf("list_tasks text is not JSON + \\n + marker: %s", text)
		}
		r := uimarker.Parse(text)
		if r == nil || r.Kind != uimarker.KindTasksTable || len(r.TasksTable) != 3 {
			t.Fatalf("Parse(%s) = %+v", uimarker.Start+marker, r)
		}
		got := map[string]bool{}
		for _, it := range r.TasksTable {
			got[it.Title] = true
			if it.ID == "" || it.Status == "" || it.Priority != "high" || it.AssignedTo != "alice" || it.CreationTime == nil {
				t.Errorf("row %+v", it)
			}
		}
		for _, title := range titles {
			if !got[title] {
				t.Errorf("no row titled %q in %+v", title, r.TasksTable)
			}
		}

		text, sc = callTool("list_missions", map[string]any{})
		r = uimarker.Parse(text)
		if strings.Contains(string(sc), uimarker.Start) || r == nil || r.Kind != uimarker.KindMissionTimeline ||
			len(r.MissionTimeline) != 1 || r.MissionTimeline[0].Name != "fix-issue-142" || r.MissionTimeline[0].Project != "studio/ws1" {
			t.Fatalf("list_missions: %+v from %s", r, text)
		}
	}
}
