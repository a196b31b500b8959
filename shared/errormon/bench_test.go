package errormon_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint/corpus"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// BenchmarkScan measures one scan of a deployment's logs end to end on
// SQLite: reading pages from the source, fingerprinting every event,
// grouping, and committing the counts with the cursor (the issues of new
// groups are outbox jobs, not drained here). The log is the labelled
// corpus (50 causes in Convex, Node, browser, Go, Python, Java and plain
// log formats), about 50,000 events. It reports events/s; goal: ≥ 50,000
// a second per core embedded (run it with -cpu 1).
func BenchmarkScan(b *testing.B) {
	gen := corpus.Generate(12, 1000)
	log := make([]source.Event, len(gen))
	for k, e := range gen {
		log[k] = e.Event
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
		if gs := e.groups(b); len(gs) < 50 {
			b.Fatalf("%d groups for 50 causes", len(gs))
		}
	}
	b.ReportMetric(float64(scanned)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(0, "ns/op")
}
