package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// DataVersion moves after a commit by this process's writer and by
// another store on the file (another process's), and holds still while
// nothing commits, checkpoints included: a waiter is woken by commits only.
func TestDataVersionMovesOnlyOnCommits(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vp.db")
	open := func() *sqlite.Store {
		s, err := sqlite.Open(ctx, sqlite.Options{Path: path, Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	mine, other := open(), open()
	v := func() int64 {
		n, err := mine.DataVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	put := func(s *sqlite.Store, sk string) {
		if err := s.Write(ctx, store.Put(store.Item{Key: store.Key{PK: "T#t#X", SK: sk}, Data: []byte("{}")}, store.Always)); err != nil {
			t.Fatal(err)
		}
	}
	v0 := v()
	time.Sleep(1200 * time.Millisecond) // two checkpoints
	if v1 := v(); v1 != v0 {
		t.Fatalf("data_version moved from %d to %d with no commit", v0, v1)
	}
	put(mine, "a")
	v2 := v()
	if v2 == v0 {
		t.Fatal("data_version did not move after this store's commit")
	}
	put(other, "b")
	if v3 := v(); v3 == v2 {
		t.Fatal("data_version did not move after another store's commit")
	}
}

// BenchmarkDataVersion is the cost of one look of a waiter's poll (every
// 50 ms while someone waits).
func BenchmarkDataVersion(b *testing.B) {
	s, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(b.TempDir(), "vp.db")})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	for b.Loop() {
		if _, err := s.DataVersion(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
