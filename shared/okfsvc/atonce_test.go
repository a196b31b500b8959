package okfsvc_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// seedPlain writes n memories whose content holds word, n briefing notes
// and n tasks into ns, without links between them.
func (e *env) seedPlain(t *testing.T, ns, word string, n int) {
	t.Helper()
	for i := range n {
		if _, err := e.mem.StoreMemory(ctx, e.p, memory.StoreInput{Namespace: ns, Type: "fact", Content: fmt.Sprintf("%s fact %d", word, i)}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.notes.CreateBriefingNote(ctx, e.p, briefing.Input{Title: fmt.Sprintf("%s note %d", word, i), Topic: ns,
			Participants: []string{"pi"}, Content: "we met"}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.tasks.CreateTask(ctx, e.p, task.CreateTaskInput{Title: fmt.Sprintf("%s task %d", word, i), Project: ns, AssignedTo: "pi", Priority: "low"}); err != nil {
			t.Fatal(err)
		}
	}
}

// counted returns how many memories, notes and tasks ns holds, each read
// with one query (one snapshot), and the memories' ids.
func (e *env) counted(t *testing.T, ns string) (mems, notes, tasks int, ids []string) {
	ms, err := e.mem.NamespaceMemories(ctx, "test", e.p, ns)
	if err != nil {
		t.Error(err)
		return
	}
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	n, err := e.st.Query(ctx, store.Query{Index: store.GSI2, PK: "T#" + tenant + "#BRIEFTOPIC#" + ns, Limit: 1000})
	if err != nil {
		t.Error(err)
	}
	k, err := e.st.Query(ctx, store.Query{Index: store.GSI4, PK: "T#" + tenant + "#TPROJ#" + ns, Limit: 1000})
	if err != nil {
		t.Error(err)
	}
	return len(ms), len(n), len(k), ids
}

// On SQLite a replace is one transaction: when its last op fails, the
// namespace is byte for byte what it was and nothing of the bundle is
// visible, not even to search; then the same replace commits whole.
func TestReplaceAtOnceAllOrNothing(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	if e.large == nil {
		t.Fatal("the SQLite store does not offer large transactions to the service")
	}
	const old, fresh = 40, 50 // 120 entities replaced by 150: well past store.MaxTransactOps
	e.seedPlain(t, "team/dst", "wombat", old)
	e.seedPlain(t, "team/src", "quokka", fresh)
	before := e.export(t, "team/dst")
	data := e.export(t, "team/src")

	var sent atomic.Int64
	e.large.last = func() []store.Op { // a condition that fails, after every op of the replace
		return []store.Op{store.Check(store.Key{PK: "T#" + tenant + "#NOSUCH", SK: "ITEM"}, store.IfExists)}
	}
	e.large.fail = func(ops []store.Op) bool { sent.Store(int64(len(ops))); return false }
	_, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data)
	domaintest.WantKind(t, err, vp.KindConflict, "namespace")
	if n := sent.Load(); n <= store.MaxTransactOps {
		t.Fatalf("the replace sent %d ops in its transaction; want more than %d", n, store.MaxTransactOps)
	}
	if after := e.export(t, "team/dst"); !bytes.Equal(before, after) {
		t.Fatal("a replace whose transaction failed changed the namespace")
	}
	hits, err := e.mem.TextSearch(ctx, e.p, memory.SearchInput{Query: "quokka", Namespace: "team/dst"})
	if err != nil || hits.Count != 0 {
		t.Fatalf("search found %d memories of a failed replace (%v)", hits.Count, err)
	}
	for _, pk := range []string{"OKFPROV#team/dst", "OKFGEN#team/dst", "OKFREPL#team/dst"} {
		if items, err := e.st.Query(ctx, store.Query{PK: "T#" + tenant + "#" + pk, Limit: 10}); err != nil || len(items) != 0 {
			t.Fatalf("a failed replace left %d items in %s (%v)", len(items), pk, err)
		}
	}

	e.large.last, e.large.fail = nil, nil
	res, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{okf.KindMemory, okf.KindBriefing, okf.KindTask} {
		if res.Created[k] != fresh || res.Deleted[k] != old {
			t.Fatalf("%s: created %d deleted %d, want %d and %d", k, res.Created[k], res.Deleted[k], fresh, old)
		}
	}
	assertSame(t, e.bundle(t, "team/src"), e.bundle(t, "team/dst"), res.IDMap)
	hits, err = e.mem.TextSearch(ctx, e.p, memory.SearchInput{Query: "wombat", Namespace: "team/dst"})
	if err != nil || hits.Count != 0 {
		t.Fatalf("search still finds %d replaced memories (%v)", hits.Count, err)
	}
	hits, err = e.mem.TextSearch(ctx, e.p, memory.SearchInput{Query: "quokka", Namespace: "team/dst", Limit: 100})
	if err != nil || hits.Count != fresh {
		t.Fatalf("search finds %d new memories, want %d (%v)", hits.Count, fresh, err)
	}
	// A second identical replace keeps every id and deletes nothing.
	again, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data)
	if err != nil || again.Updated[okf.KindTask] != fresh || again.Deleted[okf.KindMemory] != 0 || !slicesEqualMap(res.IDMap, again.IDMap) {
		t.Fatalf("second replace: %+v %v", again, err)
	}
}

