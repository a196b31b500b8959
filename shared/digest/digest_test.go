package digest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"strings"
	"testing"
	"time"

	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const tenant = "acme"

var (
	now   = time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	admin = vp.Principal{Tenant: tenant, Admin: true}
)

// noWrites fails the test on any write: the digest is a pure read.
type noWrites struct {
	store.Store
	t *testing.T
}

func (s noWrites) Write(context.Context, ...store.Op) error {
	s.t.Error("the digest wrote to the store")
	return errors.New("read only")
}

type fixture struct {
	t   *testing.T
	st  store.Store
	ids *vp.IDs
	at  time.Time // the clock of the writers
	mem *memory.Service
	svc *Service
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dir, "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	f := &fixture{t: t, st: st, at: now}
	clock := func() time.Time { return f.at }
	f.ids = vp.NewIDs(clock)
	q := storequeue.New(storequeue.Options{Store: st, Name: "embed", Now: clock})
	key := make([]byte, 32)
	signer, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	f.mem = memory.New(memory.Options{Store: st, Index: idx, Embedder: embedlocal.New(embedlocal.Options{}), Queue: q, Cursors: signer, Now: clock})
	f.svc = New(Options{Store: noWrites{st, t}, Now: func() time.Time { return now }})
	return f
}

func (f *fixture) put(it store.Item, err error) {
	f.t.Helper()
	if err == nil {
		err = f.st.Write(context.Background(), store.Put(it, store.IfNotExists))
	}
	if err != nil {
		f.t.Fatal(err)
	}
}

// task stores a task created ago, last updated updatedAgo ago.
func (f *fixture) task(by string, ago, updatedAgo time.Duration, status, title, note string) string {
	f.at = now.Add(-ago)
	tk := vp.Task{ID: f.ids.New("task"), CreationTime: now.Add(-ago).UnixMilli(), Title: title, CompletionNote: note,
		AssignedTo: by, Priority: "medium", Status: status, CreatedBy: by, UpdatedAt: now.Add(-updatedAgo).UnixMilli()}
	f.put(task.Table.Item("test", tenant, tk))
	return tk.ID
}

func (f *fixture) message(from string, ago time.Duration, content string) string {
	f.at = now.Add(-ago)
	m := vp.Message{ID: f.ids.New("msg"), CreationTime: f.at.UnixMilli(), From: from, Channel: "general", Content: content, CreatedAt: f.at.UnixMilli()}
	f.put(message.Messages.Item("test", tenant, m))
	return m.ID
}

func (f *fixture) memory(by string, ago time.Duration, ns, content string) string {
	f.t.Helper()
	f.at = now.Add(-ago)
	res, err := f.mem.StoreMemory(context.Background(), admin, memory.StoreInput{Namespace: ns, Type: "note", Content: content, CreatedBy: by})
	if err != nil {
		f.t.Fatal(err)
	}
	return res.MemoryID
}

