package local

import (
	"math"
	"math/rand/v2"
	"testing"

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