// A reader during a replace of 300 entities sees the old namespace or the
// new one, never a mix: each of its reads of memories, notes or tasks
// counts old or new, and its memory ids are the old set or the new one.
// (The journal path fails this: a reader sees both generations.)
func TestReplaceAtOnceReadersNeverSeeAMix(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	const old, fresh = 30, 100
	e.seedPlain(t, "team/dst", "wombat", old)
	e.seedPlain(t, "team/src", "quokka", fresh)
	data := e.export(t, "team/src")
	_, _, _, oldIDs := e.counted(t, "team/dst")

	var wg sync.WaitGroup
	var done atomic.Bool
	var mu sync.Mutex
	var seen [][]string
	reads, during := 0, 0
	var replacing atomic.Bool
	wg.Go(func() {
		for !done.Load() {
			busy := replacing.Load()
			// Each query is one snapshot, the three are three: the commit
			// may fall between them, so each kind is checked on its own.
			m, n, k, ids := e.counted(t, "team/dst")
			for kind, c := range map[string]int{"memories": m, "notes": n, "tasks": k} {
				if c != old && c != fresh {
					t.Errorf("a reader saw %d %s: neither the old namespace's %d nor the new one's %d", c, kind, old, fresh)
					return
				}
			}
			mu.Lock()
			seen, reads = append(seen, ids), reads+1
			if busy && replacing.Load() {
				during++
			}
			mu.Unlock()
			time.Sleep(time.Millisecond)
		}
	})
	time.Sleep(20 * time.Millisecond)
	replacing.Store(true)
	res, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data)
	replacing.Store(false)
	time.Sleep(10 * time.Millisecond)
	done.Store(true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, newIDs := e.counted(t, "team/dst")
	if len(newIDs) != fresh || res.Deleted[okf.KindMemory] != old {
		t.Fatalf("after the replace: %d memories, deleted %v", len(newIDs), res.Deleted)
	}
	for _, ids := range seen {
		if !slices.Equal(ids, oldIDs) && !slices.Equal(ids, newIDs) {
			t.Fatalf("a reader saw memories %s…: neither the old set nor the new one", strings.Join(ids[:min(3, len(ids))], ","))
		}
	}
	if during == 0 {
		t.Fatalf("no read ran while the replace did (%d reads in all): the test proved nothing", reads)
	}
	t.Logf("%d reads, %d of them during the replace", reads, during)
}

