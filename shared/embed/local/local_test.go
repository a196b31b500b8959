package local_test

import (
	"context"
	"math"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/embed/local"
)

func cos(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func TestEmbedder(t *testing.T) {
	e := local.New(local.Options{})
	if e.Name() != "local-hash-v1/384" || e.Dim() != 384 {
		t.Fatalf("name %s dim %d", e.Name(), e.Dim())
	}
	if got := local.New(local.Options{Dim: 64}).Name(); got != "local-hash-v1/64" {
		t.Errorf("name with dim 64: %s", got)
	}
	texts := []string{
		"The staging deployment failed because the database migration timed out.",
		"Deploying to staging fails: the DB migrations time out.",
		"We had pizza for lunch in the park.",
		"",
		"?!",
	}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs[:3] {
		if len(v) != 384 {
			t.Fatalf("vector %d has %d dims", i, len(v))
		}
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Errorf("vector %d norm² = %v, want 1", i, n)
		}
	}
	for _, i := range []int{3, 4} {
		for _, x := range vs[i] {
			if x != 0 {
				t.Fatalf("text %q: want the zero vector", texts[i])
			}
		}
	}
	related, unrelated := cos(vs[0], vs[1]), cos(vs[0], vs[2])
	if related <= unrelated+0.2 {
		t.Errorf("cos(related) = %.3f, cos(unrelated) = %.3f: want related clearly above", related, unrelated)
	}
	// Deterministic across calls and instances.
	again, _ := local.New(local.Options{}).Embed(context.Background(), texts[:1])
	for i := range again[0] {
		if again[0][i] != vs[0][i] {
			t.Fatal("same text, different vector")
		}
	}
	// Case, accents and inflection barely matter.
	a, _ := e.Embed(context.Background(), []string{"Café deployments FAILED"})
	b, _ := e.Embed(context.Background(), []string{"cafe deployment failed"})
	if c := cos(a[0], b[0]); c < 0.8 {
		t.Errorf("cos of inflected variants = %.3f, want ≥ 0.8", c)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, texts); err == nil {
		t.Error("cancelled context: want an error")
	}
	if w := embed.FusionWeight(e); w <= 0 || w >= 1 {
		t.Errorf("FusionWeight = %v", w)
	}
}

// TestGolden pins the vectors of version local-hash-v1: a change to the
// features or weights must change Version, since stored vectors would no
// longer be comparable with new ones.
func TestGolden(t *testing.T) {
	v := local.New(local.Options{Dim: 16}).Vector("Vectors must stay comparable across releases")
	var sum, wsum float64
	for i, x := range v {
		sum += float64(x)
		wsum += float64(i+1) * float64(x)
	}
	t.Logf("golden: sum=%.6f wsum=%.6f", sum, wsum)
	if math.Abs(sum-goldenSum) > 1e-5 || math.Abs(wsum-goldenWSum) > 1e-5 {
		t.Errorf("local-hash-v1 changed: sum=%.6f wsum=%.6f, want %.6f %.6f (bump Version if intended)", sum, wsum, goldenSum, goldenWSum)
	}
}

const goldenSum, goldenWSum = 0.994497, 9.852997

func BenchmarkEmbed(b *testing.B) {
	e := local.New(local.Options{})
	text := "Caroline: I went to a LGBTQ support group yesterday and it was so powerful. The stories were inspiring."
	for b.Loop() {
		e.Vector(text)
	}
}
