package templates

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// loghubPath is the labelled dev set (Loghub-2k, eight systems), kept
// next to the repository, not in it; tests that need it skip without it.
var loghubPath = filepath.Join("..", "..", "..", "..", "shared", "bench", "loghub-dev.json")

type loghub struct {
	DrainGA  map[string]float64     `json:"drain_ga"`
	Datasets map[string][][2]string `json:"datasets"`
}

func readLoghub(tb testing.TB) loghub {
	tb.Helper()
	p := loghubPath
	if v := os.Getenv("VP_LOGHUB"); v != "" {
		p = v
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Skipf("no Loghub dev set: %v", err)
	}
	var d loghub
	if err := json.Unmarshal(b, &d); err != nil {
		tb.Fatalf("%s: %v", p, err)
	}
	return d
}

func (d loghub) systems() []string {
	var out []string
	for k := range d.Datasets {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// score is one system's grouping measured against its labels.
type score struct {
	templates, groups     int
	ga, precision, recall float64
}

// groupAll learns lines in order and returns each line's final group
// (its key at arrival, resolved through the merges that followed).
func groupAll(l *Learner, lines []string) []string {
	keys := make([]string, len(lines))
	for i, m := range lines {
		keys[i] = l.LearnMessage(Scope{}, m).Key
	}
	for i := range keys {
		keys[i] = l.Resolve(keys[i])
	}
	return keys
}

func scoreOf(groups, labels []string) score {
	s := score{templates: distinct(labels), groups: distinct(groups)}
	s.ga = groupingAccuracy(groups, labels)
	s.precision, s.recall = pairScores(groups, labels)
	return s
}

func distinct(xs []string) int {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return len(m)
}

// groupingAccuracy: the share of lines whose group is exactly the set of
// lines sharing their label.
func groupingAccuracy(groups, labels []string) float64 {
	byGroup, byLabel := map[string]map[string]bool{}, map[string]map[string]bool{}
	for i := range groups {
		if byGroup[groups[i]] == nil {
			byGroup[groups[i]] = map[string]bool{}
		}
		byGroup[groups[i]][labels[i]] = true
		if byLabel[labels[i]] == nil {
			byLabel[labels[i]] = map[string]bool{}
		}
		byLabel[labels[i]][groups[i]] = true
	}
	ok := 0
	for i := range groups {
		if len(byGroup[groups[i]]) == 1 && len(byLabel[labels[i]]) == 1 {
			ok++
		}
	}
	return float64(ok) / float64(max(1, len(groups)))
}

// pairScores: pairwise precision and recall, from group, label and
// intersection sizes.
func pairScores(groups, labels []string) (precision, recall float64) {
	pairs := func(n int) float64 { return float64(n) * float64(n-1) / 2 }
	byGroup, byLabel, byBoth := map[string]int{}, map[string]int{}, map[[2]string]int{}
	for i := range groups {
		byGroup[groups[i]]++
		byLabel[labels[i]]++
		byBoth[[2]string{groups[i], labels[i]}]++
	}
	var together, same, both float64
	for _, n := range byGroup {
		together += pairs(n)
	}
	for _, n := range byLabel {
		same += pairs(n)
	}
	for _, n := range byBoth {
		both += pairs(n)
	}
	precision, recall = 1, 1
	if together > 0 {
		precision = both / together
	}
	if same > 0 {
		recall = both / same
	}
	return precision, recall
}

func scoreLoghub(d loghub, tune tuning) (map[string]score, float64) {
	out := map[string]score{}
	sum := 0.0
	for _, sys := range d.systems() {
		lines, labels := split(d.Datasets[sys])
		l := New(Options{})
		l.tune = tune
		out[sys] = scoreOf(groupAll(l, lines), labels)
		sum += out[sys].ga
	}
	return out, sum / float64(len(out))
}

func split(rows [][2]string) (lines, labels []string) {
	for _, r := range rows {
		lines = append(lines, r[0])
		labels = append(labels, r[1])
	}
	return lines, labels
}

func table(d loghub, scores map[string]score, avg float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-10s %9s %6s %6s %9s %7s %8s\n", "system", "templates", "groups", "GA", "precision", "recall", "Drain GA")
	for _, sys := range d.systems() {
		s := scores[sys]
		fmt.Fprintf(&b, "%-10s %9d %6d %6.3f %9.4f %7.4f %8.3f\n", sys, s.templates, s.groups, s.ga, s.precision, s.recall, d.DrainGA[sys])
	}
	fmt.Fprintf(&b, "%-10s %9s %6s %6.3f\n", "average", "", "", avg)
	return b.String()
}

func TestLoghubTable(t *testing.T) {
	d := readLoghub(t)
	scores, avg := scoreLoghub(d, defaultTuning)
	t.Logf("\n%s", table(d, scores, avg))
}
