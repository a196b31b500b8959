package errormon

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/store/storetest"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func summaryService(t *testing.T) (*Service, *storetest.LosingWrites) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	ls := &storetest.LosingWrites{Store: st}
	return New(Options{Store: ls}), ls
}

// TestHoldSummaryEndsWhenEveryWriteLoses: taking a summary's lease when
// every write loses ends when the job's context does, Unavailable (the job
// runs again), instead of rereading for ever. (Without a deadline the
// attempts end after summaryWait, the bound of the lease wait.)
func TestHoldSummaryEndsWhenEveryWriteLoses(t *testing.T) {
	s, st := summaryService(t)
	hour := time.Now().Truncate(time.Hour).UnixMilli()
	st.Armed.Store(true)
	jctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, err := s.holdSummary(jctx, "op", outbox.Job{ID: "job1", Tenant: "acme"}, "d:1", "app", hour)
		done <- err
	}()
	select {
	case err := <-done:
		if !vp.IsKind(err, vp.KindUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("every write lost until the deadline: %v, want unavailable for the deadline", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("holdSummary still rereading after %d lost writes, long after its context ended", st.Lost.Load())
	}
}

// TestHoldSummaryWaitsForAnotherJobsLease: a lease another job holds is
// waited for within one attempt (no write is tried meanwhile), and taken
// once released, over the version the release wrote.
func TestHoldSummaryWaitsForAnotherJobsLease(t *testing.T) {
	s, st := summaryService(t)
	ctx := context.Background()
	hour := time.Now().Truncate(time.Hour).UnixMilli() // a record expires 30 days after its hour
	key := summaries.KeyOf("acme", table.Values{"id": "d:1"})
	held := summaryRecord{ID: "d:1", Deployment: "app", Hour: hour, IssueNumber: 7, LeaseOwner: "other", LeaseUntil: time.Now().Add(time.Minute).UnixMilli()}
	it, err := summaries.Item("op", "acme", held)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Write(ctx, store.Put(it, store.IfNotExists)); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(100 * time.Millisecond)
		cur, _ := st.Get(ctx, key)
		free := held
		free.LeaseOwner, free.LeaseUntil = "", 0
		it, _ := summaries.Item("op", "acme", free)
		if err := st.Write(ctx, store.Put(it, store.IfVersion(cur.Version))); err != nil {
			t.Error(err)
		}
	}()
	rec, ver, err := s.holdSummary(ctx, "op", outbox.Job{ID: "job1", Tenant: "acme"}, "d:1", "app", hour)
	if err != nil {
		t.Fatal(err)
	}
	cur, err := st.Get(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if rec.LeaseOwner != "job1" || rec.IssueNumber != 7 || ver != cur.Version || cur.Version != 3 {
		t.Fatalf("held %+v at version %d (stored %d); want job1's lease over the released record at version 3", rec, ver, cur.Version)
	}
}
