package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/templates"
)

// groupCmd runs "vantagepeers errors group args..." on stdin and returns
// its output lines split at the tab, and its stderr.
func groupCmd(t testing.TB, stdin string, args ...string) (keys, tpls []string, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), append([]string{"errors", "group"}, args...), strings.NewReader(stdin), &out, &errb); err != nil {
		t.Fatalf("errors group %v: %v\n%s", args, err, errb.String())
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(out.String(), "\n"), "\n") {
		k, tpl, ok := strings.Cut(line, "\t")
		if !ok || len(k) != 32 {
			t.Fatalf("output line %q is not KEY<TAB>TEMPLATE", line)
		}
		keys, tpls = append(keys, k), append(tpls, tpl)
	}
	return keys, tpls, errb.String()
}

var sshLines = []string{
	"Invalid user alice from 10.0.0.1",
	"Failed password for root from 10.0.0.9 port 4242 ssh2",
	"Invalid user bob from 10.0.0.2",
	"Invalid user carol from 10.0.0.3",
	"Invalid user dave from 10.0.0.4",
	"Failed password for root from 10.0.0.7 port 4343 ssh2",
	"Invalid user erin from 10.0.0.5",
}

// TestErrorsGroupLines: one output line per input line, in order; the
// fourth user name makes the position a variable and the older groups
// merge into the first, which stderr reports.
func TestErrorsGroupLines(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv("VP_DATA_DIR", dir)
	keys, tpls, stderr := groupCmd(t, strings.Join(sshLines, "\n")+"\n")
	if len(keys) != len(sshLines) {
		t.Fatalf("%d output lines for %d input lines", len(keys), len(sshLines))
	}
	if keys[0] == keys[2] || keys[2] == keys[3] {
		t.Errorf("three user names are three groups until a fourth: %v", keys[:4])
	}
	if keys[4] != keys[0] || keys[6] != keys[0] || tpls[4] != "Invalid user <*> from <ip>" {
		t.Errorf("after four names: %s %q, want %s", keys[4], tpls[4], keys[0])
	}
	if keys[1] != keys[5] || tpls[1] != "Failed password for root from <ip> port <int> ssh2" {
		t.Errorf("the same template: %s %s %q", keys[1], keys[5], tpls[1])
	}
	for _, k := range []string{keys[2], keys[3]} {
		if want := fmt.Sprintf("# merged %s into %s", k, keys[0]); !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("errors group created the data dir")
	}
}

// TestErrorsGroupFinalAnyOrder: with --final, the lines in another order
// end in the same groups.
func TestErrorsGroupFinalAnyOrder(t *testing.T) {
	keys, _, _ := groupCmd(t, strings.Join(sshLines, "\n"), "--final")
	rev := slices.Clone(sshLines)
	slices.Reverse(rev)
	rkeys, _, _ := groupCmd(t, strings.Join(rev, "\n"), "--final")
	slices.Reverse(rkeys)
	if a, b := blocks(keys), blocks(rkeys); a != b {
		t.Errorf("in order: %s; reversed: %s", a, b)
	}
	if blocks(keys) != "[0 2 3 4 6]|[1 5]" {
		t.Errorf("final groups %s", blocks(keys))
	}
}

// blocks writes a grouping as its blocks of line indexes.
func blocks(keys []string) string {
	by := map[string][]int{}
	for i, k := range keys {
		by[k] = append(by[k], i)
	}
	var out []string
	for _, ix := range by {
		out = append(out, fmt.Sprint(ix))
	}
	sort.Strings(out)
	return strings.Join(out, "|")
}

