package fingerprint_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint/corpus"
)

// BenchmarkOf fingerprints the corpus, one event per iteration, and
// reports events per second on one goroutine (one core).
func BenchmarkOf(b *testing.B) {
	events := corpus.Generate(corpusSeed, corpusPerCause)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		fingerprint.Of(events[i].Event)
		if i++; i == len(events) {
			i = 0
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkMessage parameterises the corpus's messages alone.
func BenchmarkMessage(b *testing.B) {
	events := corpus.Generate(corpusSeed, corpusPerCause)
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		fingerprint.Message(events[i].Message)
		if i++; i == len(events) {
			i = 0
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "messages/s")
}
