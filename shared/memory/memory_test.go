package memory_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/listing/listingtest"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// clock is real time plus an offset tests can advance (TTL, backoff).
type clock struct{ offset atomic.Int64 }

func (c *clock) Now() time.Time          { return time.Now().Add(time.Duration(c.offset.Load())) }
func (c *clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }

// env is one wired service: store, local search index, durable queue, the
// offline embedder.
type env struct {
	t     testing.TB
	svc   *memory.Service
	st    store.Store
	idx   *searchlocal.Index
	q     *storequeue.Queue
	emb   embed.Embedder
	clock *clock
	dir   string
}

// eachBackend runs fn once per store backend with a fresh environment.
func eachBackend(t *testing.T, fn func(t *testing.T, e *env)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := &clock{}
		fn(t, newEnv(t, b.Open(t, c.Now), c, nil, storequeue.Options{}))
	})
}

// newEnv wires a service over st. emb defaults to the offline embedder; the
// queue options get the store and clock filled in.
func newEnv(t testing.TB, st store.Store, c *clock, emb embed.Embedder, qo storequeue.Options) *env {
	t.Helper()
	dir := t.TempDir()
	idx, err := searchlocal.Open(context.Background(), searchlocal.Options{Path: filepath.Join(dir, "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	e := &env{t: t, st: st, idx: idx, clock: c, dir: dir}
	e.rewire(emb, qo)
	return e
}

// rewire rebuilds the service (and queue) over the same store and index,
// as a restart with another configuration would.
func (e *env) rewire(emb embed.Embedder, qo storequeue.Options) {
	if emb == nil {
		emb = embedlocal.New(embedlocal.Options{})
	}
	qo.Store, qo.Now = e.st, e.clock.Now
	if qo.Backoff == 0 {
		qo.Backoff = 10 * time.Millisecond
	}
	e.emb = emb
	e.q = storequeue.New(qo)
	e.svc = memory.New(memory.Options{Store: e.st, Index: e.idx, Embedder: emb, Queue: e.q, Cursors: signer(e.t), Now: e.clock.Now})
}

func signer(t testing.TB) *listing.Signer {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// drain does what the embedding worker (shared/jobs) does until the queue
// has nothing due: receive, EmbedJobs, ack or fail. It returns how many
// jobs failed.
func (e *env) drain() int {
	e.t.Helper()
	failed := 0
	for i := 0; i < 1000; i++ {
		n, f := e.processOnce()
		failed += f
		if n == 0 {
			return failed
		}
	}
	e.t.Fatal("the queue does not drain")
	return failed
}

func (e *env) processOnce() (received, failed int) {
	e.t.Helper()
	batch, err := e.q.Receive(ctx(), 32, time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	for i, err := range e.svc.EmbedJobs(ctx(), batch) {
		if err == nil {
			err = e.q.Ack(ctx(), batch[i])
		} else {
			failed++
			err = e.q.Fail(ctx(), batch[i], err)
		}
		if err != nil {
			e.t.Fatal(err)
		}
	}
	return len(batch), failed
}

func ctx() context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	_ = cancel // the test process ends first
	return c
}

// as is a principal acting as orchs with every namespace readable and writable.
func as(tenant string, orchs ...string) vp.Principal {
	return vp.Principal{Tenant: tenant, Orchestrators: orchs, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}
}

// scoped may read and write only under the given prefixes.
func scoped(tenant, orch string, read, write []string) vp.Principal {
	return vp.Principal{Tenant: tenant, Orchestrators: []string{orch}, ReadPrefixes: read, WritePrefixes: write}
}

func wantKind(t testing.TB, err error, kind vp.Kind, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s on %q", kind, field)
	}
	if vp.KindOf(err) != kind {
		t.Fatalf("got %v (kind %s), want kind %s", err, vp.KindOf(err), kind)
	}
	if field != "" && !strings.Contains(err.Error(), field) {
		t.Fatalf("error %q does not name %q", err, field)
	}
}

func (e *env) store(p vp.Principal, ns, typ, content string) string {
	e.t.Helper()
	r, err := e.svc.StoreMemory(ctx(), p, memory.StoreInput{Namespace: ns, Type: typ, Content: content})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.MemoryID
}

// ids returns the ids of search results, best first.
func ids(r memory.SearchResult) []string {
	out := []string{}
	for _, h := range r.Results {
		out = append(out, h.ID)
	}
	return out
}

// searches runs every memory search for q and returns the ids each found.
func (e *env) searches(p vp.Principal, ns, q string) map[string][]string {
	e.t.Helper()
	out := map[string][]string{}
	for name, fn := range map[string]func(context.Context, vp.Principal, memory.SearchInput) (memory.SearchResult, error){
		"text_search": e.svc.TextSearch, "recall": e.svc.Recall, "hybrid_search": e.svc.HybridSearch,
	} {
		r, err := fn(ctx(), p, memory.SearchInput{Query: q, Namespace: ns, Limit: 20})
		if err != nil {
			e.t.Fatalf("%s: %v", name, err)
		}
		if r.Count != len(r.Results) {
			e.t.Fatalf("%s: count %d for %d results", name, r.Count, len(r.Results))
		}
		out[name] = ids(r)
	}
	return out
}

// pageAll follows nextCursor to the end and returns every item's _id.
func pageAll(t testing.TB, page func(cursor string) (listing.Page[any], error)) []string {
	t.Helper()
	var all []string
	cursor := ""
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("pagination does not end")
		}
		p, err := page(cursor)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range p.Items {
			all = append(all, idOf(t, it))
		}
		if p.NextCursor == "" {
			return all
		}
		cursor = p.NextCursor
	}
}

func idOf(t testing.TB, item any) string {
	t.Helper()
	b, _ := json.Marshal(item)
	var v struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.ID == "" {
		t.Fatalf("item without _id: %s", b)
	}
	return v.ID
}

func intp(n int) *int { return &n }

// checkListContract seeds nothing: it drains list (already holding want
// rows) by 20, checks clamping and cursor tampering.
func checkListContract(t *testing.T, want []string, list func(listing.Params) (listing.Page[any], error)) {
	t.Helper()
	got := pageAll(t, func(c string) (listing.Page[any], error) {
		p, err := list(listing.Params{Limit: intp(20), Cursor: c})
		if err == nil && len(p.Items) > 20 {
			t.Fatalf("page of %d items for limit 20", len(p.Items))
		}
		return p, err
	})
	if len(got) != len(want) {
		t.Fatalf("drained %d rows, want %d", len(got), len(want))
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("row %s returned twice", id)
		}
		seen[id] = true
	}
	for _, id := range want {
		if !seen[id] {
			t.Fatalf("row %s missing", id)
		}
	}
	p, err := list(listing.Params{Limit: intp(500)})
	if err != nil || len(p.Items) > 200 || len(p.Items) != min(len(want), 200) {
		t.Fatalf("limit 500: %d items (%v)", len(p.Items), err)
	}
	if len(want) <= 200 && p.NextCursor != "" {
		t.Fatal("a cursor on the last page")
	}
	first, err := list(listing.Params{Limit: intp(1)})
	if err != nil || first.NextCursor == "" {
		t.Fatalf("limit 1: %+v %v", first, err)
	}
	tampered := listingtest.Tamper(first.NextCursor)
	_, err = list(listing.Params{Cursor: tampered})
	wantKind(t, err, vp.KindInvalid, "cursor")
	lite, err := list(listing.Params{Limit: intp(3), Fields: "lite"})
	if err != nil || len(lite.Items) != 3 {
		t.Fatalf("lite: %v", err)
	}
	b, _ := json.Marshal(lite.Items[0])
	if strings.Contains(string(b), `"content"`) || strings.Contains(string(b), `"rootCause"`) || !strings.Contains(string(b), `"_creationTime"`) {
		t.Fatalf("lite row %s", b)
	}
	_, err = list(listing.Params{Fields: "medium"})
	wantKind(t, err, vp.KindInvalid, "fields")
}

