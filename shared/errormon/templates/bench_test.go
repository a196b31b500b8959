package templates

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint/corpus"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// BenchmarkLearnLoghub groups the 16,000 dev lines, one event per
// iteration, in one Learner per pass (so that it keeps learning), and
// reports events per second on one goroutine (one core).
func BenchmarkLearnLoghub(b *testing.B) {
	d := readLoghub(b)
	var events []source.Event
	for _, sys := range d.systems() {
		for _, r := range d.Datasets[sys] {
			events = append(events, source.Event{Function: sys, Message: r[0]})
		}
	}
	benchLearn(b, events)
}

// BenchmarkLearnCorpus: the same on the Convex corpus (stacks and all).
func BenchmarkLearnCorpus(b *testing.B) {
	var events []source.Event
	for _, e := range corpus.Generate(corpusSeed, corpusPerCause) {
		events = append(events, e.Event)
	}
	benchLearn(b, events)
}

// BenchmarkFp1Loghub: what fp1 alone costs on the same lines, for
// comparison.
func BenchmarkFp1Loghub(b *testing.B) {
	d := readLoghub(b)
	var events []source.Event
	for _, sys := range d.systems() {
		for _, r := range d.Datasets[sys] {
			events = append(events, source.Event{Function: sys, Message: r[0]})
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		fingerprint.Of(events[i])
		if i++; i == len(events) {
			i = 0
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

func benchLearn(b *testing.B, events []source.Event) {
	b.ReportAllocs()
	l := New(Options{})
	i := 0
	for b.Loop() {
		l.Learn(events[i])
		if i++; i == len(events) {
			i = 0
			l = New(Options{})
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
