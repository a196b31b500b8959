package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// BenchmarkCommit measures what synchronous=FULL costs over NORMAL: one
// acknowledged write (a two-op transaction, as the domain writes a row and
// its outbox entry) per iteration, on disk — set VP_BENCH_DIR to put the
// file on the disk to measure (default: the test's temporary folder, which
// must not be a tmpfs for the numbers to mean anything). "serial" is the
// latency of one writer; "parallel" the throughput of many callers sharing
// the single writer connection.
//
//	go test -run '^$' -bench Commit -benchtime 2000x ./shared/store/sqlite
func BenchmarkCommit(b *testing.B) {
	for _, mode := range []string{"NORMAL", "FULL"} {
		for _, shape := range []string{"serial", "parallel"} {
			b.Run(mode+"/"+shape, func(b *testing.B) {
				dir := os.Getenv("VP_BENCH_DIR")
				if dir == "" {
					dir = b.TempDir()
				} else {
					dir, _ = os.MkdirTemp(dir, "bench")
					b.Cleanup(func() { _ = os.RemoveAll(dir) })
				}
				s, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(dir, "bench.db"), Synchronous: mode})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				var seq atomic.Int64
				write := func() error {
					i := seq.Add(1)
					return s.Write(context.Background(),
						store.Put(store.Item{Key: store.Key{PK: "T#a#BENCH", SK: fmt.Sprintf("%09d", i)}, Data: []byte(`{"title":"a task of ordinary size","status":"todo"}`)}, store.IfNotExists),
						store.Put(store.Item{Key: store.Key{PK: "T#a#OUTBOX", SK: fmt.Sprintf("%09d", i)}, Data: []byte(`{"kind":"notify"}`)}, store.Always))
				}
				b.ResetTimer()
				if shape == "serial" {
					for range b.N {
						if err := write(); err != nil {
							b.Fatal(err)
						}
					}
				} else {
					b.SetParallelism(4)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							if err := write(); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
			})
		}
	}
}
