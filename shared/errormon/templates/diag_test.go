package templates

import (
	"fmt"
	"os"
	"sort"
	"testing"
)

// TestLoghubDiagnose prints, for the system named by VP_DIAG, the labels
// split over several groups and the groups holding several labels.
func TestLoghubDiagnose(t *testing.T) {
	sys := os.Getenv("VP_DIAG")
	if sys == "" {
		t.Skip("VP_DIAG names a system")
	}
	d := readLoghub(t)
	lines, labels := split(d.Datasets[sys])
	l := New(Options{})
	if r := os.Getenv("VP_RATIO"); r != "" {
		fmt.Sscan(r, &l.tune.ratio)
	}
	keys := groupAll(l, lines)
	tpl := map[string]string{}
	for i, k := range keys {
		if t := l.byKey[k]; t != nil {
			tpl[k] = t.text()
		} else {
			tpl[k] = "(unlearned) " + lines[i]
		}
	}
	byLabel := map[string]map[string]int{}
	byGroup := map[string]map[string]int{}
	for i := range keys {
		if byLabel[labels[i]] == nil {
			byLabel[labels[i]] = map[string]int{}
		}
		byLabel[labels[i]][keys[i]]++
		if byGroup[keys[i]] == nil {
			byGroup[keys[i]] = map[string]int{}
		}
		byGroup[keys[i]][labels[i]]++
	}
	var out []string
	for lab, gs := range byLabel {
		if len(gs) > 1 {
			s := fmt.Sprintf("SPLIT %s:", lab)
			for k, n := range gs {
				s += fmt.Sprintf("\n    %4d %s", n, tpl[k])
			}
			out = append(out, s)
		}
	}
	for k, ls := range byGroup {
		if len(ls) > 1 {
			s := fmt.Sprintf("MERGE %s: %v", tpl[k], ls)
			seen := map[string]int{}
			for i := range keys {
				if keys[i] == k && seen[labels[i]] < 3 {
					seen[labels[i]]++
					s += "\n      " + labels[i] + " " + lines[i]
				}
			}
			out = append(out, s)
		}
	}
	sort.Strings(out)
	for _, s := range out {
		fmt.Println(s)
	}
}

func TestLoghubSweep(t *testing.T) {
	if os.Getenv("VP_SWEEP") == "" {
		t.Skip("VP_SWEEP=1 runs it")
	}
	d := readLoghub(t)
	for _, v := range []float64{0.5, 1} {
		for _, r := range []float64{0.2, 0.25, 0.3, 0.35, 0.4, 0.5} {
			for _, mb := range []float64{0, 1} {
				for _, mv := range []int{3, 4, 5} {
					for _, mw := range []int{0} {
						tu := tuning{wordCost: 1, valueCost: v, ratio: r, minBudget: mb, maxWords: mw, minValues: mv}
						sc, avg := scoreLoghub(d, tu)
						minP := 1.0
						line := ""
						for _, sys := range d.systems() {
							minP = min(minP, sc[sys].Precision)
							line += fmt.Sprintf(" %s=%.3f/%.3f", sys[:3], sc[sys].GA, sc[sys].Precision)
						}
						fmt.Printf("mv=%d v=%.2f r=%.2f mb=%.0f mw=%3d avg=%.4f minP=%.4f%s\n", mv, v, r, mb, mw, avg, minP, line)
					}
				}
			}
		}
	}
}

// TestLoghubLeaveOneOut: for each system, the grid point (ratio,
// minValues) best on the seven others (average GA, precision >= 0.99 on
// each), and what it scores on the one left out.
func TestLoghubLeaveOneOut(t *testing.T) {
	if os.Getenv("VP_SWEEP") == "" {
		t.Skip("VP_SWEEP=1 runs it")
	}
	d := readLoghub(t)
	type point struct {
		tu tuning
		sc map[string]Scores
	}
	var grid []point
	for _, r := range []float64{0.2, 0.25, 0.3, 0.35, 0.4, 0.5} {
		for _, mv := range []int{2, 3, 4, 5, 6} {
			tu := defaultTuning
			tu.ratio, tu.minValues = r, mv
			sc, _ := scoreLoghub(d, tu)
			grid = append(grid, point{tu, sc})
		}
	}
	sum := 0.0
	for _, out := range d.systems() {
		best, bestAvg := -1, -1.0
		for i, p := range grid {
			avg, ok := 0.0, true
			for _, sys := range d.systems() {
				if sys == out {
					continue
				}
				avg += p.sc[sys].GA / 7
				ok = ok && p.sc[sys].Precision >= 0.99
			}
			if ok && avg > bestAvg {
				best, bestAvg = i, avg
			}
		}
		p := grid[best]
		sum += p.sc[out].GA
		fmt.Printf("left out %-10s: ratio %.2f minValues %d (others %.3f) -> %.3f, precision %.4f\n", out, p.tu.ratio, p.tu.minValues, bestAvg, p.sc[out].GA, p.sc[out].Precision)
	}
	fmt.Printf("leave-one-out average GA %.3f\n", sum/8)
	for _, p := range grid {
		line := ""
		for _, sys := range d.systems() {
			line += fmt.Sprintf(" %s=%.3f/%.4f", sys[:3], p.sc[sys].GA, p.sc[sys].Precision)
		}
		fmt.Printf("grid r=%.2f mv=%d%s\n", p.tu.ratio, p.tu.minValues, line)
	}
}
