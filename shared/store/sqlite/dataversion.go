package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// dataVersion is one connection kept for PRAGMA data_version, whose value
// is that connection's own: two reads on one connection differ when any
// other connection — this process's writer or another process's —
// committed between them. Readers of the pool would each have their own.
type dataVersion struct {
	mu sync.Mutex
	db *sql.DB
}

// DataVersion returns a counter that differs after every commit to the
// file by any connection, in this process or another: what a waiter polls
// to learn, for a few microseconds, that something may have arrived
// (shared/activity). Its values compare only with each other.
func (s *Store) DataVersion(ctx context.Context) (int64, error) {
	s.version.mu.Lock()
	defer s.version.mu.Unlock()
	if s.version.db == nil {
		db, err := sql.Open("sqlite", "file:"+s.path+"?_pragma=query_only(1)&_pragma=busy_timeout(1000)")
		if err != nil {
			return 0, fmt.Errorf("store.sqlite: data_version: %w", err)
		}
		// One connection, kept: another one's counter would not compare.
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		db.SetConnMaxIdleTime(0)
		s.version.db = db
	}
	var v int64
	if err := s.version.db.QueryRowContext(ctx, "PRAGMA data_version").Scan(&v); err != nil {
		return 0, classify(err)
	}
	return v, nil
}

func (d *dataVersion) close() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.db != nil {
		_ = d.db.Close()
		d.db = nil
	}
}
