package okfsvc_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestReplace(t *testing.T) {
	eachPath(t, false, func(t *testing.T, e *env) {
		e.seed(t, "team/src", 6)
		e.seed(t, "team/dst", 4)
		_ = e.export(t, "team/dst")
		data := e.export(t, "team/src")
		res, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data)
		if err != nil {
			t.Fatal(err)
		}
		if res.Created[okf.KindMemory] != 6 || res.Deleted[okf.KindMemory] != 4 || res.Deleted[okf.KindBriefing] != 4 || res.Deleted[okf.KindTask] != 4 {
			t.Fatalf("replace created %v, deleted %v", res.Created, res.Deleted)
		}
		assertSame(t, e.bundle(t, "team/src"), e.bundle(t, "team/dst"), res.IDMap)
		// Replacing again with the same bundle keeps the ids and deletes nothing.
		again, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data)
		if err != nil {
			t.Fatal(err)
		}
		if again.Created[okf.KindMemory] != 0 || again.Updated[okf.KindMemory] != 6 || again.Deleted[okf.KindMemory] != 0 || !slicesEqualMap(res.IDMap, again.IDMap) {
			t.Fatalf("second replace: created %v updated %v deleted %v", again.Created, again.Updated, again.Deleted)
		}
		assertSame(t, e.bundle(t, "team/src"), e.bundle(t, "team/dst"), again.IDMap)
		// The staging and the journal are gone.
		items, err := e.st.Query(ctx, store.Query{PK: "T#" + tenant + "#OKFREPL#team/dst", Limit: 10})
		if err != nil || len(items) != 0 {
			t.Fatalf("journal left behind: %d items, %v", len(items), err)
		}
	})
}

// An apply that fails after the decision leaves the namespace pending;
// export refuses it and the next import finishes the same replace.
func TestReplaceInterruptedRollsForward(t *testing.T) {
	eachPath(t, true, func(t *testing.T, e *env) {
		e.seed(t, "team/src", 5)
		e.seed(t, "team/dst", 3)
		data := e.export(t, "team/src")
		failed := false
		e.st.fail = func(ops []store.Op) bool {
			if !failed && len(ops) > 0 && strings.Contains(ops[0].Key.PK, "#TASK#") && ops[0].Kind == store.OpPut {
				failed = true
				return true
			}
			return false
		}
		if _, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data); err == nil {
			t.Fatal("the injected failure did not surface")
		}
		e.st.fail = nil
		_, err := e.svc.Export(ctx, e.p, "team/dst")
		domaintest.WantKind(t, err, vp.KindConflict, "namespace")

		res, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeMerge, data)
		if err != nil {
			t.Fatal(err)
		}
		if !res.ResumedReplace || res.Skipped[okf.KindMemory] != 5 || res.Created[okf.KindMemory] != 0 {
			t.Fatalf("resume: %+v", res)
		}
		assertSame(t, e.bundle(t, "team/src"), e.bundle(t, "team/dst"), res.IDMap)
	})
}

// A replace that fails while staging changes nothing.
func TestReplaceFailedStagingChangesNothing(t *testing.T) {
	e := newEnvPath(t, openSQLite(t), false)
	e.seed(t, "team/src", 4)
	e.seed(t, "team/dst", 2)
	before := e.export(t, "team/dst")
	data := e.export(t, "team/src")
	e.st.fail = func(ops []store.Op) bool { return strings.Contains(ops[0].Key.PK, "#OKFSTAGE#") }
	if _, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data); err == nil {
		t.Fatal("the injected failure did not surface")
	}
	e.st.fail = nil
	if after := e.export(t, "team/dst"); !bytes.Equal(before, after) {
		t.Fatal("a replace that failed before its decision changed the namespace")
	}
}

