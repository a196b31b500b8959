//go:build unix

package local_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/embed/concept"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/local"
)

// corpus is a synthetic memory corpus: words drawn from a Zipf
// distribution over a fixed vocabulary of 30,000 words whose 60 most
// frequent are English stop words (as in natural text), 20 to 80 words a
// document, spread over 8 namespaces; queries are 3 to 8 words drawn the
// same way.
type corpus struct {
	vocab []string
	zipf  *rand.Zipf
	rng   *rand.Rand
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, 1))
	stop := strings.Fields("the of and to a in is it you that he was for on are with as i his they be at one have this from or had by but what some we can out other were all there when up use your how said an each she which do their if will way about many then them would")
	vocab := make([]string, 30000)
	copy(vocab, stop)
	for i := len(stop); i < len(vocab); i++ {
		var b strings.Builder
		n := 3 + rng.IntN(8)
		for j := 0; j < n; j++ {
			b.WriteByte(byte('a' + rng.IntN(26)))
		}
		vocab[i] = b.String()
	}
	return &corpus{vocab: vocab, zipf: rand.NewZipf(rng, 1.1, 2, uint64(len(vocab)-1)), rng: rng}
}

func (c *corpus) words(n int) string {
	w := make([]string, n)
	for i := range w {
		w[i] = c.vocab[c.zipf.Uint64()]
	}
	return strings.Join(w, " ")
}

type fixture struct {
	x       *local.Index
	emb     embed.Embedder
	queries []string
	vecs    []search.Vector
}

var fixtures = map[string]*fixture{}

