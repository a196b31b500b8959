package concept_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/embed/concept"
	"github.com/vantagepeers/vantagepeers/shared/embed/concept/internal/wnbuild"
	"github.com/vantagepeers/vantagepeers/shared/embed/local"
)

func cos(a, b []float32) float64 {
	var d float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
	}
	return d
}

func TestLemmas(t *testing.T) {
	for _, c := range []struct{ word, want string }{
		{"mice", "mouse"},             // noun exception list
		{"looked", "look"},            // verb rule -ed
		{"better", "good"},            // adjective exception list
		{"went", "go"},                // verb exception list
		{"children", "child"},         // noun exception list
		{"agencies", "agency"},        // noun rule -ies
		{"researching", "research"},   // verb rule -ing
		{"boxes", "box"},              // noun rule -xes
		{"looking_into", "look_into"}, // a multi-word expression, lemmatized on its first word
	} {
		got, err := concept.Lemmas(c.word)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(got, c.want) {
			t.Errorf("Lemmas(%q) = %v, want %q among them", c.word, got, c.want)
		}
	}
	// "glass" is not the plural of "glas", and an unknown word has none.
	if got, _ := concept.Lemmas("glass"); !slices.Equal(got, []string{"glass"}) {
		t.Errorf("Lemmas(glass) = %v", got)
	}
	if got, _ := concept.Lemmas("zzqxv"); len(got) != 0 {
		t.Errorf("Lemmas(zzqxv) = %v, want none", got)
	}
}

func vec(t *testing.T, e embed.Embedder, text string) []float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return vs[0]
}

// TestParaphrase: texts that say the same with other words are closer
// than unrelated texts, where the hash embedder sees nothing in common.
func TestParaphrase(t *testing.T) {
	c, h := concept.New(concept.Options{}), local.New(local.Options{})
	for _, p := range []struct{ a, b, other string }{
		{"I purchased an automobile", "She bought a car", "We had pizza in the park"},
		{"The physician examined the kid", "A doctor checked the child", "The train left the station late"},
		{"Caroline researched adoption agencies", "Caroline investigated adoption bureaus", "Caroline painted a sunset at the lake"},
	} {
		para, unrel := cos(vec(t, c, p.a), vec(t, c, p.b)), cos(vec(t, c, p.a), vec(t, c, p.other))
		hpara := cos(vec(t, h, p.a), vec(t, h, p.b))
		t.Logf("%q ~ %q: concept %.3f (unrelated %.3f), hash %.3f", p.a, p.b, para, unrel, hpara)
		if para < unrel+0.1 {
			t.Errorf("%q ~ %q: cos %.3f, unrelated %.3f: want the paraphrase clearly closer", p.a, p.b, para, unrel)
		}
		if para < hpara+0.05 {
			t.Errorf("%q ~ %q: concept cos %.3f not above the hash embedder's %.3f", p.a, p.b, para, hpara)
		}
	}
}

// TestMultiWordExpression: "looked into" is one unit, investigate, not
// "look" (perceive) then "into".
func TestMultiWordExpression(t *testing.T) {
	e := concept.New(concept.Options{})
	ref := vec(t, e, "she investigated the problem")
	into := cos(vec(t, e, "she looked into the problem"), ref)
	at := cos(vec(t, e, "she looked at the problem"), ref)
	t.Logf("looked into ~ investigated %.3f, looked at ~ investigated %.3f", into, at)
	if into < at+0.1 {
		t.Errorf("cos(looked into, investigated) = %.3f, cos(looked at, investigated) = %.3f: want the expression clearly closer", into, at)
	}
}

func TestTypoStillMatches(t *testing.T) {
	e := concept.New(concept.Options{})
	typo := cos(vec(t, e, "dinner at the Italian restaurant"), vec(t, e, "dinner at the Italian restuarant"))
	unrel := cos(vec(t, e, "dinner at the Italian restaurant"), vec(t, e, "a flat tyre on the motorway"))
	if typo < 0.6 || typo < unrel+0.3 {
		t.Errorf("cos with a typo %.3f (unrelated %.3f): want ≥ 0.6 and clearly above", typo, unrel)
	}
}