// TestErrorsGroupJSONL: events carry their function (two functions, two
// groups), --function fills it in when absent, and a line that is not
// JSON is an error naming the line.
func TestErrorsGroupJSONL(t *testing.T) {
	in := `{"function":"messages:send","type":"TypeError","message":"Cannot read properties of undefined (reading 'map')"}
{"function":"messages:list","type":"TypeError","message":"Cannot read properties of undefined (reading 'map')"}
{"type":"TypeError","message":"Cannot read properties of undefined (reading 'map')"}
`
	keys, tpls, _ := groupCmd(t, in, "--jsonl", "--function", "messages:send")
	if keys[0] == keys[1] || keys[2] != keys[0] {
		t.Errorf("keys %v: want the first and third together, the second apart", keys)
	}
	if tpls[0] != "Cannot read properties of undefined (reading 'map')" {
		t.Errorf("template %q", tpls[0])
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"errors", "group", "--jsonl"}, strings.NewReader("{}\nnot json\n"), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad line: %v", err)
	}
}

// TestErrorsGroupState: two runs that share a --state file print what one
// run over all the lines prints (a restart groups the same way).
func TestErrorsGroupState(t *testing.T) {
	state := filepath.Join(t.TempDir(), "templates.json")
	k1, t1, _ := groupCmd(t, strings.Join(sshLines[:3], "\n"), "--state", state)
	k2, t2, _ := groupCmd(t, strings.Join(sshLines[3:], "\n"), "--state", state)
	all, allT, _ := groupCmd(t, strings.Join(sshLines, "\n"))
	if got := append(k1, k2...); !slices.Equal(got, all) || !slices.Equal(append(t1, t2...), allT) {
		t.Errorf("with a restart: %v\nin one run:   %v", got, all)
	}
	if err := os.WriteFile(state, []byte(`{"version":"tpl0","buckets":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"errors", "group", "--state", state}, strings.NewReader("x\n"), &out, &errb)
	if err == nil || !strings.Contains(err.Error(), "version") {
		t.Errorf("a state of another version: %v", err)
	}
}

// BenchmarkErrorsGroupLoghub runs the Loghub dev set (../shared/bench,
// next to the repository) through "vantagepeers errors group --final",
// one system per run, and prints the table per system: templates
// (labels), groups, grouping accuracy, pairwise precision and recall.
//
//	go test ./functions/vantagepeers -run '^$' -bench ErrorsGroupLoghub -benchtime 1x
func BenchmarkErrorsGroupLoghub(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "bench", "loghub-dev.json"))
	if err != nil {
		b.Skipf("no Loghub dev set: %v", err)
	}
	var d struct {
		DrainGA  map[string]float64     `json:"drain_ga"`
		Datasets map[string][][2]string `json:"datasets"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		b.Fatal(err)
	}
	var systems []string
	for s := range d.Datasets {
		systems = append(systems, s)
	}
	sort.Strings(systems)
	scores := map[string]templates.Scores{}
	events := 0
	for b.Loop() {
		for _, sys := range systems {
			var in strings.Builder
			labels := make([]string, 0, len(d.Datasets[sys]))
			for _, r := range d.Datasets[sys] {
				in.WriteString(strings.ReplaceAll(r[0], "\n", " ") + "\n")
				labels = append(labels, r[1])
			}
			keys, _, _ := groupCmd(b, in.String(), "--final")
			if len(keys) != len(labels) {
				b.Fatalf("%s: %d lines out for %d in", sys, len(keys), len(labels))
			}
			scores[sys] = templates.Score(keys, labels)
			events += len(labels)
		}
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "lines/s")
	var sum float64
	var tb strings.Builder
	fmt.Fprintf(&tb, "\n%-10s %9s %6s %6s %9s %7s %8s\n", "system", "templates", "groups", "GA", "precision", "recall", "Drain GA")
	for _, sys := range systems {
		s := scores[sys]
		sum += s.GA
		fmt.Fprintf(&tb, "%-10s %9d %6d %6.3f %9.4f %7.4f %8.3f\n", sys, s.Labels, s.Groups, s.GA, s.Precision, s.Recall, d.DrainGA[sys])
	}
	avg := sum / float64(len(systems))
	fmt.Fprintf(&tb, "%-10s %9s %6s %6.3f\n", "average", "", "", avg)
	b.ReportMetric(avg, "GA")
	fmt.Print(tb.String())
}
