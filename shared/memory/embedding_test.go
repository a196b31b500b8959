package memory_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// flaky is an embedder that fails while fail is set.
type flaky struct {
	embed.Embedder
	fail  atomic.Bool
	calls atomic.Int64
}

func (f *flaky) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.calls.Add(1)
	if f.fail.Load() {
		return nil, errors.New("embedding endpoint unavailable (429)")
	}
	return f.Embedder.Embed(ctx, texts)
}

func TestEmbedFailuresDeadLetterWithoutLosingTheMemory(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := &clock{}
		emb := &flaky{Embedder: embedlocal.New(embedlocal.Options{})}
		emb.fail.Store(true)
		e := newEnv(t, b.Open(t, c.Now), c, emb, storequeue.Options{MaxAttempts: 3, Backoff: time.Second})
		alice := as("acme", "alice")
		id := e.store(alice, "global", "fact", "The billing database is backed up nightly at 02:00 UTC.")
		failures := 0
		for i := 0; i < 10; i++ {
			failures += e.drain()
			c.Advance(time.Minute) // past any backoff
		}
		if failures != 3 {
			t.Fatalf("%d failed deliveries, want 3 (MaxAttempts)", failures)
		}
		dead, err := e.q.DeadLetters(ctx(), 10)
		if err != nil || len(dead) == 0 {
			t.Fatalf("dead letters %+v %v", dead, err)
		}
		var embedJob *storequeue.DeadJob
		for i := range dead {
			if dead[i].Kind == memory.JobEmbed {
				embedJob = &dead[i]
			}
		}
		if embedJob == nil || embedJob.LastError == "" || embedJob.Attempts != 3 {
			t.Fatalf("dead letters %+v", dead)
		}
		// The memory is intact and found by keyword; only its vector is
		// missing. With the embedder down, hybrid search degrades to
		// BM25 and recall reports the failure.
		m, err := e.svc.GetMemory(ctx(), alice, id)
		if err != nil || !m.IsLatest || m.Embedder != "" {
			t.Fatalf("memory after dead-lettering: %+v %v", m, err)
		}
		for _, fn := range []func(context.Context, vp.Principal, memory.SearchInput) (memory.SearchResult, error){e.svc.TextSearch, e.svc.HybridSearch} {
			if r, err := fn(ctx(), alice, memory.SearchInput{Query: "billing database backup"}); err != nil || !slices.Equal(ids(r), []string{id}) {
				t.Fatalf("keyword side after dead-lettering: %v %v", ids(r), err)
			}
		}
		_, err = e.svc.Recall(ctx(), alice, memory.SearchInput{Query: "billing database backup"})
		wantKind(t, err, vp.KindInternal, "")
		// Once the embedder is back, a redrive completes the job.
		emb.fail.Store(false)
		if got := e.searches(alice, "", "billing database backup"); len(got["recall"]) != 0 {
			t.Fatalf("recall before the redrive: %v", got)
		}
		for _, d := range dead {
			if err := e.q.Redrive(ctx(), d.Job); err != nil {
				t.Fatal(err)
			}
		}
		if f := e.drain(); f != 0 {
			t.Fatalf("%d failures after recovery", f)
		}
		if got := e.searches(alice, "", "billing database backup"); !slices.Contains(got["recall"], id) {
			t.Fatalf("recall after redrive: %v", got)
		}
	})
}

func TestEmbedderChangeReembeds(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		var mems []string
		for i := 0; i < 30; i++ {
			mems = append(mems, e.store(alice, "global", "fact", fmt.Sprintf("Service %d listens on port %d", i, 8000+i)))
		}
		fix, err := e.svc.CreateFixPattern(ctx(), alice, fixInput("Port already in use at startup", "p"))
		if err != nil {
			t.Fatal(err)
		}
		e.drain()
		first := e.emb.Name()
		// Restart with another embedder: old vectors are never compared with
		// new ones, so recall finds nothing until the re-embedding ran.
		e.rewire(embedlocal.New(embedlocal.Options{Dim: 256}), storequeue.Options{})
		second := e.emb.Name()
		if first == second {
			t.Fatal("the embedders share a name")
		}
		if r, _ := e.svc.Recall(ctx(), alice, memory.SearchInput{Query: "which port does service 7 listen on"}); r.Count != 0 {
			t.Fatalf("recall mixed vectors of two embedders: %v", ids(r))
		}
		// That first vector search noticed the change and enqueued the
		// re-embedding (the first embed job would have, too).
		e.drain()
		if m, _ := e.svc.GetMemory(ctx(), alice, mems[0]); m.Embedder != second {
			t.Fatalf("after a vector search and a drain, memory embedded by %q", m.Embedder)
		}
		newer := e.store(alice, "global", "fact", "Service 99 listens on port 9999")
		e.drain()
		for _, id := range append(mems, newer) {
			if m, _ := e.svc.GetMemory(ctx(), alice, id); m.Embedder != second {
				t.Fatalf("memory %s embedded by %q, want %q", id, m.Embedder, second)
			}
		}
		if f, _ := e.svc.GetFixPattern(ctx(), alice, fix.PatternID); f.Embedder != second {
			t.Fatalf("fix pattern embedded by %q", f.Embedder)
		}
		r, err := e.svc.Recall(ctx(), alice, memory.SearchInput{Query: "Service 7 listens on port 8007", Limit: 3})
		if err != nil || r.Count == 0 || r.Results[0].ID != mems[7] {
			t.Fatalf("recall after re-embedding: %v %v", ids(r), err)
		}
		if n, err := e.svc.ReembedAll(ctx(), "acme"); err != nil || n != 0 {
			t.Fatalf("ReembedAll after re-embedding enqueued %d (%v), want 0", n, err)
		}
	})
}

