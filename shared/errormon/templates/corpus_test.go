package templates

import (
	"sort"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint/corpus"
)

// The corpus the fingerprint package scores fp1 on: the same seed and
// size.
const (
	corpusSeed     = 12
	corpusPerCause = 120
)

// TestCorpusCauseByCause: on the labelled Convex corpus, learning keeps
// every near-miss apart (no group holds two causes: a field name, a
// status, an exit code, a constraint that differs) and keeps causes
// together. Recall is a little under fp1's (0.98): a boolean flag's
// value is kept (keepBools), so the two causes that log one
// (retry=true|false, "livemode":true|false) are two groups each, the
// cost of keeping "isOverlap:true" and "isOverlap:false" apart.
func TestCorpusCauseByCause(t *testing.T) {
	events := corpus.Generate(corpusSeed, corpusPerCause)
	l := New(Options{})
	keys := make([]string, len(events))
	labels := make([]string, len(events))
	for i, e := range events {
		keys[i] = l.Learn(e.Event).Key
		labels[i] = e.Label
	}
	for i := range keys {
		keys[i] = l.Resolve(keys[i])
	}
	byKey := map[string]map[string]bool{}
	for i, k := range keys {
		if byKey[k] == nil {
			byKey[k] = map[string]bool{}
		}
		byKey[k][labels[i]] = true
	}
	for k, ls := range byKey {
		if len(ls) > 1 {
			var names []string
			for n := range ls {
				names = append(names, n)
			}
			sort.Strings(names)
			t.Errorf("group %s (%s) merges %s", k, l.byKey[k].text(), strings.Join(names, " + "))
		}
	}
	p, r := pairScores(keys, labels)
	t.Logf("corpus: %d events, %d causes, %d groups; precision %.4f, recall %.4f", len(events), len(corpus.Labels()), distinct(keys), p, r)
	if p != 1 || r < 0.97 {
		t.Errorf("precision %.4f, recall %.4f: want 1 and >= 0.97", p, r)
	}
}
