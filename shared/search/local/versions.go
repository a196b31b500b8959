package local

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
)

// Several processes share one search.db (serve, and a stdio process per
// agent session). Each keeps its own in-memory caches, so it must notice
// what the others write. SQLite's data_version says that another
// connection committed, not what it changed; search_versions says which
// partitions (search tenants) did: every write bumps the version of the
// partitions it touches, and a process drops only the caches of the
// partitions whose version moved. A message sent by one agent then does
// not make every other agent reload its memories.
const versionsSchema = `
CREATE TABLE IF NOT EXISTS search_versions (
	tenant TEXT PRIMARY KEY, version INTEGER NOT NULL
) WITHOUT ROWID;
`

// bumpVersions increments, in the write's transaction, the versions of
// the partitions it changes, and returns the new ones.
func bumpVersions(ctx context.Context, tx *sql.Tx, tenants ...string) (map[string]int64, error) {
	out := make(map[string]int64, len(tenants))
	for _, t := range tenants {
		if _, done := out[t]; done {
			continue
		}
		var v int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO search_versions (tenant, version) VALUES (?, 1)
			ON CONFLICT (tenant) DO UPDATE SET version = version + 1 RETURNING version`, t).Scan(&v); err != nil {
			return nil, fmt.Errorf("search.local: partition version: %w", err)
		}
		out[t] = v
	}
	return out, nil
}

// recordVersions notes the versions of our own committed write, whose
// effect the caches already hold. Call with x.mu held.
func (x *Index) recordVersions(v map[string]int64) {
	for t, n := range v {
		x.versions[t] = n
	}
}

// readVersions returns every partition's version, read after the
// data_version that prompted it.
func (x *Index) readVersions(ctx context.Context) (map[string]int64, error) {
	rows, err := x.r.QueryContext(ctx, `SELECT tenant, version FROM search_versions`)
	if err != nil {
		return nil, fmt.Errorf("search.local: partition versions: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var t string
		var v int64
		if err := rows.Scan(&t, &v); err != nil {
			return nil, fmt.Errorf("search.local: partition versions: %w", err)
		}
		out[t] = v
	}
	return out, rows.Err()
}

// syncExternal drops the caches of the partitions another process has
// written since we last looked; they reload from SQLite on their next
// query. Our own writes update the caches directly and do not move
// data_version. No query runs under x.mu: a writer holds the connection
// while it waits for x.mu to commit.
func (x *Index) syncExternal(ctx context.Context) error {
	var dv int64
	if err := x.w.QueryRowContext(ctx, "PRAGMA data_version").Scan(&dv); err != nil {
		return fmt.Errorf("search.local: data_version: %w", err)
	}
	x.mu.Lock()
	seen := dv == x.dataVersion
	x.mu.Unlock()
	if seen {
		return nil
	}
	versions, err := x.readVersions(ctx)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if dv == x.dataVersion {
		return nil // another query synced meanwhile
	}
	first := x.dataVersion == 0
	x.dataVersion = dv
	// A version older than one we recorded is our own write committed
	// meanwhile: keep the newer. Dropping a cache too many is only a reload.
	var changed []string
	for t, v := range versions {
		if mine, ok := x.versions[t]; !ok || mine != v {
			if !first && mine != v {
				changed = append(changed, t)
			}
			x.versions[t] = max(mine, v)
		}
	}
	if first {
		// Nothing cached before now is older than this snapshot.
		return nil
	}
	if len(changed) == 0 {
		// A commit that moved no version: a writer that keeps none (an
		// older binary). Trust nothing.
		x.sets = map[setKey]*vectorSet{}
		x.texts = map[string]*textSet{}
		return nil
	}
	for _, t := range changed {
		delete(x.texts, t)
	}
	for k := range x.sets {
		if slices.Contains(changed, k.tenant) {
			delete(x.sets, k)
		}
	}
	return nil
}