// TestEmbedJobsAreIdempotent: a job delivered twice, or for a memory deleted
// or superseded meanwhile, does no harm.
func TestEmbedJobsAreIdempotent(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		alice := as("acme", "alice")
		gone := e.store(alice, "global", "note", "a note deleted before its vector exists")
		if _, err := e.svc.SoftDeleteMemory(ctx(), alice, gone); err != nil {
			t.Fatal(err)
		}
		kept := e.store(alice, "global", "note", "a note embedded twice")
		if f := e.drain(); f != 0 {
			t.Fatalf("%d failures", f)
		}
		if n, _ := e.svc.ReembedAll(ctx(), "acme"); n != 0 {
			t.Fatalf("%d jobs re-enqueued for embedded memories", n)
		}
		if m, _ := e.svc.GetMemory(ctx(), alice, gone); m.Embedder != "" || m.DeletedAt == 0 {
			t.Fatalf("deleted memory was embedded: %+v", m)
		}
		r, _ := e.svc.Recall(ctx(), alice, memory.SearchInput{Query: "a note deleted before its vector exists"})
		if slices.Contains(ids(r), gone) || !slices.Contains(ids(r), kept) {
			t.Fatalf("recall %v", ids(r))
		}
		// Malformed jobs are dropped (acked), not retried forever.
		errs := e.svc.EmbedJobs(ctx(), nil)
		if len(errs) != 0 {
			t.Fatal(errs)
		}
	})
}

// BenchmarkStoreMemory: store_memory in process on the embedded store
// (SQLite on disk) with the local index and the durable queue; embedding
// is excluded (no worker runs). SQLite's synchronous=FULL (the store's
// default) pays an fsync per write; NORMAL survives a process crash but
// not a power cut. It reports p50 and p95 beside ns/op (go test
// ./shared/memory -run - -bench StoreMemory).
func BenchmarkStoreMemory(b *testing.B) {
	for _, sync := range []string{"FULL", "NORMAL"} {
		b.Run("synchronous="+sync, func(b *testing.B) {
			c := &clock{}
			st, err := sqlite.Open(ctx(), sqlite.Options{Path: filepath.Join(b.TempDir(), "vp.db"), Now: c.Now, Synchronous: sync})
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			e := newEnv(b, st, c, nil, storequeue.Options{})
			alice := as("acme", "alice")
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				e.store(alice, fmt.Sprint("project/p", i%7), "fact", fmt.Sprintf("Fact %d: the deploy pipeline of service %d runs nightly and pages the on-call engineer on failure.", i, i%50))
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
		})
	}
}

// TestListMemoriesNeverEmpty guards the seed's historical bug (2.5.0-2.13.0
// returned items: [] for every list_memories and list_episodes call).
func TestListMemoriesNeverEmpty(t *testing.T) {
	c := &clock{}
	e := newEnv(t, teststores.All[0].Open(t, c.Now), c, nil, storequeue.Options{})
	p := as("acme", "alice")
	e.store(p, "global", "fact", "one")
	if _, err := e.svc.StoreEpisode(ctx(), p, episode("global", "", "lesson", "minor")); err != nil {
		t.Fatal(err)
	}
	m, _ := e.svc.ListMemories(ctx(), p, memory.ListInput{Namespace: "global"})
	ep, _ := e.svc.ListEpisodes(ctx(), p, memory.ListEpisodesInput{})
	if len(m.Items) != 2 || len(ep.Items) != 1 {
		t.Fatalf("list_memories %d items, list_episodes %d items", len(m.Items), len(ep.Items))
	}
}