// ---- memories ----

func TestStoreGetAndSearch(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		r, err := e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "project/vp", Type: "decision",
			Content: "The gateway enforces rate limiting per tenant with a token bucket."})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.MemoryID, "mem_") || r.CreationTime == 0 {
			t.Fatalf("result %+v", r)
		}
		m, err := e.svc.GetMemory(ctx(), alice, r.MemoryID)
		if err != nil {
			t.Fatal(err)
		}
		if m.Namespace != "project/vp" || m.Type != "decision" || m.CreatedBy != "alice" || !m.IsLatest || m.Embedder != "" {
			t.Fatalf("memory %+v", m)
		}
		// Text is searchable the moment store_memory returns; vectors come
		// from the job.
		got := e.searches(alice, "", "rate limiting gateway")
		if !slices.Equal(got["text_search"], []string{r.MemoryID}) {
			t.Fatalf("text_search before the worker: %v", got["text_search"])
		}
		if len(got["recall"]) != 0 {
			t.Fatalf("recall found %v before any vector was computed", got["recall"])
		}
		if !slices.Equal(got["hybrid_search"], []string{r.MemoryID}) {
			t.Fatalf("hybrid_search before the worker: %v", got["hybrid_search"])
		}
		e.drain()
		m, _ = e.svc.GetMemory(ctx(), alice, r.MemoryID)
		if m.Embedder != e.emb.Name() {
			t.Fatalf("embedder recorded %q, want %q", m.Embedder, e.emb.Name())
		}
		got = e.searches(alice, "project/vp", "how do we throttle tenants at the gateway")
		for name, found := range got {
			if !slices.Contains(found, r.MemoryID) && name != "text_search" {
				t.Fatalf("%s did not find the memory: %v", name, found)
			}
		}
		res, err := e.svc.Recall(ctx(), alice, memory.SearchInput{Query: "rate limiting", Namespace: "project/vp"})
		if err != nil || res.Count != 1 || res.Results[0].Score <= 0 || res.Results[0].Content == "" {
			t.Fatalf("recall %+v %v", res, err)
		}
		_, err = e.svc.GetMemory(ctx(), alice, "mem_nope")
		wantKind(t, err, vp.KindNotFound, "memoryId")
	})
}