// build indexes n documents with emb's vectors (the hash embedder if nil).
func build(b testing.TB, n int, emb embed.Embedder) *fixture {
	if emb == nil {
		emb = embedlocal.New(embedlocal.Options{})
	}
	key := fmt.Sprintf("%d %s", n, emb.Name())
	if f, ok := fixtures[key]; ok {
		return f
	}
	ctx := context.Background()
	dir := b.TempDir()
	x, err := local.Open(ctx, local.Options{Path: filepath.Join(dir, "bench.db")})
	if err != nil {
		b.Fatal(err)
	}
	c := newCorpus(uint64(n))
	start := time.Now()
	const batch = 1000
	for i := 0; i < n; i += batch {
		var docs []search.Doc
		for j := i; j < min(i+batch, n); j++ {
			docs = append(docs, search.Doc{Tenant: "t", ID: fmt.Sprintf("m%07d", j), Kind: "memory",
				Namespace: fmt.Sprintf("ns/%d", j%8), Type: "note", Text: c.words(20 + c.rng.IntN(60))})
		}
		if err := x.Upsert(ctx, docs...); err != nil {
			b.Fatal(err)
		}
		texts := make([]string, len(docs))
		for j, d := range docs {
			texts[j] = d.Text
		}
		vs, _ := emb.Embed(ctx, texts)
		for j, d := range docs {
			if err := x.SetVector(ctx, "t", d.ID, search.Vector{Embedder: emb.Name(), Values: vs[j]}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("indexed %d documents in %v", n, time.Since(start))
	f := &fixture{x: x, emb: emb}
	for i := 0; i < 200; i++ {
		q := c.words(3 + c.rng.IntN(6))
		f.queries = append(f.queries, q)
		vs, _ := emb.Embed(ctx, []string{q})
		f.vecs = append(f.vecs, search.Vector{Embedder: emb.Name(), Values: vs[0]})
	}
	fixtures[key] = f
	return f
}

// report adds p50 and p95 of the per-operation wall-clock and CPU times
// (CPU time of the process: robust to other load on the machine).
func report(b *testing.B, lat, cpu []time.Duration) {
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"", lat}, {"cpu-", cpu}} {
		d := m.d
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		p := func(q float64) float64 {
			return float64(d[int(math.Min(float64(len(d)-1), q*float64(len(d))))].Microseconds()) / 1000
		}
		b.ReportMetric(p(0.50), m.name+"p50-ms")
		b.ReportMetric(p(0.95), m.name+"p95-ms")
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func benchSearch(b *testing.B, n int, emb embed.Embedder) {
	f := build(b, n, emb)
	ctx := context.Background()
	filter := search.Filter{Tenant: "t", Kinds: []string{"memory"}, Namespaces: []string{"*"}, NowMS: 1}
	nsFilter := search.Filter{Tenant: "t", Kinds: []string{"memory"}, Namespaces: []string{"ns/3"}, NowMS: 1}
	// Load the in-memory indexes before timing (the first query of a
	// tenant builds them from the file).
	if _, err := f.x.Text(ctx, f.queries[0], filter, 10); err != nil {
		b.Fatal(err)
	}
	if _, err := f.x.Vector(ctx, f.vecs[0], filter, 10); err != nil {
		b.Fatal(err)
	}
	// The heap once the indexes are loaded: text and vectors of n
	// documents (and what the fixtures of earlier benchmarks of this run
	// hold: run one benchmark at a time to read it).
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	heapMB := float64(ms.HeapAlloc) / (1 << 20)
	recall := map[string]float64{
		"vector":    recallVsExact(b, f, filter),
		"vector-ns": recallVsExact(b, f, nsFilter),
	}
	for _, mode := range []string{"text", "vector", "hybrid", "hybrid-embed", "vector-ns"} {
		b.Run(mode, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			cpu := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				q, v := f.queries[i%len(f.queries)], f.vecs[i%len(f.vecs)]
				start, cstart := time.Now(), cpuTime()
				var err error
				switch mode {
				case "text":
					_, err = f.x.Text(ctx, q, filter, 10)
				case "vector":
					_, err = f.x.Vector(ctx, v, filter, 10)
				case "vector-ns":
					_, err = f.x.Vector(ctx, v, nsFilter, 10)
				case "hybrid":
					_, err = search.Hybrid(ctx, f.x, q, &v, filter, 10, search.HybridOptions{VectorWeight: embed.FusionWeight(f.emb)})
				case "hybrid-embed": // what hybrid_search does: the query embedded, then both rankings fused
					var vs [][]float32
					if vs, err = f.emb.Embed(ctx, []string{q}); err == nil {
						qv := search.Vector{Embedder: f.emb.Name(), Values: vs[0]}
						_, err = search.Hybrid(ctx, f.x, q, &qv, filter, 10, search.HybridOptions{VectorWeight: embed.FusionWeight(f.emb)})
					}
				}
				lat = append(lat, time.Since(start))
				cpu = append(cpu, cpuTime()-cstart)
				if err != nil {
					b.Fatal(err)
				}
			}
			report(b, lat, cpu)
			b.ReportMetric(heapMB, "heap-MB")
			if r, ok := recall[mode]; ok {
				b.ReportMetric(r, "recall-vs-exact")
			}
		})
	}
}

// recallVsExact is the share of the exact top 10 (every float32 row
// scanned) that Vector returns, over the fixture's queries.
func recallVsExact(tb testing.TB, f *fixture, filter search.Filter) float64 {
	ctx := context.Background()
	found, total := 0, 0
	for _, v := range f.vecs {
		got, err := f.x.Vector(ctx, v, filter, 10)
		if err != nil {
			tb.Fatal(err)
		}
		want, err := local.VectorExact(ctx, f.x, v, filter, 10)
		if err != nil {
			tb.Fatal(err)
		}
		in := map[string]bool{}
		for _, h := range got {
			in[h.ID] = true
		}
		for _, h := range want {
			total++
			if in[h.ID] {
				found++
			}
		}
	}
	if total == 0 {
		return 1
	}
	return float64(found) / float64(total)
}

func BenchmarkSearch2k(b *testing.B)   { benchSearch(b, 2_000, nil) }
func BenchmarkSearch100k(b *testing.B) { benchSearch(b, 100_000, nil) }

// BenchmarkSearch100kConcept: the same with the embedded server's default
// embedder (embed/concept), whose query embedding hybrid-embed includes.
func BenchmarkSearch100kConcept(b *testing.B) {
	benchSearch(b, 100_000, concept.New(concept.Options{}))
}

// BenchmarkSearch100kConcept1024: the concept embedder at 1024 dimensions,
// where vector search alone reaches session recall@5 0.806 on the LoCoMo
// dev set (0.737 at 384), for its memory and latency cost.
func BenchmarkSearch100kConcept1024(b *testing.B) {
	benchSearch(b, 100_000, concept.New(concept.Options{Dim: 1024}))
}
