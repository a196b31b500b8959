package local

import (
	"math"
	"math/rand/v2"
	"testing"
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