func TestSupersede(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		old := e.store(alice, "project/ui", "project", "The landing page uses hex colour tokens.")
		ref := e.store(alice, "project/ui", "note", "Colour tokens are documented in the design system.")
		r, err := e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "project/ui", Type: "project",
			Content:   "The landing page uses OKLCH colour tokens exclusively.",
			Relations: []vp.Relation{{TargetID: old, Type: "updates"}, {TargetID: ref, Type: "references"}}})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Superseded, []string{old}) {
			t.Fatalf("superseded %v", r.Superseded)
		}
		e.drain()
		m, _ := e.svc.GetMemory(ctx(), alice, old)
		if m.IsLatest || m.SupersededBy != r.MemoryID || m.SupersededAt == 0 {
			t.Fatalf("target after updates: %+v", m)
		}
		if n, _ := e.svc.GetMemory(ctx(), alice, r.MemoryID); len(n.Relations) != 2 {
			t.Fatalf("relations %+v", n.Relations)
		}
		for name, found := range e.searches(alice, "", "landing page colour tokens") {
			if slices.Contains(found, old) {
				t.Fatalf("%s still finds the superseded memory: %v", name, found)
			}
			if !slices.Contains(found, r.MemoryID) {
				t.Fatalf("%s misses the new memory: %v", name, found)
			}
		}
		list := func(inc bool) []string {
			return pageAll(t, func(c string) (listing.Page[any], error) {
				return e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "project/ui", IncludeSuperseded: inc, Params: listing.Params{Cursor: c}})
			})
		}
		if got := list(false); !slices.Equal(got, []string{r.MemoryID, ref}) {
			t.Fatalf("list_memories: %v", got)
		}
		if got := list(true); !slices.Equal(got, []string{r.MemoryID, ref, old}) {
			t.Fatalf("list_memories includeSuperseded (latest first, newest first): %v", got)
		}
		typed, _ := e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "project/ui", Type: "project"})
		if len(typed.Items) != 1 || idOf(t, typed.Items[0]) != r.MemoryID {
			t.Fatalf("typed list %+v", typed.Items)
		}
		typed, _ = e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "project/ui", Type: "project", IncludeSuperseded: true})
		if len(typed.Items) != 2 {
			t.Fatalf("typed list with superseded: %+v", typed.Items)
		}
		// A superseded memory cannot be updated again: update its successor.
		_, err = e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "project/ui", Type: "project", Content: "x",
			Relations: []vp.Relation{{TargetID: old, Type: "updates"}}})
		wantKind(t, err, vp.KindConflict, "relations")
		if !strings.Contains(err.Error(), r.MemoryID) {
			t.Fatalf("error does not name the successor: %v", err)
		}
		// Other relation types to a superseded memory are fine.
		if _, err := e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "project/ui", Type: "note", Content: "history",
			Relations: []vp.Relation{{TargetID: old, Type: "extends"}}}); err != nil {
			t.Fatal(err)
		}
	})
}

