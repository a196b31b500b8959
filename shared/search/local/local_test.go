package local_test

import (
	"context"
	"path/filepath"
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
	if err := y.Warm(ctx); err != nil {
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
