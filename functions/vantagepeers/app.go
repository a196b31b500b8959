package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/coord"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// app is the embedded product: one data directory, one SQLite store, and the
// services built on it.
type app struct {
	store  *sqlite.Store
	tokens *auth.Tokens
	coord  *coord.Service
	// newMaster is the master token's secret when this start created it.
	newMaster string
}

func openApp(ctx context.Context, dataDir string, log *slog.Logger) (*app, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	// MkdirAll leaves an existing folder's mode alone; the data is secret.
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dataDir, "vantagepeers.db")})
	if err != nil {
		return nil, err
	}
	masterHash, created, err := auth.EnsureMaster(ctx, st, os.Getenv("VP_MASTER_TOKEN"))
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	key, err := auth.EnsureKey(ctx, st, "cursor")
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	signer, err := listing.NewSigner(key)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	return &app{
		store:     st,
		tokens:    auth.New(auth.Options{Store: st, MasterHash: masterHash}),
		coord:     coord.New(coord.Options{Store: st, Cursors: signer, Logger: log}),
		newMaster: created,
	}, nil
}

func (a *app) Close() error { return a.store.Close() }
