package local

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/search"
)

func naiveDot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 384, 1024, 1536, 3072} {
		a, b := make([]float32, n), make([]float32, n)
		for i := range a {
			a[i], b[i] = r.Float32()*2-1, r.Float32()*2-1
		}
		if got, want := float64(dot(a, b)), naiveDot(a, b); math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
			t.Errorf("n=%d: dot = %v, want %v", n, got, want)
		}
	}
}

func TestDotI8(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 3, 15, 16, 17, 31, 63, 64, 65, 100, 384, 1024, 1536, 3072, maxDimInt8} {
		q, c := make([]int16, n), make([]int8, n)
		var want int64
		for i := range q {
			q[i], c[i] = int16(r.IntN(2*queryLevels+1)-queryLevels), int8(r.IntN(255)-127)
			want += int64(q[i]) * int64(c[i])
		}
		// The extremes too: the largest products must not overflow.
		if n == maxDimInt8 {
			want = 0
			for i := range q {
				q[i], c[i] = queryLevels, -127
				want += int64(q[i]) * int64(c[i])
			}
		}
		if got := dotI8(q, c); int64(got) != want {
			t.Errorf("n=%d: dotI8 = %d, want %d", n, got, want)
		}
		if got := dotI8Generic(q, c); int64(got) != want {
			t.Errorf("n=%d: dotI8Generic = %d, want %d", n, got, want)
		}
	}
}

func BenchmarkDotI8x384x100k(b *testing.B) {
	const n, dim = 100_000, 384
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]int8, n*dim)
	for i := range data {
		data[i] = int8(r.IntN(255) - 127)
	}
	q := make([]int16, dim)
	for i := range q {
		q[i] = int16(r.IntN(2*queryLevels+1) - queryLevels)
	}
	var sink int32
	for b.Loop() {
		for i := 0; i < n; i++ {
			sink += dotI8(q, data[i*dim:(i+1)*dim])
		}
	}
	_ = sink
}

func BenchmarkDot384x100k(b *testing.B) {
	const n, dim = 100_000, 384
	r := rand.New(rand.NewPCG(1, 2))
	data := make([]float32, n*dim)
	for i := range data {
		data[i] = r.Float32()
	}
	q := data[:dim]
	var sink float32
	for b.Loop() {
		for i := 0; i < n; i++ {
			sink += dot(q, data[i*dim:(i+1)*dim])
		}
	}
	_ = sink
}

// TestParallelScan: the split scan returns what one pass returns.
func TestParallelScan(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const n, dim = 3 * parallelRows, 8
	s := &vectorSet{dim: dim, slot: map[string]int{}}
	for i := 0; i < n; i++ {
		v := make([]float32, dim)
		for j := range v {
			v[j] = r.Float32()*2 - 1
		}
		kind := "memory"
		if i%3 == 0 {
			kind = "episode"
		}
		s.put(rowMeta{id: string(rune('a'+i%26)) + string(rune(i)), kind: kind}, normalised(v))
	}
	q := normalised([]float32{1, -1, 0.5, 0, 0, 0.25, 0, 1})
	m := s.mask(search.Filter{Tenant: "t", Kinds: []string{"memory"}})
	for _, k := range []int{1, 10, 100} {
		want := s.scanRange(q, m, k, 0, n).sorted(func(a, b int) bool { return a < b })
		got := s.scan(q, m, k).sorted(func(a, b int) bool { return a < b })
		for _, e := range got {
			if s.meta[e.row].kind != "memory" {
				t.Fatalf("row of kind %s passed the filter", s.meta[e.row].kind)
			}
		}
		if len(got) != len(want) {
			t.Fatalf("k=%d: %d rows, want %d", k, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("k=%d: row %d = %v, want %v", k, i, got[i], want[i])
			}
		}
	}
}

// TestQuantisedRecall: on 12,000 lexical vectors of the offline embedder
// (texts of Zipf-distributed words), the int8 scan with exact rescoring
// returns at least 99% of the exact top 10 and top 50, with and without a
// filter, and its scores are the exact ones.
func TestQuantisedRecall(t *testing.T) {
	if testing.Short() {
		t.Skip("embeds 12,000 texts")
	}
	r := rand.New(rand.NewPCG(7, 8))
	vocab := make([]string, 5000)
	for i := range vocab {
		b := make([]byte, 3+r.IntN(7))
		for j := range b {
			b[j] = byte('a' + r.IntN(26))
		}
		vocab[i] = string(b)
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	text := func(n int) string {
		w := make([]string, n)
		for i := range w {
			w[i] = vocab[zipf.Uint64()]
		}
		return strings.Join(w, " ")
	}
	emb := embedlocal.New(embedlocal.Options{})
	const n = 12_000
	s := &vectorSet{slot: map[string]int{}}
	for i := range n {
		kind := "memory"
		if i%4 == 0 {
			kind = "episode"
		}
		s.put(rowMeta{id: fmt.Sprintf("m%05d", i), kind: kind}, normalised(emb.Vector(text(20+r.IntN(60)))))
	}
	for _, f := range []search.Filter{{Tenant: "t"}, {Tenant: "t", Kinds: []string{"memory"}}} {
		m := s.mask(f)
		for _, k := range []int{10, 50} {
			found, total := 0, 0
			for range 100 {
				q := normalised(emb.Vector(text(3 + r.IntN(6))))
				want := s.split(n, func(from, to int) *topK { return s.scanRange(q, m, k, from, to) })
				got := s.scan(q, m, k)
				exact := map[int]float32{}
				for _, e := range want.h {
					exact[e.row] = e.score
				}
				for _, e := range got.h {
					if want, ok := exact[e.row]; ok {
						found++
						if e.score != want {
							t.Fatalf("row %d scored %v, exact %v", e.row, e.score, want)
						}
					}
				}
				total += len(want.h)
			}
			if rec := float64(found) / float64(total); rec < 0.99 {
				t.Errorf("filter %v, k=%d: recall against the exact scan %.4f, want >= 0.99", f.Kinds, k, rec)
			} else {
				t.Logf("filter %v, k=%d: recall against the exact scan %.4f", f.Kinds, k, rec)
			}
		}
	}
}