func TestEmbedder(t *testing.T) {
	e := concept.New(concept.Options{})
	if e.Name() != "local-concept-v1/1024" || e.Dim() != 1024 {
		t.Fatalf("name %s dim %d", e.Name(), e.Dim())
	}
	if got := concept.New(concept.Options{Dim: 64}).Name(); got != "local-concept-v1/64" {
		t.Errorf("name with dim 64: %s", got)
	}
	texts := []string{"The deployment failed twice.", "Mice ran into the kitchen", "", "?! --"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	for i, v := range vs[:2] {
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if len(v) != concept.DefaultDim || math.Abs(n-1) > 1e-4 {
			t.Errorf("vector %d: %d dims, norm² %v", i, len(v), n)
		}
	}
	for _, v := range vs[2:] {
		if slices.ContainsFunc(v, func(x float32) bool { return x != 0 }) {
			t.Error("a text without words: want the zero vector")
		}
	}
	// Deterministic across calls and instances.
	again := concept.New(concept.Options{}).Vector(texts[1])
	if !slices.Equal(again, vs[1]) {
		t.Error("same text, different vector")
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

// TestGolden pins local-concept-v1's vectors: a change to the features,
// the weights or the table must change Version.
func TestGolden(t *testing.T) {
	v := concept.New(concept.Options{Dim: 16}).Vector("Caroline looked into adoption agencies; the mice were better")
	var sum, wsum float64
	for i, x := range v {
		sum += float64(x)
		wsum += float64(i+1) * float64(x)
	}
	t.Logf("golden: sum=%.6f wsum=%.6f", sum, wsum)
	if math.Abs(sum-goldenSum) > 1e-5 || math.Abs(wsum-goldenWSum) > 1e-5 {
		t.Errorf("local-concept-v1 changed: sum=%.6f wsum=%.6f, want %.6f %.6f (bump Version if intended)", sum, wsum, goldenSum, goldenWSum)
	}
}

const goldenSum, goldenWSum = -0.007196, -2.707564

// TestHugeInputBounded: the embedder is linear in its input and its memory
// is bounded by the input's distinct features, so a megabyte of text (four
// times the largest memory) takes a bounded time.
func TestHugeInputBounded(t *testing.T) {
	e := concept.New(concept.Options{})
	e.Vector("warm the table up")
	var b strings.Builder
	words := strings.Fields("look into the picked up mice better went research glass restaurant ab- ‑ 日本語 x1 ice cream")
	for i := 0; b.Len() < 1<<20; i++ {
		b.WriteString(words[i%len(words)])
		b.WriteByte(' ')
	}
	text := b.String()
	start := time.Now()
	allocs := testing.AllocsPerRun(1, func() { e.Vector(text) })
	took := time.Since(start)
	t.Logf("1 MiB: %v, %.0f allocations", took, allocs)
	if took > 20*time.Second {
		t.Errorf("1 MiB took %v", took)
	}
	// Tokens and lookup keys are allocated per word (about 200,000 here);
	// features are bounded by the distinct words, not by their count.
	if allocs > 2e6 {
		t.Errorf("1 MiB: %.0f allocations", allocs)
	}
}

func FuzzVector(f *testing.F) {
	for _, s := range []string{"", "looked into it", "mice_ice cream", "a__b", "Ünïcödé straße", "\xff\xfe", strings.Repeat("look ", 10)} {
		f.Add(s)
	}
	e := concept.New(concept.Options{Dim: 32})
	f.Fuzz(func(t *testing.T, s string) {
		v := e.Vector(s)
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if len(v) != 32 || !(n == 0 || math.Abs(n-1) < 1e-3) {
			t.Fatalf("%q: %d dims, norm² %v", s, len(v), n)
		}
		if !slices.Equal(v, e.Vector(s)) {
			t.Fatalf("%q: not deterministic", s)
		}
	})
}

// wordnetDir is where Debian's wordnet-base installs WordNet 3.0.
const wordnetDir = "/usr/share/wordnet"

// TestTableIsFresh: the checked-in wordnet.bin.gz is what ./gen makes from
// WordNet 3.0, when WordNet is installed here.
func TestTableIsFresh(t *testing.T) {
	if _, err := os.Stat(wordnetDir + "/data.noun"); err != nil {
		if os.Getenv("CI") == "true" { // scripts/test-deps.sh installs it
			t.Fatalf("WordNet 3.0 is not installed in %s (apt-get install wordnet-base)", wordnetDir)
		}
		t.Skipf("WordNet 3.0 is not installed in %s (apt-get install wordnet-base): the checked-in table is not compared with its generator", wordnetDir)
	}
	want, err := wnbuild.Build(wordnetDir, wnbuild.Default)
	if err != nil {
		t.Fatal(err)
	}
	gz, err := os.ReadFile("wordnet.bin.gz")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("wordnet.bin.gz (%d bytes uncompressed) differs from what the generator makes (%d): run go generate ./shared/embed/concept", len(got), len(want))
	}
}

// BenchmarkEmbed reports the throughput in words per second on
// conversational text (the hash embedder's for comparison).
func BenchmarkEmbed(b *testing.B) {
	text := "Caroline: I went to a LGBTQ support group yesterday and it was so powerful. The stories were inspiring. " +
		"Melanie: I've been looking into adoption agencies; we picked up the paperwork and the kids were thrilled."
	words := float64(len(strings.Fields(text)))
	for _, e := range []interface{ Vector(string) []float32 }{concept.New(concept.Options{}), local.New(local.Options{})} {
		name := "concept"
		if _, ok := e.(*local.Embedder); ok {
			name = "hash"
		}
		b.Run(name, func(b *testing.B) {
			e.Vector(text) // the table is loaded once, not timed
			for b.Loop() {
				e.Vector(text)
			}
			b.ReportMetric(words*float64(b.N)/b.Elapsed().Seconds(), "words/s")
		})
	}
}

// BenchmarkLoadTable is the cost of the first embedding in a process.
func BenchmarkLoadTable(b *testing.B) {
	for b.Loop() {
		if err := concept.DecodeTable(); err != nil {
			b.Fatal(err)
		}
	}
}
