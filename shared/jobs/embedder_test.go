package jobs_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// countingEmbedder counts how often each text is embedded and how many
// embeddings of one text run at the same time.
type countingEmbedder struct {
	embed.Embedder
	mu       sync.Mutex
	count    map[string]int
	inflight map[string]int
	overlap  atomic.Int32
	fail     atomic.Bool
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.mu.Lock()
	for _, t := range texts {
		c.count[t]++
		c.inflight[t]++
		if c.inflight[t] > 1 {
			c.overlap.Add(1)
		}
	}
	c.mu.Unlock()
	time.Sleep(2 * time.Millisecond) // widen the window for a second worker
	defer func() {
		c.mu.Lock()
		for _, t := range texts {
			c.inflight[t]--
		}
		c.mu.Unlock()
	}()
	if c.fail.Load() {
		return nil, errors.New("embedder down")
	}
	return c.Embedder.Embed(ctx, texts)
}

type wired struct {
	svc *memory.Service
	q   *storequeue.Queue
	emb *countingEmbedder
}

func wire(t *testing.T, st store.Store, qo storequeue.Options) wired {
	t.Helper()
	idx, err := searchlocal.Open(context.Background(), searchlocal.Options{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, _ := listing.NewSigner(key)
	qo.Store = st
	q := storequeue.New(qo)
	emb := &countingEmbedder{Embedder: embedlocal.New(embedlocal.Options{}), count: map[string]int{}, inflight: map[string]int{}}
	svc := memory.New(memory.Options{Store: st, Index: idx, Embedder: emb, Queue: q, Cursors: signer})
	return wired{svc: svc, q: q, emb: emb}
}

func openSQLite(t *testing.T) store.Store {
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "vantagepeers.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

var alice = vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}

// TestSemanticSearchabilityLatency measures, in embedded mode (SQLite with
// durable writes, local index, in-process queue and worker), the time from
// store_memory returning to recall finding the memory.
func TestSemanticSearchabilityLatency(t *testing.T) {
	w := wire(t, openSQLite(t), storequeue.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		jobs.RunEmbedder(ctx, jobs.EmbedderOptions{Queue: w.q, Memory: w.svc}, 100*time.Millisecond)
	}()
	defer func() { cancel(); <-done }()
	const n = 30
	lat := make([]time.Duration, n)
	for i := 0; i < n; i++ {
		content := fmt.Sprintf("Runbook %d: restart the ingestion worker %d when the lag alarm fires", i, i)
		r, err := w.svc.StoreMemory(ctx, alice, memory.StoreInput{Namespace: "ops", Type: "procedure", Content: content})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		for {
			res, err := w.svc.Recall(ctx, alice, memory.SearchInput{Query: content, Namespace: "ops", Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if res.Count == 1 && res.Results[0].ID == r.MemoryID {
				break
			}
			if time.Since(start) > 5*time.Second {
				t.Fatalf("memory %d not semantically searchable after 5s", i)
			}
			time.Sleep(500 * time.Microsecond)
		}
		lat[i] = time.Since(start)
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("time from store_memory returning to recall finding it (embedded mode): p50 %v, max %v", lat[n/2], lat[n-1])
	if lat[n-1] > time.Second {
		t.Fatalf("semantic searchability took %v, want within 1s", lat[n-1])
	}
}

// TestWorkersNeverProcessTheSameJob runs four workers over one queue: every
// memory is embedded exactly once and no text is embedded by two workers
// at the same time.
func TestWorkersNeverProcessTheSameJob(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(t *testing.T) store.Store
	}{
		{"sqlite", openSQLite},
		{"dynamodb", func(t *testing.T) store.Store { return dynamotest.NewStore(t, nil) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			if b.name == "dynamodb" && testing.Short() {
				t.Skip("-short: SQLite only")
			}
			began := time.Now()
			w := wire(t, b.open(t), storequeue.Options{})
			t.Logf("store ready in %v", time.Since(began))
			const n = 120
			var stored []string
			for i := 0; i < n; i++ {
				r, err := w.svc.StoreMemory(context.Background(), alice, memory.StoreInput{Namespace: "ops", Type: "fact", Content: fmt.Sprintf("fact %03d", i)})
				if err != nil {
					t.Fatal(err)
				}
				stored = append(stored, r.MemoryID)
			}
			t.Logf("%d memories stored in %v", n, time.Since(began))
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for k := 0; k < 4; k++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					jobs.RunEmbedder(ctx, jobs.EmbedderOptions{Queue: w.q, Memory: w.svc, Batch: 8}, 10*time.Millisecond)
				}()
			}
			deadline := time.Now().Add(time.Minute)
			for _, id := range stored {
				for {
					m, err := w.svc.GetMemory(context.Background(), alice, id)
					if err != nil {
						t.Fatal(err)
					}
					if m.Embedder != "" {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("memory %s not embedded within a minute", id)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			t.Logf("all embedded at %v", time.Since(began))
			cancel()
			wg.Wait()
			w.emb.mu.Lock()
			defer w.emb.mu.Unlock()
			if len(w.emb.count) != n {
				t.Fatalf("%d distinct texts embedded, want %d", len(w.emb.count), n)
			}
			for text, k := range w.emb.count {
				if k != 1 {
					t.Fatalf("%q embedded %d times", text, k)
				}
			}
			if o := w.emb.overlap.Load(); o != 0 {
				t.Fatalf("%d texts embedded by two workers at once", o)
			}
		})
	}
}

// TestEmbedFailuresRetryThenDeadLetter drives failures through
// ProcessEmbedJobs: the job is failed with backoff, then dead-lettered, and
// the memory stays.
func TestEmbedFailuresRetryThenDeadLetter(t *testing.T) {
	w := wire(t, openSQLite(t), storequeue.Options{MaxAttempts: 2, Backoff: time.Millisecond, MaxBackoff: time.Millisecond})
	w.emb.fail.Store(true)
	r, err := w.svc.StoreMemory(context.Background(), alice, memory.StoreInput{Namespace: "ops", Type: "fact", Content: "kept no matter what"})
	if err != nil {
		t.Fatal(err)
	}
	o := jobs.EmbedderOptions{Queue: w.q, Memory: w.svc}
	for i := 0; i < 2; i++ {
		n, err := jobs.ProcessEmbedJobs(context.Background(), o)
		if err != nil || n != 1 {
			t.Fatalf("delivery %d: %d jobs, %v", i+1, n, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n, _ := jobs.ProcessEmbedJobs(context.Background(), o); n != 0 {
		t.Fatalf("a dead-lettered job was delivered again (%d)", n)
	}
	dead, err := w.q.DeadLetters(context.Background(), 10)
	if err != nil || len(dead) != 1 || dead[0].LastError != "embedder down" {
		t.Fatalf("dead letters %+v %v", dead, err)
	}
	if m, err := w.svc.GetMemory(context.Background(), alice, r.MemoryID); err != nil || !m.IsLatest {
		t.Fatalf("memory after dead-lettering: %+v %v", m, err)
	}
	if _, err := jobs.ProcessEmbedJobs(context.Background(), jobs.EmbedderOptions{}); err == nil {
		t.Fatal("ProcessEmbedJobs without a queue did not fail")
	}
}
