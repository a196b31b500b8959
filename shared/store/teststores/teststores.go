// Package teststores opens each store backend for the domain packages'
// tests — SQLite in the test's temporary directory, and DynamoDB Local
// through dynamotest — so that every domain test runs against both without
// its own copy of this table.
package teststores

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// Backend is one store implementation.
type Backend struct {
	Name string
	// Open returns an empty store, closed when t ends; now is its clock
	// (nil: time.Now).
	Open func(t testing.TB, now func() time.Time) store.Store
}

// All lists the backends, SQLite first. A package using DynamoDB calls
// dynamotest.Main from its TestMain.
var All = []Backend{
	{"sqlite", func(t testing.TB, now func() time.Time) store.Store {
		// NORMAL: the suites test behaviour, not power-loss durability, and
		// FULL's fsync per commit would only slow them.
		s, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db"), Now: now, Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}},
	{"dynamodb", func(t testing.TB, now func() time.Time) store.Store { return dynamotest.NewStore(t, now) }},
}

// Each runs fn as one subtest per backend; under -short, SQLite only.
func Each(t *testing.T, fn func(t *testing.T, b Backend)) {
	for _, b := range All {
		t.Run(b.Name, func(t *testing.T) {
			if b.Name == "dynamodb" && testing.Short() {
				t.Skip("-short: SQLite only")
			}
			fn(t, b)
		})
	}
}
