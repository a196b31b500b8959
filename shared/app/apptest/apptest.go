// Package apptest builds the services of VantagePeers for tests through the
// composition root (app.Build), on real ports: a store of a test backend
// (SQLite on disk unless told otherwise), the local search index, the local
// embedder and the store-backed queue, all in the test's temporary
// directory. Tests of one package that need another package's service get
// it from here, wired as the binaries wire it, instead of calling its New.
// Only tests import it.
package apptest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

// Options are what a test varies. The embedded Ports go to app.Build as
// they are, after the zero fields below are filled in.
type Options struct {
	// Ports: Groups zero builds every group (app.All); Store nil opens one
	// of Backend; Index nil opens a local index (unless NoIndex); Embedder
	// and Queue nil are the local embedder and the store queue; Cursors nil
	// is a fresh signer. Now, Logger, GitHub, OutboxJitter and the rest are
	// the test's.
	app.Ports
	// Backend opens the store when Ports.Store is nil (SQLite when zero).
	// Its store keeps the real clock, as the binaries' stores do.
	Backend teststores.Backend
	// NoIndex builds without a search index: no keyword index, no memory.
	NoIndex bool
}

// New builds the services of o for t; they are closed when t ends, before
// the ports apptest opened.
func New(t testing.TB, o Options) *app.Services {
	t.Helper()
	s, err := Build(t, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Build is New returning Build's error, for tests of what app.Build
// refuses.
func Build(t testing.TB, o Options) (*app.Services, error) {
	t.Helper()
	p := o.Ports
	if p.Groups == 0 {
		p.Groups = app.All
	}
	if p.Store == nil {
		b := o.Backend
		if b.Open == nil {
			b = teststores.All[0]
		}
		p.Store = b.Open(t, nil)
	}
	if p.Index == nil && !o.NoIndex {
		idx, err := searchlocal.Open(context.Background(), searchlocal.Options{Path: filepath.Join(t.TempDir(), "search.db")})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = idx.Close() })
		p.Index = idx
	}
	if p.Index != nil && p.Embedder == nil {
		p.Embedder = embedlocal.New(embedlocal.Options{})
	}
	if p.Index != nil && p.Queue == nil {
		p.Queue = storequeue.New(storequeue.Options{Store: p.Store, Name: "embed"})
	}
	if p.Cursors == nil {
		p.Cursors = domaintest.Signer(t)
	}
	s, err := app.Build(context.Background(), p)
	if err != nil {
		return nil, err
	}
	// Registered last, so run first: the outbox's batched removals reach
	// the store before it closes.
	t.Cleanup(s.Close)
	return s, nil
}