// TestSupersedeRace: many writers update the same memory at once; exactly
// one supersedes it.
func TestSupersedeRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		old := e.store(alice, "global", "fact", "v1")
		const n = 20
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			go func() {
				_, err := e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "global", Type: "fact", Content: fmt.Sprint("v2 by ", i),
					Relations: []vp.Relation{{TargetID: old, Type: "updates"}}})
				errs <- err
			}()
		}
		wins := 0
		for i := 0; i < n; i++ {
			err := <-errs
			switch {
			case err == nil:
				wins++
			case vp.IsKind(err, vp.KindConflict):
			default:
				t.Fatal(err)
			}
		}
		if wins != 1 {
			t.Fatalf("%d writers superseded the same memory, want 1", wins)
		}
		got := pageAll(t, func(c string) (listing.Page[any], error) {
			return e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "global", Params: listing.Params{Cursor: c}})
		})
		if len(got) != 1 {
			t.Fatalf("latest memories %v, want the one winner", got)
		}
	})
}

func TestRelationErrorsWriteNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		admin := as("acme", "alice")
		secret := e.store(admin, "orchestrator/bob", "note", "bob's private scratchpad")
		shared := e.store(admin, "global", "fact", "shared knowledge everyone reads")
		carol := scoped("acme", "carol", []string{"global", "project/c"}, []string{"project/c"})
		cases := []struct {
			name  string
			rels  []vp.Relation
			kind  vp.Kind
			field string
		}{
			{"missing target", []vp.Relation{{TargetID: "mem_missing", Type: "references"}}, vp.KindNotFound, "relations"},
			{"foreign namespace", []vp.Relation{{TargetID: secret, Type: "references"}}, vp.KindForbidden, "relations"},
			{"supersede unwritable", []vp.Relation{{TargetID: shared, Type: "updates"}}, vp.KindForbidden, "relations"},
			{"unknown type", []vp.Relation{{TargetID: shared, Type: "derives"}}, vp.KindInvalid, "updates, references, contradicts, extends"},
			{"empty target", []vp.Relation{{Type: "extends"}}, vp.KindInvalid, "targetId"},
		}
		for _, c := range cases {
			_, err := e.svc.StoreMemory(ctx(), carol, memory.StoreInput{Namespace: "project/c", Type: "note",
				Content: "unique marker zebracorn " + c.name, Relations: c.rels})
			wantKind(t, err, c.kind, c.field)
		}
		// A memory of another tenant is simply not there.
		other := e.store(as("other", "zed"), "global", "fact", "elsewhere")
		_, err := e.svc.StoreMemory(ctx(), admin, memory.StoreInput{Namespace: "global", Type: "note", Content: "zebracorn",
			Relations: []vp.Relation{{TargetID: other, Type: "updates"}}})
		wantKind(t, err, vp.KindNotFound, "relations")
		// Nothing was written: no row, no searchable text, the target intact.
		page, _ := e.svc.ListMemories(ctx(), admin, memory.ListInput{Namespace: "project/c"})
		res, _ := e.svc.TextSearch(ctx(), admin, memory.SearchInput{Query: "zebracorn"})
		if len(page.Items) != 0 || res.Count != 0 {
			t.Fatalf("refused writes left %d rows and %d search hits", len(page.Items), res.Count)
		}
		if m, _ := e.svc.GetMemory(ctx(), admin, shared); !m.IsLatest {
			t.Fatal("a refused updates relation superseded its target")
		}
		if o, _ := e.svc.GetMemory(ctx(), as("other", "zed"), other); !o.IsLatest {
			t.Fatal("another tenant's memory was superseded")
		}
	})
}

