// Package sqlite implements the store port on an embedded SQLite database
// (modernc.org/sqlite, pure Go): WAL journal and a single writer connection.
//
// Durability. An acknowledged write (Write returned nil) survives a crash
// or kill -9 of the process in every mode but OFF: it is in the WAL, which
// the next open replays (TestAcknowledgedWritesSurviveKill9, for NORMAL and
// FULL). What survives a power cut, or a crash of the machine or VM host,
// depends on synchronous:
//
//   - FULL (the default): the WAL is fsynced at every commit, so every
//     acknowledged write survives a power cut.
//   - NORMAL: the WAL is fsynced only at checkpoints; a power cut loses the
//     transactions committed since the last one (the file is never
//     corrupted, only the latest writes are gone).
//
// The default is chosen on BenchmarkCommit (a two-op transaction per
// commit, on this project's ext4 virtual disk, December 2026): NORMAL
// 0.20–0.32 ms per commit, FULL 0.66–2.4 ms — FULL is 3 to 9 times slower
// depending on what else the disk is doing, about 4 times on a quiet one,
// and tops out near 500–1,500 commits/s with a single writer. Agents write
// at the pace of their tool calls (a few per second across a team), and
// check_messages, the latency goal, is a read that no mode slows; losing
// an acknowledged message, receipt or task claim to a power cut is the
// worse cost. Set VP_SQLITE_SYNC=NORMAL (Options.Synchronous, case-
// insensitive) for bulk loads or where the machine's power is not a
// concern; OFF is for loads that may be redone from scratch.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/internal/sqlitefile"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// DefaultSynchronous is the durability level when Options.Synchronous is
// empty (see the package doc).
const DefaultSynchronous = "FULL"

// Options configures Open.
type Options struct {
	// Path of the database file; its folder is created 0700 when missing.
	Path string
	// Now is the clock used for TTL checks (time.Now when nil).
	Now func() time.Time
	// Synchronous is the durability level, case-insensitive: "FULL"
	// (default: survives a power cut), "NORMAL" (survives a crash of the
	// process, not of the machine) or "OFF" (bulk loads only). See the
	// package doc for the measured cost.
	Synchronous string
	// ReadConns bounds the reader pool (default 4).
	ReadConns int
	// BusyTimeout is how long a call waits for another process's lock on
	// the file before failing as vp.KindUnavailable (default 10s).
	BusyTimeout time.Duration
}

// Store is the SQLite backend.
type Store struct {
	file *sqlitefile.File
	w, r *sql.DB
	now  func() time.Time

	// Prepared read statements by SQL text: parsing a query costs about as
	// much as running it on an inbox-sized result.
	stmtMu sync.Mutex
	stmts  map[string]*sql.Stmt

	// The writer's three statements, prepared once: parsing them on every
	// op of every Write was a third of a small Write's CPU.
	selectVer, put, del *sql.Stmt

	path    string
	version dataVersion // DataVersion's connection (dataversion.go)
	// removeOnClose is OpenCopy's folder.
	removeOnClose string
}

const (
	selectVerSQL = `SELECT ver, expires FROM items WHERE pk = ? AND sk = ?`
	putSQL       = `INSERT OR REPLACE INTO items (` + columns + `) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)`
	deleteSQL    = `DELETE FROM items WHERE pk = ? AND sk = ?`
)

var _ store.Store = (*Store)(nil)

const schema = `
CREATE TABLE IF NOT EXISTS items (
	pk TEXT NOT NULL, sk TEXT NOT NULL,
	g1pk TEXT, g1sk TEXT, g2pk TEXT, g2sk TEXT, g3pk TEXT, g3sk TEXT, g4pk TEXT, g4sk TEXT,
	expires INTEGER NOT NULL DEFAULT 0,
	ver INTEGER NOT NULL,
	data BLOB,
	PRIMARY KEY (pk, sk)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS items_g1 ON items (g1pk, g1sk, pk, sk) WHERE g1pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_g2 ON items (g2pk, g2sk, pk, sk) WHERE g2pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_g3 ON items (g3pk, g3sk, pk, sk) WHERE g3pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_g4 ON items (g4pk, g4sk, pk, sk) WHERE g4pk IS NOT NULL;
CREATE INDEX IF NOT EXISTS items_expiry ON items (expires) WHERE expires > 0;
`

