package local_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/local"
)

// Two processes on one data dir (serve and a stdio host) each hold an
// Index on the same file: what one writes, the other finds.
func TestSeesWritesOfAnotherIndexOnTheSameFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "search.db")
	a, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	f := search.Filter{Tenant: "acme"}
	if hits, err := b.Text(ctx, "blue green deploy", f, 5); err != nil || len(hits) != 0 {
		t.Fatalf("empty index: %v %v", hits, err)
	}
	if err := a.Upsert(ctx, search.Doc{Tenant: "acme", ID: "m1", Kind: "memory", Text: "we deploy with blue green releases"}); err != nil {
		t.Fatal(err)
	}
	if err := a.SetVector(ctx, "acme", "m1", search.Vector{Embedder: "e/2", Values: []float32{1, 0}}); err != nil {
		t.Fatal(err)
	}
	hits, err := b.Text(ctx, "blue green deploy", f, 5)
	if err != nil || len(hits) != 1 || hits[0].ID != "m1" {
		t.Fatalf("the other index does not see the write: %v %v", hits, err)
	}
	hits, err = b.Vector(ctx, search.Vector{Embedder: "e/2", Values: []float32{1, 0}}, f, 5)
	if err != nil || len(hits) != 1 {
		t.Fatalf("the other index does not see the vector: %v %v", hits, err)
	}
	if err := a.Delete(ctx, "acme", "m1"); err != nil {
		t.Fatal(err)
	}
	if hits, _ := b.Text(ctx, "blue green deploy", f, 5); len(hits) != 0 {
		t.Fatalf("the other index still finds a deleted document: %v", hits)
	}
}