func TestSoftDelete(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		id := e.store(alice, "global", "warning", "Never force-push to the release branch.")
		keep := e.store(alice, "global", "warning", "Never skip the release checklist.")
		e.drain()
		if got := e.searches(alice, "", "release branch force-push"); !slices.Contains(got["recall"], id) {
			t.Fatalf("before delete: %v", got)
		}
		reader := scoped("acme", "bob", []string{"global"}, nil)
		_, err := e.svc.SoftDeleteMemory(ctx(), reader, id)
		wantKind(t, err, vp.KindForbidden, "memoryId")
		r, err := e.svc.SoftDeleteMemory(ctx(), alice, id)
		if err != nil || !r.Deleted || r.AlreadyDeleted {
			t.Fatalf("delete %+v %v", r, err)
		}
		for name, found := range e.searches(alice, "", "release branch force-push") {
			if slices.Contains(found, id) {
				t.Fatalf("%s finds a deleted memory", name)
			}
		}
		for _, inc := range []bool{false, true} {
			got := pageAll(t, func(c string) (listing.Page[any], error) {
				return e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "global", IncludeSuperseded: inc, Params: listing.Params{Cursor: c}})
			})
			if !slices.Equal(got, []string{keep}) {
				t.Fatalf("list (includeSuperseded=%v) after delete: %v", inc, got)
			}
		}
		m, err := e.svc.GetMemory(ctx(), alice, id)
		if err != nil || m.IsLatest || m.DeletedAt == 0 {
			t.Fatalf("the deleted row is kept for audit: %+v %v", m, err)
		}
		r, err = e.svc.SoftDeleteMemory(ctx(), alice, id)
		if err != nil || !r.AlreadyDeleted {
			t.Fatalf("second delete %+v %v", r, err)
		}
		_, err = e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "global", Type: "note", Content: "x",
			Relations: []vp.Relation{{TargetID: id, Type: "extends"}}})
		wantKind(t, err, vp.KindNotFound, "relations")
		_, err = e.svc.SoftDeleteMemory(ctx(), alice, "mem_missing")
		wantKind(t, err, vp.KindNotFound, "memoryId")
	})
}

func TestTTL(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		ttl := e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)
		r, err := e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "global", Type: "observation",
			Content: "The staging cluster is being migrated this afternoon.", TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		forever := e.store(alice, "global", "observation", "The staging cluster runs in eu-west-1.")
		e.drain()
		if got := e.searches(alice, "", "staging cluster migrated"); !slices.Contains(got["hybrid_search"], r.MemoryID) {
			t.Fatalf("before expiry: %v", got)
		}
		e.clock.Advance(61 * time.Minute)
		_, err = e.svc.GetMemory(ctx(), alice, r.MemoryID)
		wantKind(t, err, vp.KindNotFound, "memoryId")
		for name, found := range e.searches(alice, "", "staging cluster migrated") {
			if slices.Contains(found, r.MemoryID) {
				t.Fatalf("%s finds an expired memory", name)
			}
		}
		got := pageAll(t, func(c string) (listing.Page[any], error) {
			return e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "global", Params: listing.Params{Cursor: c}})
		})
		if !slices.Equal(got, []string{forever}) {
			t.Fatalf("list after expiry: %v", got)
		}
		for _, bad := range []string{"tomorrow", "2026-13-01T00:00:00Z", "2026-07-01T00:00:00", e.clock.Now().Add(-time.Minute).UTC().Format(time.RFC3339)} {
			_, err := e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "global", Type: "note", Content: "x", TTL: bad})
			wantKind(t, err, vp.KindInvalid, "ttl")
		}
	})
}

