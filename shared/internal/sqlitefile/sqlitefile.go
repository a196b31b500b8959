// Package sqlitefile opens a SQLite file the way every embedded component
// of VantagePeers uses one: created 0600 in a 0700 folder, WAL journal, one
// writer connection (SQLite serialises writers anyway; one connection makes
// that explicit and keeps busy-waiting out of the write path) and a pool of
// query-only readers.
package sqlitefile

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Options configures Open.
type Options struct {
	Path string
	// Synchronous: "NORMAL" (default), "FULL", "EXTRA" or "OFF".
	Synchronous string
	// ReadConns bounds the reader pool (default 4).
	ReadConns int
	// Schema is executed on the writer when the file is opened.
	Schema string
	// BusyTimeout is how long a statement waits for another connection's
	// lock (another process on the same file) before failing with
	// SQLITE_BUSY (default 10s).
	BusyTimeout time.Duration
}

// Open returns the writer and the reader pool of the file at o.Path.
func Open(ctx context.Context, o Options) (w, r *sql.DB, err error) {
	if o.Path == "" {
		return nil, nil, fmt.Errorf("empty path")
	}
	if err := os.MkdirAll(filepath.Dir(o.Path), 0o700); err != nil {
		return nil, nil, err
	}
	sync := strings.ToUpper(o.Synchronous)
	switch sync {
	case "":
		sync = "NORMAL"
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return nil, nil, fmt.Errorf("synchronous %q: want NORMAL, FULL, EXTRA or OFF", o.Synchronous)
	}
	// Create the file ourselves so that it is 0600 from the first byte.
	f, err := os.OpenFile(o.Path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, err
	}
	_ = f.Close()
	busy := o.BusyTimeout.Milliseconds()
	if busy <= 0 {
		busy = 10_000
	}
	dsn := func(extra string) string {
		return "file:" + o.Path + fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)", busy) +
			"&_pragma=synchronous(" + sync + ")&_pragma=foreign_keys(OFF)" + extra
	}
	if w, err = sql.Open("sqlite", dsn("&_txlock=immediate")); err != nil {
		return nil, nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if _, err := w.ExecContext(ctx, o.Schema); err != nil {
		_ = w.Close()
		return nil, nil, fmt.Errorf("schema: %w", err)
	}
	if r, err = sql.Open("sqlite", dsn("&_pragma=query_only(1)")); err != nil {
		_ = w.Close()
		return nil, nil, err
	}
	n := o.ReadConns
	if n <= 0 {
		n = 4
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Chmod(o.Path+suffix, 0o600)
	}
	return w, r, nil
}
