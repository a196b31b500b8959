package sqlitefile_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/internal/sqlitefile"
)

// TestCheckpointsInTheBackground: the writer never checkpoints (its
// commits do not pay for it), the checkpointer copies the WAL into the
// database soon after, and Close leaves an empty WAL.
func TestCheckpointsInTheBackground(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "x.db")
	f, err := sqlitefile.Open(ctx, sqlitefile.Options{Path: path, Schema: "CREATE TABLE t (v TEXT)", CheckpointEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var autockpt int
	if err := f.W.QueryRow("PRAGMA wal_autocheckpoint").Scan(&autockpt); err != nil || autockpt != 0 {
		t.Fatalf("writer wal_autocheckpoint = %d (%v), want 0", autockpt, err)
	}
	row := strings.Repeat("x", 4000)
	for range 3000 { // ~3,000 pages: past SQLite's 1,000-page autocheckpoint
		if _, err := f.W.Exec("INSERT INTO t VALUES (?)", row); err != nil {
			t.Fatal(err)
		}
	}
	// Until a checkpoint, the rows are only in the WAL: the database file
	// grows when the checkpointer copies them (nothing else checkpoints).
	deadline := time.Now().Add(5 * time.Second)
	for {
		st, err := os.Stat(path)
		if err == nil && st.Size() >= 3000*4000 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the database file is %d bytes after 5 s: the WAL was not checkpointed in the background", st.Size())
		}
		time.Sleep(20 * time.Millisecond)
	}
	var n int
	if err := f.R.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 3000 {
		t.Fatalf("%d rows (%v), want 3000", n, err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if st, err := os.Stat(path + "-wal"); err == nil && st.Size() != 0 {
		t.Errorf("WAL is %d bytes after Close, want 0", st.Size())
	}
}
