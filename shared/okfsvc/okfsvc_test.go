package okfsvc_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	"github.com/vantagepeers/vantagepeers/shared/search"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// ctx is shared by every test of the package, so it has no deadline of its
// own (domaintest.Ctx's minute would start at init, before DynamoDB Local
// has started — 40 s on a loaded machine — and end mid-run); go test's
// -timeout bounds the run.
var ctx = context.Background()

const tenant = "acme"

type env struct {
	st *recordingStore
	// large is the OKF service's store when replace is one transaction.
	large *largeStore
	queue *storequeue.Queue // the embed jobs
	mem   *memory.Service
	notes *briefing.Service
	tasks *task.Service
	svc   *okfsvc.Service
	p     vp.Principal
}

// recordingStore remembers every partition read.
type recordingStore struct {
	store.Store
	mu    sync.Mutex
	reads []string
	fail  func(ops []store.Op) bool
}

func (r *recordingStore) Get(ctx context.Context, k store.Key) (store.Item, error) {
	r.mu.Lock()
	r.reads = append(r.reads, k.PK)
	r.mu.Unlock()
	return r.Store.Get(ctx, k)
}

func (r *recordingStore) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	r.mu.Lock()
	r.reads = append(r.reads, q.PK)
	r.mu.Unlock()
	return r.Store.Query(ctx, q)
}

func (r *recordingStore) Write(ctx context.Context, ops ...store.Op) error {
	if r.fail != nil && r.fail(ops) {
		return fmt.Errorf("injected failure")
	}
	return r.Store.Write(ctx, ops...)
}

// largeStore is a recordingStore over a store with large transactions,
// which it offers too; last, when set, adds ops at the end of each.
type largeStore struct {
	*recordingStore
	lt   store.LargeTransactor
	last func() []store.Op
}

func (l *largeStore) TransactLarge(ctx context.Context, ops []store.Op) error {
	if l.fail != nil && l.fail(ops) {
		return fmt.Errorf("injected failure")
	}
	if l.last != nil {
		ops = append(ops, l.last()...)
	}
	return l.lt.TransactLarge(ctx, ops)
}

// newEnv builds the services over st; replace takes its one-transaction
// path when st offers it.
func newEnv(t *testing.T, st store.Store) *env { return newEnvPath(t, st, true) }

// newEnvPath is newEnv; large false hides st's large transactions from
// the OKF service, so that replace keeps its journal.
func newEnvPath(t *testing.T, st store.Store, large bool) *env {
	t.Helper()
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	rs := &recordingStore{Store: st}
	signer := domaintest.Signer(t)
	w := &search.Writer{Index: idx}
	q := storequeue.New(storequeue.Options{Store: rs})
	mem := memory.New(memory.Options{Store: rs, Index: idx, Embedder: embedlocal.New(embedlocal.Options{}),
		Queue: q, Cursors: signer})
	tasks := task.New(task.Options{Store: rs, Cursors: signer, Search: w})
	var svcStore store.Store = rs
	if lt, ok := store.AsLargeTransactor(st); ok && large {
		svcStore = &largeStore{recordingStore: rs, lt: lt}
	}
	e := &env{st: rs, mem: mem, queue: q, tasks: tasks, notes: briefing.New(briefing.Options{Store: rs, Cursors: signer, Search: w}),
		svc: okfsvc.New(okfsvc.Options{Store: svcStore, Memory: mem, Tasks: tasks, Search: w, Version: "test"}),
		p:   domaintest.As(tenant, "pi")}
	e.large, _ = svcStore.(*largeStore)
	return e
}

func eachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) { fn(t, newEnv(t, b.Open(t, nil))) })
}

// eachPath runs fn on each way replace works: one transaction (SQLite),
// and the journal, on SQLite with its large transactions hidden and on
// DynamoDB (which has none). journalOnly skips the first.
func eachPath(t *testing.T, journalOnly bool, fn func(t *testing.T, e *env)) {
	if !journalOnly {
		t.Run("sqlite", func(t *testing.T) { fn(t, newEnvPath(t, openSQLite(t), true)) })
	}
	t.Run("sqlite-journal", func(t *testing.T) { fn(t, newEnvPath(t, openSQLite(t), false)) })
	t.Run("dynamodb", func(t *testing.T) {
		if testing.Short() {
			t.Skip("-short: SQLite only")
		}
		fn(t, newEnv(t, teststores.All[1].Open(t, nil)))
	})
}