// Open opens (creating when needed) the database at opts.Path.
func Open(ctx context.Context, opts Options) (*Store, error) {
	if opts.Synchronous == "" {
		opts.Synchronous = DefaultSynchronous
	}
	f, err := sqlitefile.Open(ctx, sqlitefile.Options{
		Path: opts.Path, Synchronous: opts.Synchronous, ReadConns: opts.ReadConns, Schema: schema,
		BusyTimeout: opts.BusyTimeout,
	})
	if err != nil {
		return nil, fmt.Errorf("store.sqlite.Open: %w", err)
	}
	w := f.W
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	st := &Store{file: f, w: w, r: f.R, now: now, stmts: map[string]*sql.Stmt{}, path: opts.Path}
	for _, p := range []struct {
		stmt **sql.Stmt
		sql  string
	}{{&st.selectVer, selectVerSQL}, {&st.put, putSQL}, {&st.del, deleteSQL}} {
		if *p.stmt, err = w.PrepareContext(ctx, p.sql); err != nil {
			_ = st.Close()
			return nil, fmt.Errorf("store.sqlite.Open: preparing the writer's statements: %w", err)
		}
	}
	return st, nil
}

// Close closes both connection pools.
func (s *Store) Close() error {
	s.stmtMu.Lock()
	for _, st := range s.stmts {
		_ = st.Close()
	}
	s.stmts = nil
	s.stmtMu.Unlock()
	for _, st := range []*sql.Stmt{s.selectVer, s.put, s.del} {
		if st != nil {
			_ = st.Close()
		}
	}
	s.version.close()
	err := s.file.Close()
	if s.removeOnClose != "" {
		_ = os.RemoveAll(s.removeOnClose)
	}
	return err
}

// read returns the prepared reader statement for query. The set of queries
// is small and fixed (one per index and sort-key condition shape).
func (s *Store) read(ctx context.Context, query string) (*sql.Stmt, error) {
	s.stmtMu.Lock()
	defer s.stmtMu.Unlock()
	if st, ok := s.stmts[query]; ok {
		return st, nil
	}
	if s.stmts == nil {
		return nil, errors.New("store.sqlite: closed")
	}
	st, err := s.r.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	s.stmts[query] = st
	return st, nil
}

const columns = `pk, sk, g1pk, g1sk, g2pk, g2sk, g3pk, g3sk, g4pk, g4sk, expires, ver, data`

type scanner interface{ Scan(...any) error }

func scanItem(sc scanner) (store.Item, error) {
	var it store.Item
	var g [store.NumGSI * 2]sql.NullString
	err := sc.Scan(&it.Key.PK, &it.Key.SK, &g[0], &g[1], &g[2], &g[3], &g[4], &g[5], &g[6], &g[7],
		&it.ExpiresAt, &it.Version, &it.Data)
	for i := range it.GSI {
		it.GSI[i] = store.Key{PK: g[2*i].String, SK: g[2*i+1].String}
	}
	return it, err
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, k store.Key) (store.Item, error) {
	st, err := s.read(ctx, `SELECT `+columns+` FROM items WHERE pk = ? AND sk = ? AND (expires = 0 OR expires > ?)`)
	if err != nil {
		return store.Item{}, classify(fmt.Errorf("store.sqlite.Get: %w", err))
	}
	it, err := scanItem(st.QueryRowContext(ctx, k.PK, k.SK, s.now().Unix()))
	if errors.Is(err, sql.ErrNoRows) {
		return store.Item{}, store.ErrNotFound
	}
	if err != nil {
		return store.Item{}, classify(fmt.Errorf("store.sqlite.Get: %w", err))
	}
	return it, nil
}

// Query implements store.Store.
func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	if err := store.ValidateQuery(q); err != nil {
		return nil, err
	}
	pkCol, skCol := "pk", "sk"
	if q.Index != store.Primary {
		pkCol, skCol = fmt.Sprintf("g%dpk", q.Index), fmt.Sprintf("g%dsk", q.Index)
	}
	var where []string
	args := []any{}
	where = append(where, pkCol+" = ?")
	args = append(args, q.PK)
	switch {
	case q.SKPrefix != "":
		// A range on the prefix uses the index; LIKE/GLOB would not with
		// arbitrary bytes in the prefix.
		where = append(where, skCol+" >= ?", skCol+" < ?")
		args = append(args, q.SKPrefix, q.SKPrefix+"\U0010FFFF")
	default:
		if q.SKFrom != "" {
			where = append(where, skCol+" >= ?")
			args = append(args, q.SKFrom)
		}
		if q.SKTo != "" {
			where = append(where, skCol+" <= ?")
			args = append(args, q.SKTo)
		}
	}
	cmp, dir := ">", "ASC"
	if q.Reverse {
		cmp, dir = "<", "DESC"
	}
	order := skCol + " " + dir
	if q.Index != store.Primary {
		// Index sort keys need not be unique; the table key breaks ties the
		// same way on every page.
		order += ", pk " + dir + ", sk " + dir
	}
	if q.After != nil {
		if q.Index == store.Primary {
			where = append(where, "sk "+cmp+" ?")
			args = append(args, q.After.Key.SK)
		} else {
			where = append(where, fmt.Sprintf("(%s, pk, sk) %s (?, ?, ?)", skCol, cmp))
			args = append(args, q.After.Index.SK, q.After.Key.PK, q.After.Key.SK)
		}
	}
	where = append(where, "(expires = 0 OR expires > ?)")
	args = append(args, s.now().Unix(), q.Limit)
	st, err := s.read(ctx, `SELECT `+columns+` FROM items WHERE `+strings.Join(where, " AND ")+` ORDER BY `+order+` LIMIT ?`)
	if err != nil {
		return nil, classify(fmt.Errorf("store.sqlite.Query: %w", err))
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, classify(fmt.Errorf("store.sqlite.Query: %w", err))
	}
	defer rows.Close()
	var out []store.Item
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, classify(fmt.Errorf("store.sqlite.Query: %w", err))
		}
		out = append(out, it)
	}
	return out, classify(rows.Err())
}

