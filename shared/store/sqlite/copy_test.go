package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// A copy sees what the live database holds, its WAL included, and what is
// written to it stays in the copy, which Close removes.
func TestOpenCopy(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vantagepeers.db")
	live, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	k := store.Key{PK: "T#a", SK: "ONE"}
	if err := live.Write(ctx, store.Put(store.Item{Key: k, Data: []byte(`{"n":1}`)}, store.Always)); err != nil {
		t.Fatal(err)
	}
	cp, err := sqlite.OpenCopy(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if it, err := cp.Get(ctx, k); err != nil || string(it.Data) != `{"n":1}` {
		t.Fatalf("the copy reads %q, %v; want the live row (from the WAL)", it.Data, err)
	}
	k2 := store.Key{PK: "T#a", SK: "TWO"}
	if err := cp.Write(ctx, store.Put(store.Item{Key: k2, Data: []byte(`{}`)}, store.Always)); err != nil {
		t.Fatal(err)
	}
	if _, err := live.Get(ctx, k2); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a write to the copy reached the live database: %v", err)
	}
	dir := filepath.Dir(cp.Path())
	if err := cp.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Close left the copy's folder %s: %v", dir, err)
	}
	if _, err := sqlite.OpenCopy(ctx, filepath.Join(t.TempDir(), "none.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing database: %v, want os.ErrNotExist", err)
	}
}
