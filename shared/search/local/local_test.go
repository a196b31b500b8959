package local_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/search/searchtest"
)

func open(t testing.TB) *local.Index {
	t.Helper()
	x, err := local.Open(context.Background(), local.Options{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestBehaviour(t *testing.T) {
	searchtest.Run(t, func(t *testing.T) search.Index { return open(t) })
}

// TestReopen: text and vectors survive closing the index; the vector cache
// is rebuilt from the file.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "search.db")
	x, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	d := search.Doc{Tenant: "t", ID: "m1", Kind: "memory", Namespace: "ns", Text: "persistent words"}
	if err := x.Upsert(ctx, d); err != nil {
		t.Fatal(err)
	}
	if err := x.SetVector(ctx, "t", "m1", search.Vector{Embedder: "e/2", Values: []float32{3, 4}}); err != nil {
		t.Fatal(err)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if err := y.Warm(ctx, nil); err != nil {
		t.Fatal(err)
	}
	f := search.Filter{Tenant: "t", Namespaces: []string{"ns"}}
	if hits, err := y.Text(ctx, "persistent", f, 5); err != nil || len(hits) != 1 {
		t.Fatalf("text after reopen: %v %v", hits, err)
	}
	hits, err := y.Vector(ctx, search.Vector{Embedder: "e/2", Values: []float32{3, 4}}, f, 5)
	if err != nil || len(hits) != 1 || hits[0].Score < 0.999 {
		t.Fatalf("vector after reopen: %v %v", hits, err)
	}
}

// TestWarmKeeps: Warm loads the tenants keep accepts, and only those; the
// others load on their first query.
func TestWarmKeeps(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "search.db")
	x, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"acme", "acme/message", "beta"} {
		if err := x.Upsert(ctx, search.Doc{Tenant: tenant, ID: "d1", Kind: "memory", Text: "warm words"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if err := y.Warm(ctx, func(tenant string) bool { return !strings.Contains(tenant, "/") }); err != nil {
		t.Fatal(err)
	}
	got := local.LoadedTenants(y)
	slices.Sort(got)
	if !slices.Equal(got, []string{"acme", "beta"}) {
		t.Fatalf("warm loaded %v, want [acme beta]", got)
	}
	if hits, err := y.Text(ctx, "warm", search.Filter{Tenant: "acme/message"}, 5); err != nil || len(hits) != 1 {
		t.Fatalf("a tenant left cold still answers: %v %v", hits, err)
	}
}

func TestQueryTerms(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "",
		"?!":                       "",
		"the":                      "the",
		"What did Anna's dog eat?": "anna dog eat",
		`NEAR(a b) OR "x" title:y`: "near titl",
		"dog DOG Dog dogs":         "dog",
		"Café 2023 running":        "cafe 2023 run",
	} {
		if got := strings.Join(local.QueryTerms(in), " "); got != want {
			t.Errorf("QueryTerms(%q) = %q, want %q", in, got, want)
		}
	}
}

var (
	ctx     = context.Background()
	filterT = search.Filter{Tenant: "t"}
)

func doc(id, text string) search.Doc {
	return search.Doc{Tenant: "t", ID: id, Kind: "memory", Text: text}
}

func ids(hits []search.Hit) string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return strings.Join(out, " ")
}

// fillers indexes n documents that share no word with each other or with
// the tests' queries.
func fillers(t *testing.T, x *local.Index, n int) {
	t.Helper()
	var docs []search.Doc
	for i := range n {
		w := strings.Repeat(string(rune('a'+i%26)), 3+i/26)
		docs = append(docs, doc("filler"+w, w+"x "+w+"y "+w+"z"))
	}
	if err := x.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
}

// TestIrregularForms: a question in the present tense finds a memory in
// the past tense, a plural its irregular singular, and a hyphenated word
// its joined form.
func TestIrregularForms(t *testing.T) {
	x := open(t)
	defer x.Close()
	fillers(t, x, 45)
	if err := x.Upsert(ctx,
		doc("past", "I bought a red guitar and went to Lisbon"),
		doc("present", "they buy guitars"),
		doc("kids", "the children loved the zoo"),
		doc("other", "a drum kit for sale"),
		doc("hyphen", "running helps me de-stress"),
		doc("joined", "yoga to destress"),
	); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string]string{
		"when did she buy the guitar?": "present past", // the shorter first
		"go to Lisbon":                 "past",
		"child zoo":                    "kids",
		// a hyphenated word is also indexed joined, so each form finds both
		"destress":  "joined hyphen",
		"de-stress": "hyphen joined", // all three of its terms first
	} {
		hits, err := x.Text(ctx, q, filterT, 10)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(hits); got != want {
			t.Errorf("Text(%q) = %q, want %q", q, got, want)
		}
	}
}

// TestFeedback: pseudo-relevance feedback reorders the documents that
// match the query by the rare words they share with the best matches: of
// two documents matching "starter" alone, as long as each other, the one
// about rye and proofing (like the two sourdough documents) comes before
// the one about a starter pistol, which plain BM25 ties with it and puts
// first by id. A document that matches no
// word of the query is never added.
func TestFeedback(t *testing.T) {
	x := open(t)
	defer x.Close()
	fillers(t, x, 45)
	if err := x.Upsert(ctx,
		doc("d1", "sourdough bread with a rye starter and a long proof"),
		doc("d2", "sourdough loaf, rye starter fed twice, long proof overnight"),
		doc("pistol", "the starter pistol at the race"),
		doc("rye", "rye starter and a long proof"),
		doc("noword", "rye bread needs a long proof"),
	); err != nil {
		t.Fatal(err)
	}
	hits, err := x.Text(ctx, "sourdough starter", filterT, 10)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids(hits); got != "d1 d2 rye pistol" && got != "d2 d1 rye pistol" {
		t.Errorf("Text(sourdough starter) = %q, want d1 and d2, then rye, then pistol", got)
	}
}

// TestNewEmbedderReplacesOldVectors: re-embedding a document with another
// embedder (the configuration changed, memory.ReembedAll) deletes its
// vector of the old one, in the file and in memory, so that the old
// embedder's vectors neither fill the disk nor are loaded at start once
// every document is re-embedded; documents not yet re-embedded keep theirs.
func TestNewEmbedderReplacesOldVectors(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "search.db")
	x, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	old, cur := search.Vector{Embedder: "old/2", Values: []float32{1, 2}}, search.Vector{Embedder: "new/2", Values: []float32{2, 1}}
	f := search.Filter{Tenant: "t", Namespaces: []string{"ns"}}
	for i := range n {
		id := fmt.Sprintf("m%02d", i)
		if err := x.Upsert(ctx, search.Doc{Tenant: "t", ID: id, Kind: "memory", Namespace: "ns", Text: "words " + id}); err != nil {
			t.Fatal(err)
		}
		if err := x.SetVector(ctx, "t", id, old); err != nil {
			t.Fatal(err)
		}
	}
	if hits, err := x.Vector(ctx, old, f, 2*n); err != nil || len(hits) != n {
		t.Fatalf("old vectors before: %d hits, %v; want %d", len(hits), err, n)
	}
	for i := range n / 2 {
		if err := x.SetVector(ctx, "t", fmt.Sprintf("m%02d", i), cur); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := x.Vector(ctx, old, f, 2*n)
	if err != nil || len(hits) != n-n/2 {
		t.Fatalf("half re-embedded: %d old hits, %v; want %d", len(hits), err, n-n/2)
	}
	for _, h := range hits {
		if h.ID < fmt.Sprintf("m%02d", n/2) {
			t.Errorf("%s was re-embedded, its old vector is still found", h.ID)
		}
	}
	if got := local.StoredVectors(t, x, "old/2"); got != n-n/2 {
		t.Errorf("%d old vectors stored, want %d", got, n-n/2)
	}
	for i := n / 2; i < n; i++ {
		if err := x.SetVector(ctx, "t", fmt.Sprintf("m%02d", i), cur); err != nil {
			t.Fatal(err)
		}
	}
	if hits, err := x.Vector(ctx, cur, f, 2*n); err != nil || len(hits) != n {
		t.Fatalf("new vectors: %d hits, %v; want %d", len(hits), err, n)
	}
	if got := local.StoredVectors(t, x, "old/2"); got != 0 {
		t.Errorf("%d old vectors stored after re-embedding all, want 0", got)
	}
	if got := local.LoadedEmbedders(x, "t"); !slices.Equal(got, []string{"new/2"}) {
		t.Errorf("embedders in memory %v, want only new/2", got)
	}
	if err := x.Close(); err != nil {
		t.Fatal(err)
	}
	y, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	if err := y.Warm(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := local.LoadedEmbedders(y, "t"); !slices.Equal(got, []string{"new/2"}) {
		t.Errorf("embedders warmed after reopening %v, want only new/2", got)
	}
}
