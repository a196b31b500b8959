package mcpserver_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
)

// The three OKF tools end to end: export → validate → import (dry-run,
// merge) into another namespace → the memories are found at once.
func TestOKFToolsRoundTrip(t *testing.T) {
	cs, drain := connectMemory(t, auth.MasterPrincipal("acme"))
	const n = 5
	for i := range n {
		if res, text := call(t, cs, "store_memory", map[string]any{"namespace": "project/a", "type": "fact", "createdBy": "alice", "content": "okfwidget fact " + string(rune('a'+i))}); res.IsError {
			t.Fatal(text)
		}
	}
	if res, text := call(t, cs, "create_task", map[string]any{"title": "ship okf", "project": "project/a", "assignedTo": "alice", "createdBy": "alice", "priority": "high"}); res.IsError {
		t.Fatal(text)
	}
	res, text := call(t, cs, "export_okf_bundle", map[string]any{"namespace": "project/a"})
	if res.IsError {
		t.Fatal(text)
	}
	exp := decodeAs[okfsvc.Delivery](t, text)
	if exp.Bundle == "" || exp.Counts["memory"] != n || exp.Counts["task"] != 1 || len(exp.SHA256) != 64 {
		t.Fatalf("export: %+v", exp)
	}
	res, text = call(t, cs, "validate_okf_bundle", map[string]any{"bundle": exp.Bundle})
	if rep := decodeAs[okfsvc.Report](t, text); res.IsError || !rep.Valid || rep.Counts["memory"] != n {
		t.Fatal(text)
	}
	res, text = call(t, cs, "import_okf_bundle", map[string]any{"namespace": "project/b", "bundle": exp.Bundle})
	if r := decodeAs[okfsvc.ImportResult](t, text); res.IsError || r.Mode != "dry-run" || r.Created["memory"] != n {
		t.Fatal(text)
	}
	res, text = call(t, cs, "import_okf_bundle", map[string]any{"namespace": "project/b", "mode": "merge", "bundle": exp.Bundle})
	r := decodeAs[okfsvc.ImportResult](t, text)
	if res.IsError || r.Created["memory"] != n || r.Created["task"] != 1 || len(r.IDMap) != n+1 {
		t.Fatal(text)
	}
	res, text = call(t, cs, "hybrid_search", map[string]any{"query": "okfwidget", "namespace": "project/b"})
	if hits := decodeAs[memory.SearchResult](t, text); res.IsError || hits.Count != n {
		t.Fatalf("hybrid_search right after the import: %s", text)
	}
	drain() // the embed jobs the import enqueued: then recall (vectors) finds them too
	res, text = call(t, cs, "recall", map[string]any{"query": "okfwidget fact", "namespace": "project/b"})
	if hits := decodeAs[memory.SearchResult](t, text); res.IsError || hits.Count != n {
		t.Fatalf("recall after the embed jobs: %s", text)
	}
	// Refusals name the field.
	res, text = call(t, cs, "import_okf_bundle", map[string]any{"namespace": "project/b", "mode": "merge", "bundle": "not base64!"})
	if !res.IsError || !strings.Contains(text, "bundle") {
		t.Fatalf("bad base64: %s", text)
	}
	res, text = call(t, cs, "import_okf_bundle", map[string]any{"namespace": "project/b", "mode": "upsert", "bundle": exp.Bundle})
	if !res.IsError || !strings.Contains(text, "mode") {
		t.Fatalf("bad mode: %s", text)
	}
}

// On a local (stdio) server a bundle can go to and come from a file.
func TestOKFToolsLocalPath(t *testing.T) {
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	if res, text := call(t, cs, "store_memory", map[string]any{"namespace": "project/a", "type": "note", "createdBy": "alice", "content": "to a file"}); res.IsError {
		t.Fatal(text)
	}
	path := filepath.Join(t.TempDir(), "a.okf.tar.gz")
	res, text := call(t, cs, "export_okf_bundle", map[string]any{"namespace": "project/a", "path": path})
	if d := decodeAs[okfsvc.Delivery](t, text); res.IsError || d.Path != path || d.Bundle != "" {
		t.Fatal(text)
	}
	res, text = call(t, cs, "import_okf_bundle", map[string]any{"namespace": "project/c", "mode": "merge", "path": path})
	if r := decodeAs[okfsvc.ImportResult](t, text); res.IsError || r.Created["memory"] != 1 {
		t.Fatal(text)
	}
}
