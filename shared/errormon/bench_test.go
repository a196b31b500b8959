package errormon_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// BenchmarkScan measures one scan of a deployment's logs end to end on
// SQLite: reading pages from the source, fingerprinting every event,
// grouping, and committing the counts with the cursor (the issues of new
// groups are outbox jobs, not drained here). It reports events/s; goal:
// ≥ 50,000 a second per core embedded.
func BenchmarkScan(b *testing.B) {
	const events, causes = 50_000, 40
	at := time.Now().Add(-time.Minute)
	log := make([]source.Event, events)
	for k := range log {
		c := k % causes
		log[k] = source.Event{ID: fmt.Sprintf("exec-%d", k), Time: at,
			Function: fmt.Sprintf("tasks:handler%d", c), Type: "TypeError",
			Message: fmt.Sprintf("Cannot read properties of undefined (reading 'field%d') for user %d at 2026-11-30T12:%02d:%02dZ after %dms",
				c, k*7919%100000, k%60, k%60, k%900),
			Stack: fmt.Sprintf("TypeError: x\n    at handler%d (convex/tasks.ts:%d:7)\n    at run (node_modules/convex/dist/server.js:%d:3)",
				c, 10+k%50, 100+k%7)}
	}
	scanned := 0
	for range b.N {
		b.StopTimer()
		e := newEnv(b)
		e.addDeployment(b, "app")
		e.src.add(log...)
		b.StartTimer()
		scanned += e.scan(b, "app")
		b.StopTimer()
		if gs := e.groups(b); len(gs) != causes {
			b.Fatalf("%d groups for %d causes", len(gs), causes)
		}
	}
	b.ReportMetric(float64(scanned)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}