func (f *fixture) digest(p vp.Principal, in Input) Result {
	f.t.Helper()
	r, err := f.svc.Digest(context.Background(), p, in)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestDigest(t *testing.T) {
	f := newFixture(t)
	h, d := time.Hour, 24*time.Hour
	t1 := f.task("alice", d, d, vp.TaskTodo, "Fix login redirect", "")
	f.put(func() (store.Item, error) { // the description carries the claim
		f.at = now.Add(-d - h)
		tk := vp.Task{ID: f.ids.New("task"), CreationTime: f.at.UnixMilli(), Title: "Login", Description: "merged PR #954",
			AssignedTo: "alice", Priority: "low", Status: vp.TaskInProgress, CreatedBy: "alice", UpdatedAt: f.at.UnixMilli()}
		t1 = tk.ID
		return task.Table.Item("test", tenant, tk)
	}())
	f.task("alice", 2*d, 2*d, vp.TaskTodo, "merged #955", "VP-Sources: msg_x")
	f.task("system", d, d, vp.TaskTodo, "IRP: deployed ab12cd3 broke prod", "")
	f.task("cron-nightly", d, d, vp.TaskTodo, "shipped the nightly", "")
	f.task("bob", 10*d, d, vp.TaskReview, "released v1 at ab12cd3", "") // created before the window
	f.task("bob", 3*d, 3*d, vp.TaskTodo, "plain title", "")
	t7 := f.task("bob", 3*h, 2*h, vp.TaskDone, "Flaky test", "fixed in ab12cd3")

	m1 := f.message("bob", 4*h, "deployed to prod at ef91f6f")
	f.message("alice", 5*h, "hello world")
	f.message("system", h, "Issue #12 assigned to you")
	f.message("cron-weekly", h, "merged the weekly report")
	f.message("alice", 8*d, "merged long ago")

	mem1 := f.memory("carol", 2*h, "team/carol", "approved PR-C — envelope safety shipped at 4ddca2b")
	f.memory("carol", 2*h, "team/carol", "approved PR-D\nVP-Sources: k17bc8m7xhy0v6q8nq3jvcf5ex7h4f2k")
	f.memory("carol", 9*d, "team/carol", "shipped long ago")
	f.memory("system", h, "team/carol", "merged by the system")

	r := f.digest(admin, Input{})
	if r.WindowDays != 7 || r.Since != now.Add(-7*d).UnixMilli() || r.Truncated {
		t.Fatalf("window: %+v", r)
	}
	if want := map[string]int{"alice": 1, "bob": 2, "carol": 1}; !maps.Equal(r.CountsByOrch, want) {
		t.Fatalf("countsByOrch = %v, want %v", r.CountsByOrch, want)
	}
	if want := map[string]int{"task": 2, "message": 1, "memory": 1}; !maps.Equal(r.CountsByCategory, want) {
		t.Fatalf("countsByCategory = %v, want %v", r.CountsByCategory, want)
	}
	var got []string
	for _, s := range r.Samples {
		got = append(got, s.Category+":"+s.ID+":"+strings.Join(s.Tokens, ","))
	}
	want := []string{"memory:" + mem1 + ":approved,shipped,4ddca2b", "task:" + t7 + ":fixed,ab12cd3",
		"message:" + m1 + ":deployed,ef91f6f", "task:" + t1 + ":merged,#954"}
	if r.Total != 4 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("total %d, samples\n%q\nwant\n%q", r.Total, got, want)
	}
	if s := r.Samples[1]; s.Orchestrator != "bob" || s.CreatedAt != now.Add(-3*h).UnixMilli() || s.Excerpt != "Flaky test fixed in ab12cd3" {
		t.Fatalf("sample: %+v", s)
	}

	// Zero counts are omitted; the window and orchestrators narrow the scan.
	r = f.digest(admin, Input{Orchestrators: []string{"Carol"}})
	if !maps.Equal(r.CountsByCategory, map[string]int{"memory": 1}) || !maps.Equal(r.CountsByOrch, map[string]int{"carol": 1}) {
		t.Fatalf("scoped: %+v", r)
	}
	one := 1
	r = f.digest(admin, Input{WindowDays: &one})
	if !maps.Equal(r.CountsByCategory, map[string]int{"task": 1, "message": 1, "memory": 1}) || r.Total != 3 {
		t.Fatalf("one day: %+v", r)
	}
	ninety := 90
	if r = f.digest(admin, Input{WindowDays: &ninety}); r.CountsByOrch["bob"] != 3 || r.CountsByOrch["alice"] != 2 || r.CountsByOrch["carol"] != 2 {
		t.Fatalf("ninety days: %+v", r.CountsByOrch)
	}

	// Memories of namespaces the caller may not read are not seen.
	reader := vp.Principal{Tenant: tenant, Orchestrators: []string{"dave"}, ReadPrefixes: []string{"other/"}}
	if r = f.digest(reader, Input{}); r.CountsByCategory["memory"] != 0 || r.Total != 3 {
		t.Fatalf("reader: %+v", r)
	}

	for _, bad := range []int{0, -1, 91} {
		_, err := f.svc.Digest(context.Background(), admin, Input{WindowDays: &bad})
		var ve *vp.Error
		if !errors.As(err, &ve) || ve.Kind != vp.KindInvalid || ve.Field != "windowDays" {
			t.Fatalf("windowDays %d: %v", bad, err)
		}
	}
	if _, err := f.svc.Digest(context.Background(), vp.Principal{}, Input{}); err == nil {
		t.Fatal("no tenant accepted")
	}
}

func TestDigestCapsAndTruncates(t *testing.T) {
	f := newFixture(t)
	var ids []string
	for i := range 60 {
		ids = append(ids, f.message(fmt.Sprintf("orch%d", i%3), time.Duration(60-i)*time.Minute, fmt.Sprintf("shipped #%d", i)))
	}
	r := f.digest(admin, Input{})
	if r.Total != 60 || len(r.Samples) != MaxSamples || r.Truncated {
		t.Fatalf("total %d, %d samples, truncated %v", r.Total, len(r.Samples), r.Truncated)
	}
	for i, s := range r.Samples {
		if s.ID != ids[59-i] {
			t.Fatalf("sample %d is %s, want %s", i, s.ID, ids[59-i])
		}
	}
	if !maps.Equal(r.CountsByOrch, map[string]int{"orch0": 20, "orch1": 20, "orch2": 20}) || !maps.Equal(r.CountsByCategory, map[string]int{"message": 60}) {
		t.Fatalf("counts: %+v %+v", r.CountsByOrch, r.CountsByCategory)
	}

	f.svc.maxScanned = 25
	r = f.digest(admin, Input{})
	if !r.Truncated || r.Total != 25 || r.Samples[0].ID != ids[59] {
		t.Fatalf("truncated scan: total %d truncated %v", r.Total, r.Truncated)
	}

	long := strings.Repeat("é", 300) + " merged"
	if e := excerpt(long); len([]rune(e)) != MaxExcerptChars || !strings.HasSuffix(e, "…") {
		t.Fatalf("excerpt of %d runes", len([]rune(e)))
	}
}
