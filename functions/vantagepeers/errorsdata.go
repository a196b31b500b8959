package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/templates"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// maxStoredBuckets bounds what is read of one deployment's templates.
const maxStoredBuckets = 100_000

// deploymentLearner starts from the templates the monitor stored for a
// deployment. Opening the database, even to read, may write its folder
// (SQLite's -wal and -shm files), so a copy of it is opened in a
// temporary folder: the data dir is never written. A copy taken while a
// server writes may miss its last transaction, not more.
func deploymentLearner(ctx context.Context, dataDir, tenant, name string) (*templates.Learner, error) {
	const op = "errors group"
	if err := vp.CheckKeyText(op, "deployment", name, vp.MaxNameBytes, true); err != nil {
		return nil, err
	}
	src := filepath.Join(dataDir, "vantagepeers.db")
	if _, err := os.Stat(src); err != nil {
		return nil, fmt.Errorf("errors group: --deployment: no data at %s (--data-dir or VP_DATA_DIR): %w", dataDir, err)
	}
	tmp, err := os.MkdirTemp("", "vp-errors-group-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for _, suffix := range []string{"", "-wal"} {
		if err := copyFile(src+suffix, filepath.Join(tmp, "vantagepeers.db"+suffix)); err != nil && !(suffix != "" && errors.Is(err, os.ErrNotExist)) {
			return nil, fmt.Errorf("errors group: copying the database: %w", err)
		}
	}
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(tmp, "vantagepeers.db"), Synchronous: "OFF"})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	if _, _, err := errormon.Deployments.Get(ctx, st, op, "deployment", name, errormon.Deployments.KeyOf(tenant, table.Values{"name": name})); err != nil {
		return nil, err
	}
	q := errormon.TemplateBuckets.Query(tenant, store.Primary, table.Values{"deployment": name})
	q.SKPrefix = templates.Version + "#" // another version's templates are never read
	rows, err := records.QueryAll(ctx, st, q, maxStoredBuckets)
	if err != nil {
		return nil, records.Err(op, err)
	}
	stt := templates.State{Version: templates.Version}
	for _, it := range rows {
		b, err := records.Decode[errormon.TemplateBucket](op, it)
		if err != nil {
			return nil, err
		}
		stt.Buckets = append(stt.Buckets, b.Bucket)
	}
	return templates.Restore(templates.Options{}, stt)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}