// Of two replaces racing on a namespace, the one that commits second
// fails as a conflict and changes nothing, instead of adding its bundle
// to the other's: the namespace holds exactly one bundle. The namespace
// starts empty, so only the replace marker can tell them apart.
func TestReplaceAtOnceRacingReplacesConflict(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seedPlain(t, "team/a", "quokka", 20)
	e.seedPlain(t, "team/b", "numbat", 25)
	dataA, dataB := e.export(t, "team/a"), e.export(t, "team/b")
	var second okfsvc.ImportResult
	var secondErr error
	fired := false
	e.large.fail = func([]store.Op) bool {
		if !fired { // the first replace is about to commit: the second runs whole
			fired = true
			second, secondErr = e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, dataB)
		}
		return false
	}
	_, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, dataA)
	domaintest.WantKind(t, err, vp.KindConflict, "namespace")
	if !strings.Contains(err.Error(), "retry") {
		t.Fatalf("the conflict should say to retry: %v", err)
	}
	if secondErr != nil {
		t.Fatal(secondErr)
	}
	assertSame(t, e.bundle(t, "team/b"), e.bundle(t, "team/dst"), second.IDMap)
}

// An entity deleted since an earlier import gets a new id on replace; its
// provenance record is rewritten, not also deleted in the same
// transaction (two ops on one key are refused).
func TestReplaceAfterADeletedImport(t *testing.T) {
	eachPath(t, false, func(t *testing.T, e *env) {
		e.seedPlain(t, "team/src", "quokka", 3)
		data := e.export(t, "team/src")
		first, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeMerge, data)
		if err != nil {
			t.Fatal(err)
		}
		gone := first.IDMap[e.bundle(t, "team/src").Memories[0].ID]
		if _, err := e.mem.SoftDeleteMemory(ctx, e.p, gone); err != nil {
			t.Fatal(err)
		}
		res, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, data)
		if err != nil {
			t.Fatal(err)
		}
		if res.Created[okf.KindMemory] != 1 || res.Updated[okf.KindMemory] != 2 || res.IDMap[e.bundle(t, "team/src").Memories[0].ID] == gone {
			t.Fatalf("replace after a deletion: %+v", res)
		}
		assertSame(t, e.bundle(t, "team/src"), e.bundle(t, "team/dst"), res.IDMap)
	})
}

// A failed replace that would have updated memories in place (their ids
// come from an earlier import) leaves search as it was: the words of the
// update that did not happen find nothing, the stored words still do.
func TestReplaceAtOnceFailedUpdateLeavesSearchAlone(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seedPlain(t, "team/src", "quokka", 5)
	data := e.export(t, "team/src")
	if _, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeMerge, data); err != nil {
		t.Fatal(err)
	}
	b := e.bundle(t, "team/src")
	for i := range b.Memories {
		b.Memories[i].Content = strings.Replace(b.Memories[i].Content, "quokka", "platypus", 1)
	}
	var buf bytes.Buffer
	if _, err := okf.Write(&buf, okf.ExportInput{Exporter: b.Manifest.Exporter, Origin: b.Manifest.Origin, Namespace: b.Manifest.Namespace,
		Memories: b.Memories, Notes: b.Notes, Tasks: b.Tasks}); err != nil {
		t.Fatal(err)
	}
	before := e.export(t, "team/dst")
	e.large.last = func() []store.Op {
		return []store.Op{store.Check(store.Key{PK: "T#" + tenant + "#NOSUCH", SK: "ITEM"}, store.IfExists)}
	}
	_, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeReplace, buf.Bytes())
	domaintest.WantKind(t, err, vp.KindConflict, "namespace")
	if after := e.export(t, "team/dst"); !bytes.Equal(before, after) {
		t.Fatal("a failed replace changed the namespace")
	}
	for word, want := range map[string]int{"platypus": 0, "quokka": 5} {
		hits, err := e.mem.TextSearch(ctx, e.p, memory.SearchInput{Query: word, Namespace: "team/dst"})
		if err != nil || hits.Count != want {
			t.Errorf("search %q found %d memories after a failed replace, want %d (%v)", word, hits.Count, want, err)
		}
	}
}