func TestNamespaceAndTenantFilters(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		admin := as("acme", "alice")
		const text = "deployment checklist for the payments service"
		in := map[string]string{}
		for _, ns := range []string{"project/a", "project/a/sub", "project/ab", "global", "orchestrator/bob"} {
			in[ns] = e.store(admin, ns, "procedure", text+" in "+ns)
		}
		otherTenant := e.store(as("beta", "zed"), "project/a", "procedure", text)
		e.drain()
		carol := scoped("acme", "carol", []string{"project/a"}, []string{"project/a"})
		for name, found := range e.searches(carol, "", text) {
			slices.Sort(found)
			want := []string{in["project/a"], in["project/a/sub"]}
			slices.Sort(want)
			if !slices.Equal(found, want) {
				t.Fatalf("%s without namespace for read prefix project/a: %v, want %v", name, found, want)
			}
		}
		for name, found := range e.searches(carol, "project/a/sub", text) {
			if !slices.Equal(found, []string{in["project/a/sub"]}) {
				t.Fatalf("%s in project/a/sub: %v", name, found)
			}
		}
		for name, found := range e.searches(admin, "", text) {
			if len(found) != 5 || slices.Contains(found, otherTenant) {
				t.Fatalf("%s for the tenant admin: %v", name, found)
			}
		}
		_, err := e.svc.Recall(ctx(), carol, memory.SearchInput{Query: text, Namespace: "project/ab"})
		wantKind(t, err, vp.KindForbidden, "namespace")
		_, err = e.svc.GetMemory(ctx(), carol, in["global"])
		wantKind(t, err, vp.KindForbidden, "memoryId")
		_, err = e.svc.ListMemories(ctx(), carol, memory.ListInput{Namespace: "global"})
		wantKind(t, err, vp.KindForbidden, "namespace")
		_, err = e.svc.StoreMemory(ctx(), carol, memory.StoreInput{Namespace: "global", Type: "note", Content: "x"})
		wantKind(t, err, vp.KindForbidden, "namespace")
		_, err = e.svc.StoreMemory(ctx(), carol, memory.StoreInput{Namespace: "project/a", Type: "note", Content: "x", CreatedBy: "bob"})
		wantKind(t, err, vp.KindForbidden, "createdBy")
		// A token that may read nothing is told so, rather than shown
		// everything or an empty list that reads as "no match".
		nobody := scoped("acme", "dave", nil, nil)
		for name, fn := range map[string]func(context.Context, vp.Principal, memory.SearchInput) (memory.SearchResult, error){
			"text_search": e.svc.TextSearch, "recall": e.svc.Recall, "hybrid_search": e.svc.HybridSearch,
		} {
			r, err := fn(ctx(), nobody, memory.SearchInput{Query: text})
			if len(r.Results) != 0 {
				t.Fatalf("%s for a token without read prefixes: %v", name, r.Results)
			}
			wantKind(t, err, vp.KindForbidden, "namespace")
		}
		// Another tenant sees none of it, whatever its rights.
		beta := as("beta", "zed")
		for name, found := range e.searches(beta, "", text) {
			if !slices.Equal(found, []string{otherTenant}) {
				t.Fatalf("%s in tenant beta: %v", name, found)
			}
		}
		_, err = e.svc.GetMemory(ctx(), beta, in["project/a"])
		wantKind(t, err, vp.KindNotFound, "memoryId")
		_, err = e.svc.SoftDeleteMemory(ctx(), beta, in["project/a"])
		wantKind(t, err, vp.KindNotFound, "memoryId")
	})
}

func TestListMemoriesPagination(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		var want []string
		for i := 0; i < 45; i++ {
			want = append(want, e.store(alice, "project/big", "fact", fmt.Sprintf("fact number %d", i)))
			e.store(alice, "project/other", "fact", "noise")
		}
		checkListContract(t, want, func(p listing.Params) (listing.Page[any], error) {
			return e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "project/big", Params: p})
		})
		checkListContract(t, want, func(p listing.Params) (listing.Page[any], error) {
			return e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "project/big", Type: "fact", IncludeSuperseded: true, Params: p})
		})
		// Newest first.
		page, _ := e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "project/big", Params: listing.Params{Limit: intp(2)}})
		if idOf(t, page.Items[0]) != want[44] || idOf(t, page.Items[1]) != want[43] {
			t.Fatal("list_memories is not newest first")
		}
		// A cursor is bound to its filters.
		_, err := e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "project/other", Params: listing.Params{Cursor: page.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
	})
}

func TestBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		big := strings.Repeat("a", vp.MaxMemoryContentBytes+1)
		cases := []struct {
			name  string
			in    memory.StoreInput
			kind  vp.Kind
			field string
		}{
			{"empty content", memory.StoreInput{Namespace: "g", Type: "note", Content: "  "}, vp.KindInvalid, "content"},
			{"oversize content", memory.StoreInput{Namespace: "g", Type: "note", Content: big}, vp.KindTooLarge, "100000"},
			{"unknown type", memory.StoreInput{Namespace: "g", Type: "gossip", Content: "x"}, vp.KindInvalid, "fact, decision, feedback"},
			{"missing type", memory.StoreInput{Namespace: "g", Content: "x"}, vp.KindInvalid, "type"},
			{"missing namespace", memory.StoreInput{Type: "note", Content: "x"}, vp.KindInvalid, "namespace"},
			{"bad namespace", memory.StoreInput{Namespace: "a#b", Type: "note", Content: "x"}, vp.KindInvalid, "namespace"},
			{"invalid ttl", memory.StoreInput{Namespace: "g", Type: "note", Content: "x", TTL: "soon"}, vp.KindInvalid, "ttl"},
			{"episode on a note", memory.StoreInput{Namespace: "g", Type: "note", Content: "x", Episode: &vp.Episode{}}, vp.KindInvalid, "episode"},
			{"bad severity", memory.StoreInput{Namespace: "g", Type: "episode", Content: "x", Episode: &vp.Episode{Context: "c", Goal: "g", Action: "a", Outcome: "o", Insight: "i", Severity: "5"}}, vp.KindInvalid, "severity"},
			{"too many relations", memory.StoreInput{Namespace: "g", Type: "note", Content: "x", Relations: make([]vp.Relation, 21)}, vp.KindTooLarge, "relations"},
			{"invalid utf-8", memory.StoreInput{Namespace: "g", Type: "note", Content: "\xff"}, vp.KindInvalid, "content"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := e.svc.StoreMemory(ctx(), alice, c.in)
				wantKind(t, err, c.kind, c.field)
			})
		}
		// Escaping cannot push a legal content over the item limit unnoticed.
		_, err := e.svc.StoreMemory(ctx(), alice, memory.StoreInput{Namespace: "g", Type: "note", Content: strings.Repeat("\x01", vp.MaxMemoryContentBytes)})
		wantKind(t, err, vp.KindTooLarge, "content")
		for name, fn := range map[string]func(context.Context, vp.Principal, memory.SearchInput) (memory.SearchResult, error){
			"text_search": e.svc.TextSearch, "recall": e.svc.Recall, "hybrid_search": e.svc.HybridSearch,
			"search_episodes_by_keyword": e.svc.SearchEpisodesByKeyword, "search_episodes_by_semantic": e.svc.SearchEpisodesBySemantic,
		} {
			_, err := fn(ctx(), alice, memory.SearchInput{Query: " "})
			wantKind(t, err, vp.KindInvalid, "query")
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("error %q does not name the tool", err)
			}
		}
		for name, fn := range map[string]func(context.Context, vp.Principal, memory.SearchInput) (memory.SearchResult, error){
			"text_search": e.svc.TextSearch, "recall": e.svc.Recall, "hybrid_search": e.svc.HybridSearch,
		} {
			_, err = fn(ctx(), alice, memory.SearchInput{Query: "?!"})
			wantKind(t, err, vp.KindInvalid, "query")
			if !strings.Contains(err.Error(), name) {
				t.Fatalf("error %q does not name the tool", err)
			}
		}
		_, err = e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "g", Type: "gossip"})
		wantKind(t, err, vp.KindInvalid, "type")
		// Nothing was written by any of it.
		page, _ := e.svc.ListMemories(ctx(), alice, memory.ListInput{Namespace: "g", IncludeSuperseded: true})
		if len(page.Items) != 0 {
			t.Fatalf("refused writes left %d rows", len(page.Items))
		}
		if n, _ := e.processOnce(); n != 0 {
			t.Fatalf("refused writes enqueued %d jobs", n)
		}
		// Every memory type of both seed lists is accepted, and limits clamp.
		for _, typ := range vp.MemoryTypes {
			e.store(alice, "types", typ, "sample of type "+typ)
		}
		res, err := e.svc.TextSearch(ctx(), alice, memory.SearchInput{Query: "sample", Limit: 1000})
		if err != nil || res.Count > vp.MaxSearchLimit {
			t.Fatalf("limit 1000: %d %v", res.Count, err)
		}
	})
}