// seed writes n memories (every type, relations, one superseded), n
// briefing notes linked to them and n tasks with dependencies into ns.
func (e *env) seed(t *testing.T, ns string, n int) {
	t.Helper()
	var prev string
	var prevTask string
	for i := range n {
		in := memory.StoreInput{Namespace: ns, Type: vp.MemoryTypes[i%len(vp.MemoryTypes)], Content: fmt.Sprintf("zebracorn fact %d about %s", i, ns)}
		if in.Type == vp.MemoryTypeEpisode {
			in.Episode = &vp.Episode{Context: "c", Goal: "g", Action: "a", Outcome: "o", Insight: "i", Severity: "low"}
		}
		if prev != "" {
			rt := vp.RelationReferences
			if i == 3 {
				rt = vp.RelationUpdates
			}
			in.Relations = []vp.Relation{{Type: rt, TargetID: prev}}
		}
		r, err := e.mem.StoreMemory(ctx, e.p, in)
		if err != nil {
			t.Fatal(err)
		}
		prev = r.MemoryID
		if _, err := e.notes.CreateBriefingNote(ctx, e.p, briefing.Input{Title: fmt.Sprintf("Note %d", i), Topic: ns,
			Participants: []string{"pi"}, Content: "we met", Decisions: []string{"ship"}, LinkedMemoryIDs: []string{r.MemoryID}}); err != nil {
			t.Fatal(err)
		}
		ti := task.CreateTaskInput{Title: fmt.Sprintf("Task %d", i), Project: ns, AssignedTo: "pi", Priority: "high", Tags: []string{"t"}}
		if prevTask != "" {
			ti.DependsOn = []string{prevTask}
		}
		tk, err := e.tasks.CreateTask(ctx, e.p, ti)
		if err != nil {
			t.Fatal(err)
		}
		prevTask = tk.ID
		if i == 0 { // one done task: started, work segment, completion note
			if _, err := e.tasks.StartTask(ctx, e.p, task.TaskRef{TaskID: tk.ID}); err != nil {
				t.Fatal(err)
			}
			if _, err := e.tasks.CompleteTask(ctx, e.p, task.CompleteTaskInput{TaskID: tk.ID, CompletionNote: "shipped in abc1234"}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (e *env) export(t *testing.T, ns string) []byte {
	t.Helper()
	r, err := e.svc.Export(ctx, e.p, ns)
	if err != nil {
		t.Fatal(err)
	}
	return r.Data
}

func (e *env) bundle(t *testing.T, ns string) *okf.Bundle {
	t.Helper()
	b, err := okf.Read("test", bytes.NewReader(e.export(t, ns)), okf.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		const n = 14
		e.seed(t, "team/src", n)
		data := e.export(t, "team/src")
		if again := e.export(t, "team/src"); !bytes.Equal(data, again) {
			t.Fatal("two exports of the same namespace differ")
		}
		rep, err := e.svc.Validate(ctx, e.p, data)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Counts[okf.KindMemory] != n || rep.Counts[okf.KindBriefing] != n || rep.Counts[okf.KindTask] != n {
			t.Fatalf("validate counts %v, want %d each", rep.Counts, n)
		}

		dry, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeDryRun, data)
		if err != nil {
			t.Fatal(err)
		}
		if dry.Created[okf.KindMemory] != n || len(e.bundle(t, "team/dst").Memories) != 0 {
			t.Fatalf("dry-run created %v, and must write nothing", dry.Created)
		}

		res, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeMerge, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{okf.KindMemory, okf.KindBriefing, okf.KindTask} {
			if res.Created[k] != n {
				t.Fatalf("merge created %v, want %d of each", res.Created, n)
			}
		}
		if len(res.IDMap) != 3*n || len(res.Warnings) != 0 {
			t.Fatalf("id map has %d entries (want %d); warnings %v", len(res.IDMap), 3*n, res.Warnings)
		}
		src, dst := e.bundle(t, "team/src"), e.bundle(t, "team/dst")
		assertSame(t, src, dst, res.IDMap)

		// Searchable at once: BM25 (text_search, hybrid_search) before any embed job ran.
		for _, search := range []func(context.Context, vp.Principal, memory.SearchInput) (memory.SearchResult, error){e.mem.TextSearch, e.mem.HybridSearch} {
			hits, err := search(ctx, e.p, memory.SearchInput{Query: "zebracorn", Namespace: "team/dst", Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			live := 0
			for _, m := range dst.Memories {
				if m.IsLatest {
					live++
				}
			}
			if hits.Count != live {
				t.Fatalf("search found %d imported memories, want %d", hits.Count, live)
			}
		}

		// Idempotent: the same bundle again changes nothing.
		again, err := e.svc.Import(ctx, e.p, "team/dst", okfsvc.ModeMerge, data)
		if err != nil {
			t.Fatal(err)
		}
		if again.Created[okf.KindMemory]+again.Created[okf.KindTask]+again.Created[okf.KindBriefing] != 0 || again.Skipped[okf.KindMemory] != n {
			t.Fatalf("second import created %v, skipped %v", again.Created, again.Skipped)
		}
		if !slicesEqualMap(res.IDMap, again.IDMap) {
			t.Fatal("second import mapped ids differently")
		}
		if after := e.export(t, "team/dst"); !bytes.Equal(after, e.export(t, "team/dst")) || len(e.bundle(t, "team/dst").Memories) != n {
			t.Fatal("second import changed the namespace")
		}
	})
}

func slicesEqualMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// assertSame checks that dst holds src's entities, field for field, ids
// (and what follows from them) aside.
func assertSame(t *testing.T, src, dst *okf.Bundle, ids map[string]string) {
	t.Helper()
	if len(dst.Memories) != len(src.Memories) || len(dst.Notes) != len(src.Notes) || len(dst.Tasks) != len(src.Tasks) {
		t.Fatalf("dst has %d/%d/%d entities, src %d/%d/%d", len(dst.Memories), len(dst.Notes), len(dst.Tasks), len(src.Memories), len(src.Notes), len(src.Tasks))
	}
	byID := map[string]any{}
	for _, m := range dst.Memories {
		byID[m.ID] = m
	}
	for _, n := range dst.Notes {
		byID[n.ID] = n
	}
	for _, tk := range dst.Tasks {
		byID[tk.ID] = tk
	}
	for _, m := range src.Memories {
		got, ok := byID[ids[m.ID]].(vp.Memory)
		if !ok {
			t.Fatalf("memory %s was not imported", m.ID)
		}
		want := m
		want.ID, want.Namespace, want.Embedder, got.Embedder = got.ID, got.Namespace, "", ""
		if want.SupersededBy != "" {
			want.SupersededBy = ids[want.SupersededBy]
		}
		for i := range want.Relations {
			want.Relations[i].TargetID = ids[want.Relations[i].TargetID]
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("memory %s:\n got %+v\nwant %+v", m.ID, got, want)
		}
	}
	for _, n := range src.Notes {
		got, ok := byID[ids[n.ID]].(vp.BriefingNote)
		if !ok {
			t.Fatalf("note %s was not imported", n.ID)
		}
		want := n
		want.ID, want.Topic = got.ID, got.Topic
		want.LinkedMemoryIDs = slices.Clone(n.LinkedMemoryIDs)
		for i := range want.LinkedMemoryIDs {
			want.LinkedMemoryIDs[i] = ids[want.LinkedMemoryIDs[i]]
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("note %s:\n got %+v\nwant %+v", n.ID, got, want)
		}
	}
	for _, tk := range src.Tasks {
		got, ok := byID[ids[tk.ID]].(vp.Task)
		if !ok {
			t.Fatalf("task %s was not imported", tk.ID)
		}
		want := tk
		want.ID, want.Project = got.ID, got.Project
		want.DependsOn = slices.Clone(tk.DependsOn)
		for i := range want.DependsOn {
			want.DependsOn[i] = ids[want.DependsOn[i]]
		}
		// Who waits on a task is renamed with the tasks of the bundle.
		want.WaitedOnBy = slices.Clone(tk.WaitedOnBy)
		for i := range want.WaitedOnBy {
			want.WaitedOnBy[i] = ids[want.WaitedOnBy[i]]
		}
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("task %s:\n got %+v\nwant %+v", tk.ID, got, want)
		}
	}
}

func openSQLite(t *testing.T) store.Store { return teststores.All[0].Open(t, nil) }

func briefingTitle(id, title string) briefing.Update {
	return briefing.Update{NoteID: id, Title: &title}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
