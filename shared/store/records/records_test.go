package records_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// TestScanAndQueryAll: 250 rows seeded (more than two pages of either)
// come back exactly, and each stops where it is told to.
func TestScanAndQueryAll(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const n = 250
	for i := range n {
		it := store.Item{Key: store.Key{PK: "T#acme#P", SK: fmt.Sprintf("%04d", i)}, Data: []byte(`{}`)}
		if err := st.Write(ctx, store.Put(it, store.Always)); err != nil {
			t.Fatal(err)
		}
	}
	q := store.Query{PK: "T#acme#P"}
	var seen []string
	if err := records.Scan(ctx, st, q, func(it store.Item) (bool, error) { seen = append(seen, it.Key.SK); return true, nil }); err != nil {
		t.Fatal(err)
	}
	if len(seen) != n || seen[0] != "0000" || seen[n-1] != "0249" {
		t.Fatalf("Scan saw %d rows (%v … %v), want %d in order", len(seen), seen[0], seen[len(seen)-1], n)
	}
	stopped := 0
	if err := records.Scan(ctx, st, q, func(store.Item) (bool, error) { stopped++; return stopped < 150, nil }); err != nil || stopped != 150 {
		t.Fatalf("Scan asked to stop at 150 read %d (%v)", stopped, err)
	}
	all, err := records.QueryAll(ctx, st, q, 10_000)
	if err != nil || len(all) != n {
		t.Fatalf("QueryAll: %d rows (%v), want %d", len(all), err, n)
	}
	some, err := records.QueryAll(ctx, st, q, 210)
	if err != nil || len(some) != 210 {
		t.Fatalf("QueryAll max 210: %d rows (%v)", len(some), err)
	}
}
