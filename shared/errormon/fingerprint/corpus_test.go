package fingerprint_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint/corpus"
)

// corpusSeed and corpusPerCause fix the corpus the grouping is scored on.
const (
	corpusSeed     = 12
	corpusPerCause = 120
)

// pairScores returns the pairwise precision and recall of a grouping
// against labels: precision is the share of the pairs grouped together
// that share a label, recall the share of the pairs sharing a label that
// are grouped together. Pairs are counted from the sizes of the groups,
// the labels and their intersections, not enumerated.
func pairScores(groups, labels []string) (precision, recall float64) {
	pairs := func(n int) float64 { return float64(n) * float64(n-1) / 2 }
	byGroup, byLabel, byBoth := map[string]int{}, map[string]int{}, map[[2]string]int{}
	for i := range groups {
		byGroup[groups[i]]++
		byLabel[labels[i]]++
		byBoth[[2]string{groups[i], labels[i]}]++
	}
	var together, sameLabel, both float64
	for _, n := range byGroup {
		together += pairs(n)
	}
	for _, n := range byLabel {
		sameLabel += pairs(n)
	}
	for _, n := range byBoth {
		both += pairs(n)
	}
	precision, recall = 1, 1
	if together > 0 {
		precision = both / together
	}
	if sameLabel > 0 {
		recall = both / sameLabel
	}
	return precision, recall
}

func TestPairScores(t *testing.T) {
	// Two labels of three; one event of b grouped with a.
	groups := []string{"1", "1", "1", "1", "2", "2"}
	labels := []string{"a", "a", "a", "b", "b", "b"}
	p, r := pairScores(groups, labels)
	// grouped together: C(4,2)+C(2,2) = 7 pairs, of which a-a 3 + b-b 1 = 4.
	// same label: 3+3 = 6 pairs, of which grouped 4.
	if fmt.Sprintf("%.4f %.4f", p, r) != fmt.Sprintf("%.4f %.4f", 4.0/7, 4.0/6) {
		t.Fatalf("pairScores = %v, %v", p, r)
	}
}

// TestCorpusGrouping scores the fingerprints on the labelled corpus: the
// occurrences of one cause must share a hash (recall), and no hash may
// hold two causes (precision), near-misses included.
func TestCorpusGrouping(t *testing.T) {
	events := corpus.Generate(corpusSeed, corpusPerCause)
	groups := make([]string, len(events))
	labels := make([]string, len(events))
	for i, e := range events {
		groups[i] = fingerprint.Of(e.Event).Hash
		labels[i] = e.Label
	}
	p, r := pairScores(groups, labels)
	t.Logf("corpus: %d events, %d causes, %d groups; pairwise precision %.4f, recall %.4f",
		len(events), len(corpus.Labels()), distinct(groups), p, r)
	if p < 0.98 || r < 0.98 {
		t.Errorf("precision %.4f, recall %.4f: want both >= 0.98\n%s", p, r, diagnose(events))
	}
	if len(corpus.Labels()) < 30 {
		t.Errorf("%d causes, want at least 30", len(corpus.Labels()))
	}
}

func distinct(xs []string) int {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return len(m)
}

// diagnose lists the causes split over several groups and the groups
// holding several causes, each with a sample fingerprint.
func diagnose(events []corpus.Event) string {
	byLabel := map[string]map[string]fingerprint.Fingerprint{}
	byHash := map[string]map[string]bool{}
	for _, e := range events {
		f := fingerprint.Of(e.Event)
		if byLabel[e.Label] == nil {
			byLabel[e.Label] = map[string]fingerprint.Fingerprint{}
		}
		byLabel[e.Label][f.Hash] = f
		if byHash[f.Hash] == nil {
			byHash[f.Hash] = map[string]bool{}
		}
		byHash[f.Hash][e.Label] = true
	}
	var b strings.Builder
	for _, l := range corpus.Labels() {
		if hs := byLabel[l]; len(hs) > 1 {
			fmt.Fprintf(&b, "split %s into %d groups, e.g.:\n", l, len(hs))
			n := 0
			for _, f := range hs {
				if n++; n > 3 {
					break
				}
				fmt.Fprintf(&b, "    %q %q %q %q\n", f.Function, f.Type, f.Message, f.Frame)
			}
		}
	}
	var merged []string
	for _, ls := range byHash {
		if len(ls) > 1 {
			var names []string
			for l := range ls {
				names = append(names, l)
			}
			sort.Strings(names)
			merged = append(merged, strings.Join(names, " + "))
		}
	}
	sort.Strings(merged)
	for _, m := range merged {
		fmt.Fprintf(&b, "merged %s\n", m)
	}
	return b.String()
}
