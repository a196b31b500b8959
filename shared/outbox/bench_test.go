package outbox_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

func benchOutbox(b *testing.B) (store.Store, *outbox.Outbox) {
	b.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(b.TempDir(), "vp.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = st.Close() })
	ob, err := outbox.New(outbox.Options{Store: st})
	if err != nil {
		b.Fatal(err)
	}
	if err := ob.Handle("search.index", func(context.Context, outbox.Job) error { return nil }); err != nil {
		b.Fatal(err)
	}
	return st, ob
}

// BenchmarkEnqueueFlush is the near-synchronous path of one user action on
// SQLite: a transaction with the change and a deduplicated job, then the
// job run at once (lease, handler, removal).
func BenchmarkEnqueueFlush(b *testing.B) {
	st, ob := benchOutbox(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		p, err := ob.Enqueue(ctx, "acme", "search.index", fmt.Sprintf("mem_%d", i), []byte(`{"id":"x"}`))
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Write(ctx, append([]store.Op{domainPut(fmt.Sprint(i), store.Always)}, p.Ops()...)...); err != nil {
			b.Fatal(err)
		}
		ob.Flush(ctx, p)
	}
}

// BenchmarkDrain is the worker's throughput on SQLite: jobs committed
// beforehand (1,000 per batch), drained through the due index.
func BenchmarkDrain(b *testing.B) {
	st, ob := benchOutbox(b)
	ctx := context.Background()
	const batch = 1000
	b.ReportAllocs()
	jobs := 0
	for b.Loop() {
		b.StopTimer()
		ops := make([]store.Op, 0, store.MaxTransactOps)
		for i := range batch {
			p, err := ob.Enqueue(ctx, "acme", "search.index", "", nil)
			if err != nil {
				b.Fatal(err)
			}
			ops = append(ops, p.Ops()...)
			if len(ops) == store.MaxTransactOps || i == batch-1 {
				if err := st.Write(ctx, ops...); err != nil {
					b.Fatal(err)
				}
				ops = ops[:0]
			}
		}
		b.StartTimer()
		n, err := ob.Drain(ctx)
		if err != nil || n != batch {
			b.Fatalf("drained %d of %d: %v", n, batch, err)
		}
		jobs += n
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(jobs), "ns/job")
}
