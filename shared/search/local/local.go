// Package local implements the search port in process: SQLite FTS5 (porter
// stemming over unicode61 with diacritics removed, ranked by bm25() with
// the title weighted above the text) for full-text search, and exact
// cosine search in Go for vectors, over a database file of its own
// (modernc.org/sqlite, pure Go, WAL).
//
// Vectors are stored in SQLite and cached in memory per (tenant, embedder)
// as one contiguous []float32, normalised at write time so that cosine
// similarity is a dot product; a query is a single pass over the cache
// that skips rows failing the filter and keeps the best k in a small heap.
// The scan is exact: no approximate index is used, because none measured
// here reaches a recall of 0.95 against it.
//
// An Index owns its file: open one Index per file per process, since the
// vector cache is kept current only by writes made through it.
package local

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/vantagepeers/vantagepeers/shared/search"
)

// Options configures Open.
type Options struct {
	// Path of the index database file; its folder is created 0700.
	Path string
	// Synchronous is SQLite's durability level. The index is derived from
	// the store and can be rebuilt, so the default is "NORMAL": a write that
	// returned survives a crash of the process, not a power cut.
	Synchronous string
	// TitleWeight is the bm25() weight of the title column against 1 for
	// the text (default DefaultTitleWeight).
	TitleWeight float64
	// ReadConns bounds the reader pool (default 4).
	ReadConns int
}

// DefaultTitleWeight weights a term found in a title this many times a
// term found in the text.
const DefaultTitleWeight = 2.0

// Index is the SQLite search index. It is safe for concurrent use.
type Index struct {
	w, r        *sql.DB
	titleWeight float64

	mu   sync.Mutex            // guards sets
	sets map[setKey]*vectorSet // loaded vector caches
}

var _ search.Index = (*Index)(nil)

const schema = `
CREATE TABLE IF NOT EXISTS docs (
	rid INTEGER PRIMARY KEY,
	tenant TEXT NOT NULL, id TEXT NOT NULL,
	kind TEXT NOT NULL, ns TEXT NOT NULL, type TEXT NOT NULL, owner TEXT NOT NULL,
	created INTEGER NOT NULL, expires INTEGER NOT NULL,
	np INTEGER NOT NULL, -- passages in fts, rowids rid<<10 .. rid<<10 + np-1
	UNIQUE (tenant, id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(
	title, body, content='', contentless_delete=1,
	tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TABLE IF NOT EXISTS vecs (
	rid INTEGER NOT NULL, embedder TEXT NOT NULL, v BLOB NOT NULL,
	PRIMARY KEY (rid, embedder)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS vecs_embedder ON vecs (embedder, rid);
`