// Write implements store.Store: all ops run in one IMMEDIATE transaction on
// the single writer connection.
func (s *Store) Write(ctx context.Context, ops ...store.Op) error {
	if err := store.Validate(ops); err != nil {
		return err
	}
	return s.transact(ctx, ops)
}

var _ store.LargeTransactor = (*Store)(nil)

// TransactLarge implements store.LargeTransactor: Write without the
// MaxTransactOps cap (SQLite has none), in the same single transaction.
// Readers in WAL mode keep reading the last commit meanwhile and see all
// of it at once when it commits.
func (s *Store) TransactLarge(ctx context.Context, ops []store.Op) error {
	if err := store.ValidateLarge(ops); err != nil {
		return err
	}
	return s.transact(ctx, ops)
}

func (s *Store) transact(ctx context.Context, ops []store.Op) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return classify(fmt.Errorf("store.sqlite.Write: begin: %w", err))
	}
	defer func() { _ = tx.Rollback() }()
	now := s.now().Unix()
	for i, op := range ops {
		var ver int64
		var exp int64
		err := tx.StmtContext(ctx, s.selectVer).QueryRowContext(ctx, op.Key.PK, op.Key.SK).Scan(&ver, &exp)
		exists := err == nil && store.Live(exp, time.Unix(now, 0))
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return classify(fmt.Errorf("store.sqlite.Write: %w", err))
		}
		if !holds(op.Cond, exists, ver) {
			return &store.ConditionError{Index: i, Key: op.Key}
		}
		if !exists {
			ver = 0
		}
		switch op.Kind {
		case store.OpPut:
			it := op.Item
			g := make([]any, 0, store.NumGSI*2)
			for _, k := range it.GSI {
				if k.IsZero() {
					g = append(g, nil, nil)
				} else {
					g = append(g, k.PK, k.SK)
				}
			}
			args := append([]any{it.Key.PK, it.Key.SK}, g...)
			args = append(args, it.ExpiresAt, ver+1, it.Data)
			if _, err := tx.StmtContext(ctx, s.put).ExecContext(ctx, args...); err != nil {
				return classify(fmt.Errorf("store.sqlite.Write: put: %w", err))
			}
		case store.OpDelete:
			if _, err := tx.StmtContext(ctx, s.del).ExecContext(ctx, op.Key.PK, op.Key.SK); err != nil {
				return classify(fmt.Errorf("store.sqlite.Write: delete: %w", err))
			}
		case store.OpCheck:
		default:
			return fmt.Errorf("%w: op %d has no kind", store.ErrInvalid, i)
		}
	}
	if err := tx.Commit(); err != nil {
		return classify(fmt.Errorf("store.sqlite.Write: commit: %w", err))
	}
	return nil
}

func holds(c store.Cond, exists bool, ver int64) bool {
	switch c.Kind {
	case store.CondNotExists:
		return !exists
	case store.CondExists:
		return exists
	case store.CondVersion:
		return exists && ver == c.Version
	}
	return true
}

// PurgeExpired deletes up to limit items whose TTL has passed and returns
// how many it removed. Reads already hide them; this reclaims the space.
func (s *Store) PurgeExpired(ctx context.Context, limit int) (int64, error) {
	r, err := s.w.ExecContext(ctx, `DELETE FROM items WHERE (pk, sk) IN (SELECT pk, sk FROM items WHERE expires > 0 AND expires <= ? LIMIT ?)`,
		s.now().Unix(), limit)
	if err != nil {
		return 0, fmt.Errorf("store.sqlite.PurgeExpired: %w", err)
	}
	return r.RowsAffected()
}

// classify marks SQLite's BUSY and LOCKED results as vp.KindUnavailable:
// they mean another process held the file's lock for longer than the busy
// timeout, which a retry a moment later overcomes — not a bug. Other
// errors are returned unchanged.
func classify(err error) error {
	var c interface{ Code() int } // *modernc.org/sqlite.Error
	if err != nil && errors.As(err, &c) {
		switch c.Code() & 0xff { // the primary result code
		case sqliteBusy, sqliteLocked:
			return vp.Unavailable("store.sqlite", err)
		}
	}
	return err
}

// SQLite primary result codes (sqlite3.h).
const (
	sqliteBusy   = 5
	sqliteLocked = 6
)
