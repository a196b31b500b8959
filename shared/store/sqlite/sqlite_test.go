package sqlite_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock *storetest.Clock) store.Store {
		s, err := sqlite.Open(context.Background(), sqlite.Options{
			Path: filepath.Join(t.TempDir(), "vp.db"),
			Now:  clock.Now,
		})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