// Open opens (creating when needed) the index at opts.Path.
func Open(ctx context.Context, opts Options) (*Index, error) {
	const op = "search.local.Open"
	if opts.Path == "" {
		return nil, fmt.Errorf("%s: empty path", op)
	}
	if err := os.MkdirAll(filepath.Dir(opts.Path), 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	if f, err := os.OpenFile(opts.Path, os.O_RDWR|os.O_CREATE, 0o600); err == nil {
		_ = f.Close()
	} else {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	sync := opts.Synchronous
	if sync == "" {
		sync = "NORMAL"
	}
	switch strings.ToUpper(sync) {
	case "OFF", "NORMAL", "FULL", "EXTRA":
	default:
		return nil, fmt.Errorf("%s: synchronous %q: want OFF, NORMAL, FULL or EXTRA", op, sync)
	}
	dsn := func(extra string) string {
		return "file:" + opts.Path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
			"&_pragma=synchronous(" + sync + ")" + extra
	}
	w, err := sql.Open("sqlite", dsn("&_txlock=immediate"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	w.SetMaxOpenConns(1)
	w.SetConnMaxIdleTime(0)
	if _, err := w.ExecContext(ctx, schema); err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("%s: schema: %w", op, err)
	}
	r, err := sql.Open("sqlite", dsn("&_pragma=query_only(1)"))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	n := opts.ReadConns
	if n <= 0 {
		n = 4
	}
	r.SetMaxOpenConns(n)
	r.SetMaxIdleConns(n)
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Chmod(opts.Path+suffix, 0o600)
	}
	tw := opts.TitleWeight
	if tw <= 0 {
		tw = DefaultTitleWeight
	}
	return &Index{w: w, r: r, titleWeight: tw, sets: map[setKey]*vectorSet{}}, nil
}

// Close closes the database.
func (x *Index) Close() error {
	return errors.Join(x.r.Close(), x.w.Close())
}

// Upsert implements search.Index: in one transaction, each document's
// fields and text replace any earlier version with the same (tenant, id).
// A vector already attached stays attached until SetVector replaces it.
func (x *Index) Upsert(ctx context.Context, docs ...search.Doc) error {
	if len(docs) == 0 {
		return nil
	}
	for _, d := range docs {
		if d.Tenant == "" {
			return search.ErrNoTenant
		}
		if d.ID == "" {
			return errors.New("search.local.Upsert: empty document id")
		}
	}
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search.local.Upsert: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	sel, err := tx.PrepareContext(ctx, `SELECT rid, np FROM docs WHERE tenant = ? AND id = ?`)
	if err != nil {
		return fmt.Errorf("search.local.Upsert: %w", err)
	}
	defer sel.Close()
	upd, err := tx.PrepareContext(ctx, `UPDATE docs SET kind = ?, ns = ?, type = ?, owner = ?, created = ?, expires = ?, np = ? WHERE rid = ?`)
	if err != nil {
		return fmt.Errorf("search.local.Upsert: %w", err)
	}
	defer upd.Close()
	ins, err := tx.PrepareContext(ctx, `INSERT INTO docs (tenant, id, kind, ns, type, owner, created, expires, np)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING rid`)
	if err != nil {
		return fmt.Errorf("search.local.Upsert: %w", err)
	}
	defer ins.Close()
	del, err := tx.PrepareContext(ctx, `DELETE FROM fts WHERE rowid = ?`)
	if err != nil {
		return fmt.Errorf("search.local.Upsert: %w", err)
	}
	defer del.Close()
	put, err := tx.PrepareContext(ctx, `INSERT INTO fts (rowid, title, body) VALUES (?, ?, ?)`)
	if err != nil {
		return fmt.Errorf("search.local.Upsert: %w", err)
	}
	defer put.Close()
	for _, d := range docs {
		ps := Passages(d.Text)
		var rid, np int64
		switch err := sel.QueryRowContext(ctx, d.Tenant, d.ID).Scan(&rid, &np); {
		case errors.Is(err, sql.ErrNoRows):
			if err := ins.QueryRowContext(ctx, d.Tenant, d.ID, d.Kind, d.Namespace, d.Type, d.Owner,
				d.CreatedAt, d.ExpiresAt, len(ps)).Scan(&rid); err != nil {
				return fmt.Errorf("search.local.Upsert: %w", err)
			}
		case err != nil:
			return fmt.Errorf("search.local.Upsert: %w", err)
		default:
			for i := int64(0); i < np; i++ {
				if _, err := del.ExecContext(ctx, rid<<passageBits+i); err != nil {
					return fmt.Errorf("search.local.Upsert: %w", err)
				}
			}
			if _, err := upd.ExecContext(ctx, d.Kind, d.Namespace, d.Type, d.Owner, d.CreatedAt, d.ExpiresAt, len(ps), rid); err != nil {
				return fmt.Errorf("search.local.Upsert: %w", err)
			}
		}
		for i, p := range ps {
			if _, err := put.ExecContext(ctx, rid<<passageBits+int64(i), d.Title, p); err != nil {
				return fmt.Errorf("search.local.Upsert: %w", err)
			}
		}
	}
	// Hold the cache lock across the commit so that no reader sees the
	// database and the cache disagree for long.
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("search.local.Upsert: %w", err)
	}
	for k, set := range x.sets {
		for _, d := range docs {
			if k.tenant == d.Tenant {
				set.setMeta(d)
			}
		}
	}
	return nil
}

// Delete implements search.Index.
func (x *Index) Delete(ctx context.Context, tenant string, ids ...string) error {
	if tenant == "" {
		return search.ErrNoTenant
	}
	if len(ids) == 0 {
		return nil
	}
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("search.local.Delete: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	for _, id := range ids {
		var rid, np int64
		err := tx.QueryRowContext(ctx, `DELETE FROM docs WHERE tenant = ? AND id = ? RETURNING rid, np`, tenant, id).Scan(&rid, &np)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("search.local.Delete: %w", err)
		}
		for i := int64(0); i < np; i++ {
			if _, err := tx.ExecContext(ctx, `DELETE FROM fts WHERE rowid = ?`, rid<<passageBits+i); err != nil {
				return fmt.Errorf("search.local.Delete: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM vecs WHERE rid = ?`, rid); err != nil {
			return fmt.Errorf("search.local.Delete: %w", err)
		}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("search.local.Delete: %w", err)
	}
	for k, set := range x.sets {
		if k.tenant == tenant {
			for _, id := range ids {
				set.remove(id)
			}
		}
	}
	return nil
}

// Text implements search.Index: BM25 over title and text, best first.
// Score is the negated bm25() value (higher is better).
func (x *Index) Text(ctx context.Context, query string, f search.Filter, k int) ([]search.Hit, error) {
	if f.Tenant == "" {
		return nil, search.ErrNoTenant
	}
	if k <= 0 {
		return nil, nil
	}
	match := MatchExpr(query)
	if match == "" {
		return nil, search.ErrEmptyQuery
	}
	where, args := filterSQL(f)
	// A document scores as its best passage (bm25() is lower for better).
	// bm25() cannot sit inside an aggregate: score the passages in a
	// materialised CTE, then keep each document's best.
	q := `WITH p AS MATERIALIZED (
			SELECT d.rid AS rid, d.id AS id, d.kind AS kind, bm25(fts, ?, 1.0) AS s
			FROM fts JOIN docs d ON d.rid = (fts.rowid >> ` + strconv.Itoa(passageBits) + `)
			WHERE fts MATCH ? AND ` + where + `)
		SELECT id, kind, min(s) AS best FROM p GROUP BY rid ORDER BY best, id LIMIT ?`
	all := append([]any{x.titleWeight, match}, args...)
	all = append(all, k)
	rows, err := x.r.QueryContext(ctx, q, all...)
	if err != nil {
		return nil, fmt.Errorf("search.local.Text: %w", err)
	}
	defer rows.Close()
	var hits []search.Hit
	for rows.Next() {
		var h search.Hit
		if err := rows.Scan(&h.ID, &h.Kind, &h.Score); err != nil {
			return nil, fmt.Errorf("search.local.Text: %w", err)
		}
		h.Score = -h.Score
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search.local.Text: %w", err)
	}
	return hits, nil
}

// filterSQL renders f as a WHERE clause over docs d.
func filterSQL(f search.Filter) (string, []any) {
	var b strings.Builder
	args := []any{f.Tenant}
	b.WriteString("d.tenant = ?")
	in := func(col string, vals []string) {
		b.WriteString(" AND " + col + " IN (")
		for i, v := range vals {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("?")
			args = append(args, v)
		}
		b.WriteString(")")
	}
	if len(f.Kinds) > 0 {
		in("d.kind", f.Kinds)
	}
	if len(f.Types) > 0 {
		in("d.type", f.Types)
	}
	if f.Owner != "" {
		b.WriteString(" AND d.owner = ?")
		args = append(args, f.Owner)
	}
	if len(f.Namespaces) > 0 && !containsStar(f.Namespaces) {
		b.WriteString(" AND (")
		for i, p := range f.Namespaces {
			if i > 0 {
				b.WriteString(" OR ")
			}
			if strings.HasSuffix(p, "/") {
				// p ends with "/" (0x2F): the names under it sort
				// between p and p with its "/" replaced by "0" (0x30).
				b.WriteString("d.ns = ? OR (d.ns >= ? AND d.ns < ?)")
				args = append(args, p[:len(p)-1], p, p[:len(p)-1]+"0")
			} else {
				b.WriteString("d.ns = ?")
				args = append(args, p)
			}
		}
		b.WriteString(")")
	}
	if f.NowMS > 0 {
		b.WriteString(" AND (d.expires = 0 OR d.expires > ?)")
		args = append(args, f.NowMS)
	}
	return b.String(), args
}

func containsStar(ns []string) bool {
	for _, p := range ns {
		if p == "*" {
			return true
		}
	}
	return false
}
