package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Another process holding the write lock past the busy timeout makes a
// Write fail as unavailable (retryable), not as an unclassified error.
func TestBusyFileIsUnavailable(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "vp.db")
	s, err := sqlite.Open(ctx, sqlite.Options{Path: path, BusyTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	put := store.Put(store.Item{Key: store.Key{PK: "T#a#X", SK: "1"}, Data: []byte("x")}, store.Always)
	if err := s.Write(ctx, put); err != nil {
		t.Fatal(err)
	}
	// A second connection stands for another process: it holds the write
	// lock with an open IMMEDIATE transaction.
	other, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(50)")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	err = s.Write(ctx, put)
	if !vp.IsKind(err, vp.KindUnavailable) || !vp.Retryable(err) {
		t.Fatalf("write under another's lock: %v (kind %v), want unavailable", err, vp.KindOf(err))
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, put); err != nil {
		t.Fatalf("write after the lock is released: %v", err)
	}
	// Reads are not blocked by a writer in WAL mode, and a missing item is
	// still ErrNotFound through the classification.
	if _, err := s.Get(ctx, store.Key{PK: "T#a#X", SK: "2"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get: %v", err)
	}
}