func TestMergeUpdatesChangedRecords(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seed(t, "team/src", 3)
	first, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeMerge, e.export(t, "team/src"))
	if err != nil {
		t.Fatal(err)
	}
	ms := e.bundle(t, "team/src").Memories
	if _, err := e.mem.SoftDeleteMemory(ctx, e.p, ms[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.notes.UpdateBriefingNote(ctx, e.p, briefingTitle(e.bundle(t, "team/src").Notes[0].ID, "Renamed")); err != nil {
		t.Fatal(err)
	}
	dry, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeDryRun, e.export(t, "team/src"))
	if err != nil {
		t.Fatal(err)
	}
	if dry.Updated[okf.KindBriefing] != 1 || dry.Skipped[okf.KindBriefing] != 2 || dry.Skipped[okf.KindMemory] != 2 {
		t.Fatalf("dry-run: updated %v skipped %v", dry.Updated, dry.Skipped)
	}
	res, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeMerge, e.export(t, "team/src"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Updated[okf.KindBriefing] != 1 || res.IDMap[e.bundle(t, "team/src").Notes[0].ID] != first.IDMap[e.bundle(t, "team/src").Notes[0].ID] {
		t.Fatalf("merge: %+v", res)
	}
	for _, n := range e.bundle(t, "team/dst").Notes {
		if n.ID == res.IDMap[e.bundle(t, "team/src").Notes[0].ID] && n.Title != "Renamed" {
			t.Fatalf("note not updated: %+v", n)
		}
	}
}

func TestImportForeignBundle(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	data := tarGz(t, map[string]string{
		"index.md":         "---\nokf_version: \"0.2\"\ntype: index\n---\n# Team wiki\n",
		"log.md":           "---\ntype: log\n---\n## 2026-03-01\n- created\n",
		"concepts/db.md":   "---\ntype: decision\nstatus: stable\ngenerated: {by: ai-memory/1.2, at: 2026-03-01}\n---\n\n# Use Postgres\n\nWe chose Postgres for quuxbar.\n",
		"concepts/term.md": "---\ntype: concept\ntitle: Widget\n---\nA widget is a quuxbar thing.\n",
		"old/gone.md":      "---\ntype: warning\nstatus: deprecated\n---\nDo not quuxbar.\n",
	})
	rep, err := e.svc.Validate(ctx, e.p, data)
	if err != nil || !rep.Foreign || rep.Counts[okf.KindMemory] != 3 {
		t.Fatalf("validate: %+v %v", rep, err)
	}
	res, err := e.svc.Import(ctx, e.p, "wiki", okfsvc.ModeMerge, data)
	if err != nil {
		t.Fatal(err)
	}
	if res.Created[okf.KindMemory] != 3 || !res.Foreign {
		t.Fatalf("import: %+v", res)
	}
	got := map[string]vp.Memory{}
	for _, m := range e.bundle(t, "wiki").Memories {
		got[m.Type] = m
	}
	if m := got["decision"]; m.Content != "# Use Postgres\n\nWe chose Postgres for quuxbar." || !m.IsLatest || m.CreatedBy != "pi" {
		t.Fatalf("decision memory %+v", m)
	}
	if m := got["note"]; m.Content != "# Widget\n\nA widget is a quuxbar thing." {
		t.Fatalf("concept memory %+v", m)
	}
	if m := got["warning"]; m.IsLatest {
		t.Fatalf("a deprecated concept imports as superseded: %+v", m)
	}
	hits, err := e.mem.TextSearch(ctx, e.p, memory.SearchInput{Query: "quuxbar", Namespace: "wiki"})
	if err != nil || hits.Count != 2 {
		t.Fatalf("search after a foreign import found %d (want the 2 live ones): %v", hits.Count, err)
	}
	again, err := e.svc.Import(ctx, e.p, "wiki", okfsvc.ModeMerge, data)
	if err != nil || again.Created[okf.KindMemory] != 0 || again.Skipped[okf.KindMemory] != 3 {
		t.Fatalf("second foreign import: %+v %v", again, err)
	}
}

// Export reads the namespace's memories, notes and tasks and nothing
// else: no token, credential or session partition, whatever they hold.
func TestExportReadsNoCredentials(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seed(t, "team/src", 3)
	const secret = "vp_live_0123456789abcdefSECRET"
	for _, pk := range []string{"T#" + tenant + "#TOKEN#abc", "TOKEN#abc", "SYS#CONFIG", "T#" + tenant + "#OAUTHCLIENT#x"} {
		if err := e.st.Write(ctx, store.Put(store.Item{Key: store.Key{PK: pk, SK: "TOKEN"}, Data: []byte(`{"secret":"` + secret + `"}`)}, store.Always)); err != nil {
			t.Fatal(err)
		}
	}
	e.st.reads = nil
	data := e.export(t, "team/src")
	allowed := []string{"T#acme#MEMNS#team/src", "T#acme#BRIEFTOPIC#team/src", "T#acme#TPROJ#team/src", "T#acme#OKFREPL#team/src"}
	for _, pk := range e.st.reads {
		if !containsPrefix(allowed, pk) {
			t.Errorf("export read partition %q", pk)
		}
	}
	if len(e.st.reads) == 0 {
		t.Fatal("no reads recorded")
	}
	var all bytes.Buffer
	zr, _ := gzip.NewReader(bytes.NewReader(data))
	_, _ = all.ReadFrom(zr)
	if strings.Contains(all.String(), secret) {
		t.Fatal("the bundle carries a secret")
	}
}

func containsPrefix(ps []string, s string) bool {
	for _, p := range ps {
		if s == p {
			return true
		}
	}
	return false
}

func TestAccess(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seed(t, "team/src", 1)
	data := e.export(t, "team/src")
	ro := vp.Principal{Tenant: tenant, Orchestrators: []string{"pi"}, ReadPrefixes: []string{"team"}, WritePrefixes: []string{"team/mine"}}
	_, err := e.svc.Export(ctx, vp.Principal{Tenant: tenant, Orchestrators: []string{"pi"}, ReadPrefixes: []string{"other"}}, "team/src")
	domaintest.WantKind(t, err, vp.KindForbidden, "namespace")
	_, err = e.svc.Import(ctx, ro, "team/src", okfsvc.ModeMerge, data)
	domaintest.WantKind(t, err, vp.KindForbidden, "namespace")
	if _, err := e.svc.Import(ctx, ro, "team/mine", okfsvc.ModeMerge, data); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Import(ctx, ro, "team/mine", "upsert", data)
	domaintest.WantKind(t, err, vp.KindInvalid, "mode")
	_, err = e.svc.Import(ctx, ro, "team/mine", okfsvc.ModeMerge, []byte("junk"))
	domaintest.WantKind(t, err, vp.KindInvalid, "bundle")
}

func tarGz(t *testing.T, files map[string]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Size: int64(len(body)), Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		_, _ = tw.Write([]byte(body))
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// A bundle with one bad record imports nothing, and says which record.
func TestImportChecksEverythingFirst(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seed(t, "team/src", 3)
	b := e.bundle(t, "team/src")
	b.Tasks[2].Priority = "bogus"
	var buf bytes.Buffer
	if _, err := okf.Write(&buf, okf.ExportInput{Exporter: b.Manifest.Exporter, Origin: b.Manifest.Origin, Namespace: b.Manifest.Namespace,
		Memories: b.Memories, Notes: b.Notes, Tasks: b.Tasks}); err != nil {
		t.Fatal(err)
	}
	for _, mode := range okfsvc.Modes {
		_, err := e.svc.Import(ctx, e.p, "team/dst", mode, buf.Bytes())
		domaintest.WantKind(t, err, vp.KindInvalid, "bundle")
		if !strings.Contains(err.Error(), b.Tasks[2].ID) || !strings.Contains(err.Error(), "priority") {
			t.Fatalf("%s: the error must name the record and the field: %v", mode, err)
		}
	}
	if got := e.bundle(t, "team/dst"); len(got.Memories)+len(got.Notes)+len(got.Tasks) != 0 {
		t.Fatal("a refused bundle wrote something")
	}
}
