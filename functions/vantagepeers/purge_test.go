package main

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// TestPurgeExpiredReclaimsDeadItems: the embedded server's purge deletes
// the items whose TTL has passed (an unused OAuth client, a rate-limit
// counter) from the SQLite file, and leaves the live ones.
func TestPurgeExpiredReclaimsDeadItems(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db"), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, exp := range []int64{now.Add(-time.Hour).Unix(), now.Add(-time.Second).Unix(), now.Add(time.Hour).Unix(), 0} {
		it := store.Item{Key: store.Key{PK: "P", SK: string(rune('a' + i))}, ExpiresAt: exp, Data: []byte(`{}`)}
		if err := st.Write(ctx, store.Put(it, store.Always)); err != nil {
			t.Fatal(err)
		}
	}
	run, stop := context.WithCancel(ctx)
	rec := &recordingPurger{st: st, purged: make(chan int64, 10)}
	done := make(chan struct{})
	go func() { purgeExpired(run, rec, time.Hour, slog.New(slog.DiscardHandler)); close(done) }()
	select {
	case n := <-rec.purged:
		if n != 2 {
			t.Errorf("the first pass purged %d items, want the 2 expired", n)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the purge loop never ran")
	}
	stop()
	<-done
	if n, err := st.PurgeExpired(ctx, 100); n != 0 || err != nil {
		t.Errorf("%d expired items left (%v)", n, err)
	}
	for _, sk := range []string{"c", "d"} {
		if _, err := st.Get(ctx, store.Key{PK: "P", SK: sk}); err != nil {
			t.Errorf("live item %s: %v", sk, err)
		}
	}
	if _, err := st.Get(ctx, store.Key{PK: "P", SK: "a"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("expired item: %v", err)
	}
}

type recordingPurger struct {
	st     purger
	purged chan int64
}

func (r *recordingPurger) PurgeExpired(ctx context.Context, limit int) (int64, error) {
	n, err := r.st.PurgeExpired(ctx, limit)
	if err == nil {
		r.purged <- n
	}
	return n, err
}
