package local_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/local"
)

// twoProcesses opens two Indexes on one file, as serve and a stdio host on
// one data dir do.
func twoProcesses(t *testing.T) (a, b *local.Index) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "search.db")
	for _, x := range []**local.Index{&a, &b} {
		var err error
		if *x, err = local.Open(context.Background(), local.Options{Path: path}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = (*x).Close() })
	}
	return a, b
}

// Two processes on one data dir (serve and a stdio host) each hold an
// Index on the same file: what one writes, the other finds.
func TestSeesWritesOfAnotherIndexOnTheSameFile(t *testing.T) {
	ctx := context.Background()
	a, b := twoProcesses(t)
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

// A write by another process drops only the caches of the partitions it
// touched: an agent's message does not make every other agent's process
// reload its memories.
func TestAnotherProcessInvalidatesOnlyWhatItWrote(t *testing.T) {
	ctx := context.Background()
	a, b := twoProcesses(t)
	for _, d := range []search.Doc{
		{Tenant: "acme", ID: "m1", Kind: "memory", Text: "release train on fridays"},
		{Tenant: "acme/message", ID: "msg1", Kind: "message", Text: "release notes are ready"},
	} {
		if err := a.Upsert(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	find := func(x *local.Index, tenant, q string) int {
		t.Helper()
		hits, err := x.Text(ctx, q, search.Filter{Tenant: tenant}, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(hits)
	}
	// b loads both partitions.
	if find(b, "acme", "release") != 1 || find(b, "acme/message", "release") != 1 {
		t.Fatal("b does not see a's documents")
	}
	loaded := func() []string { l := local.LoadedTenants(b); slices.Sort(l); return l }
	if got := loaded(); !slices.Equal(got, []string{"acme", "acme/message"}) {
		t.Fatalf("b loaded %v", got)
	}
	// a sends a message: b drops its message partition only.
	if err := a.Upsert(ctx, search.Doc{Tenant: "acme/message", ID: "msg2", Kind: "message", Text: "release is out"}); err != nil {
		t.Fatal(err)
	}
	if n := find(b, "acme/message", "release"); n != 2 {
		t.Fatalf("b finds %d messages after a's send, want 2", n)
	}
	// (the query above reloaded acme/message; acme was never dropped)
	if err := a.Upsert(ctx, search.Doc{Tenant: "acme/message", ID: "msg3", Kind: "message", Text: "another"}); err != nil {
		t.Fatal(err)
	}
	// A query on the messages syncs b: its memories stay loaded.
	if n := find(b, "acme/message", "another"); n != 1 {
		t.Fatalf("b finds %d of a's latest message, want 1", n)
	}
	if got := loaded(); !slices.Equal(got, []string{"acme", "acme/message"}) {
		t.Fatalf("after a message by a, b holds %v: want its memories kept", got)
	}
	if n := find(b, "acme", "release"); n != 1 {
		t.Fatalf("b's memories: %d", n)
	}
	// a changes a memory, a vector and deletes: b sees each.
	if err := a.Upsert(ctx, search.Doc{Tenant: "acme", ID: "m2", Kind: "memory", Text: "release freeze in december"}); err != nil {
		t.Fatal(err)
	}
	if n := find(b, "acme", "release"); n != 2 {
		t.Fatalf("b finds %d memories after a's write, want 2", n)
	}
	if err := a.SetVector(ctx, "acme", "m2", search.Vector{Embedder: "e/2", Values: []float32{0, 1}}); err != nil {
		t.Fatal(err)
	}
	if hits, err := b.Vector(ctx, search.Vector{Embedder: "e/2", Values: []float32{0, 1}}, search.Filter{Tenant: "acme"}, 5); err != nil || len(hits) != 1 {
		t.Fatalf("b's vectors after a's SetVector: %v %v", hits, err)
	}
	if err := a.Delete(ctx, "acme", "m1"); err != nil {
		t.Fatal(err)
	}
	if n := find(b, "acme", "release"); n != 1 {
		t.Fatalf("b finds %d memories after a's delete, want 1", n)
	}
	// b's own writes keep its caches.
	if err := b.Upsert(ctx, search.Doc{Tenant: "acme", ID: "m3", Kind: "memory", Text: "release retro"}); err != nil {
		t.Fatal(err)
	}
	if n := find(b, "acme", "release"); n != 2 {
		t.Fatalf("b's own write: %d", n)
	}
	if n := find(a, "acme", "release"); n != 2 {
		t.Fatalf("a after b's write: %d", n)
	}
}

// A writer that keeps no partition versions (an older binary on the same
// file) still invalidates everything.
func TestAWriterWithoutVersionsInvalidatesEverything(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "search.db")
	b, err := local.Open(ctx, local.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Upsert(ctx, search.Doc{Tenant: "acme", ID: "m1", Kind: "memory", Text: "canary deploys"}); err != nil {
		t.Fatal(err)
	}
	if hits, _ := b.Text(ctx, "canary", search.Filter{Tenant: "acme"}, 5); len(hits) != 1 {
		t.Fatalf("hits %v", hits)
	}
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer old.Close()
	if _, err := old.ExecContext(ctx, `INSERT INTO search_docs (tenant, id, kind, ns, type, owner, created, expires, title, body)
		VALUES ('acme', 'm2', 'memory', '', '', '', 0, 0, '', 'canary rollback')`); err != nil {
		t.Fatal(err)
	}
	if hits, _ := b.Text(ctx, "canary", search.Filter{Tenant: "acme"}, 5); len(hits) != 2 {
		t.Fatalf("after an unversioned write: %v", hits)
	}
}
