package templates

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint/corpus"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// partition is a grouping in a form that does not depend on group keys:
// the sorted lists of the indexes grouped together.
func partition(keys []string) string {
	byKey := map[string][]int{}
	for i, k := range keys {
		byKey[k] = append(byKey[k], i)
	}
	var blocks []string
	for _, ix := range byKey {
		blocks = append(blocks, fmt.Sprint(ix))
	}
	sort.Strings(blocks)
	return strings.Join(blocks, "|")
}

// shuffled learns lines in the order perm gives and returns each line's
// final group, indexed as lines are.
func shuffled(lines []string, perm []int) []string {
	l := New(Options{})
	keys := make([]string, len(lines))
	for _, i := range perm {
		keys[i] = l.LearnMessage(Scope{}, lines[i]).Key
	}
	for i := range keys {
		keys[i] = l.Resolve(keys[i])
	}
	return keys
}

// TestOrderIndependenceLoghub: each dev system, shuffled with several
// seeds, ends in the same groups as in its own order.
func TestOrderIndependenceLoghub(t *testing.T) {
	d := readLoghub(t)
	for _, sys := range d.systems() {
		lines, _ := split(d.Datasets[sys])
		want := partition(groupAll(New(Options{}), lines))
		for seed := uint64(1); seed <= 5; seed++ {
			perm := rand.New(rand.NewPCG(seed, 7)).Perm(len(lines))
			if got := partition(shuffled(lines, perm)); got != want {
				t.Errorf("%s, seed %d: another partition", sys, seed)
			}
		}
	}
}

// TestOrderIndependenceWords: the orders of a small set in which a
// word position becomes a variable (rule 2) and templates chain through
// a bridge (rule 1) all end in one partition, which the first order
// alone would not show.
func TestOrderIndependenceWords(t *testing.T) {
	lines := []string{
		"Invalid user alice from 10.0.0.1",
		"Invalid user bob from 10.0.0.2",
		"Invalid user carol from 10.0.0.3",
		"Invalid user dave from 10.0.0.4",
		"Block a stored as bytes in memory",
		"Block b stored as values in memory",
		"connect to db1.internal:5432 failed after 3 tries",
		"connect to db2.internal:5432 failed after 3 tries",
		"cupsd startup succeeded",
		"cupsd shutdown succeeded",
	}
	want := ""
	for seed := uint64(0); seed < 50; seed++ {
		perm := rand.New(rand.NewPCG(seed, 1)).Perm(len(lines))
		got := partition(shuffled(lines, perm))
		if want == "" {
			want = got
		} else if got != want {
			t.Fatalf("seed %d: %s, want %s", seed, got, want)
		}
	}
	// The four user names are one group; bytes/values and
	// startup/shutdown (two words each) are four.
	if want != "[0 1 2 3]|[4]|[5]|[6 7]|[8]|[9]" {
		t.Errorf("partition %s", want)
	}
}

// TestMergeKeepsOldest: when a template generalises and takes in an
// older group's template, the group that existed first keeps its key and
// the result names the groups merged into it.
func TestMergeKeepsOldest(t *testing.T) {
	l := New(Options{})
	a := l.LearnMessage(Scope{}, "Invalid user alice from 10.0.0.1")
	b := l.LearnMessage(Scope{}, "Invalid user bob from 10.0.0.2")
	c := l.LearnMessage(Scope{}, "Invalid user carol from 10.0.0.3")
	if a.Key == b.Key || b.Key == c.Key || len(a.Merged)+len(b.Merged)+len(c.Merged) != 0 {
		t.Fatalf("three names are three groups until a fourth: %+v %+v %+v", a, b, c)
	}
	d := l.LearnMessage(Scope{}, "Invalid user dave from 10.0.0.4")
	if d.Key != a.Key {
		t.Errorf("merged group %s, want the oldest %s", d.Key, a.Key)
	}
	if want := []string{b.Key, c.Key}; !sameSet(d.Merged, want) {
		t.Errorf("merged %v, want %v", d.Merged, want)
	}
	if d.Template != "Invalid user <*> from <ip>" {
		t.Errorf("template %q", d.Template)
	}
	for _, k := range []string{b.Key, c.Key, d.Key} {
		if got := l.Resolve(k); got != a.Key {
			t.Errorf("Resolve(%s) = %s, want %s", k, got, a.Key)
		}
	}
	// A fifth name is covered: nothing merges any more.
	if e := l.LearnMessage(Scope{}, "Invalid user erin from 10.0.0.5"); e.Key != a.Key || len(e.Merged) != 0 {
		t.Errorf("fifth: %+v", e)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestScopesApart: the same message in two functions is two groups.
func TestScopesApart(t *testing.T) {
	l := New(Options{})
	a := l.Learn(source.Event{Function: "messages:send", Message: "Rate limit exceeded"})
	b := l.Learn(source.Event{Function: "messages:list", Message: "Rate limit exceeded"})
	if a.Key == b.Key {
		t.Fatalf("one key %s for two functions", a.Key)
	}
}

// TestCapSplitsNeverMerges: at the cap a new message is not learned: it
// is a group of its own, the state does not grow, and the templates
// learned before still group their events.
func TestCapSplitsNeverMerges(t *testing.T) {
	l := New(Options{MaxTemplates: 2})
	a := l.LearnMessage(Scope{}, "disk full on /dev/sda1")
	b := l.LearnMessage(Scope{}, "cache warmed in <int> ms")
	c := l.LearnMessage(Scope{}, "worker crashed")
	if !a.Learned || !b.Learned || c.Learned {
		t.Fatalf("learned: %v %v %v", a.Learned, b.Learned, c.Learned)
	}
	if c.Key == a.Key || c.Key == b.Key || c.Template != "worker crashed" {
		t.Errorf("the message over the cap: %+v", c)
	}
	if again := l.LearnMessage(Scope{}, "worker crashed"); again.Key != c.Key {
		t.Errorf("the same message over the cap: %s, then %s", c.Key, again.Key)
	}
	if n := countTemplates(l.State()); n != 2 {
		t.Errorf("%d templates stored, cap 2", n)
	}
	if got := l.LearnMessage(Scope{}, "disk full on /dev/sda1"); got.Key != a.Key {
		t.Errorf("a learned template no longer groups: %s, want %s", got.Key, a.Key)
	}
}

func countTemplates(st State) int {
	n := 0
	for _, b := range st.Buckets {
		n += len(b.Templates)
	}
	return n
}

// TestStateRoundTrip: a Learner restored from a stored State (through
// JSON) groups the rest of a stream as the one that learned it all
// would: a restart or a cold start changes nothing.
func TestStateRoundTrip(t *testing.T) {
	events := corpus.Generate(3, 20)
	half := len(events) / 2
	one := New(Options{})
	for _, e := range events[:half] {
		one.Learn(e.Event)
	}
	raw, err := json.Marshal(one.State())
	if err != nil {
		t.Fatal(err)
	}
	var st State
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatal(err)
	}
	two, err := Restore(Options{}, st)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events[half:] {
		a, b := one.Learn(e.Event), two.Learn(e.Event)
		if a.Key != b.Key || a.Template != b.Template || !slices.Equal(a.Merged, b.Merged) {
			t.Fatalf("event %d: %+v before the restart, %+v after", half+i, a, b)
		}
	}
	if !jsonEqual(t, one.State(), two.State()) {
		t.Errorf("the states differ after the same events")
	}
}

func jsonEqual(t *testing.T, a, b any) bool {
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return string(x) == string(y)
}

// TestChangedBumpsVersions: the buckets an event changed are returned
// once, with their version bumped, as a store writes them.
func TestChangedBumpsVersions(t *testing.T) {
	l := New(Options{})
	l.LearnMessage(Scope{}, "Invalid user alice from 10.0.0.1")
	l.LearnMessage(Scope{}, "worker crashed")
	ch := l.Changed()
	if len(ch) != 2 || ch[0].Version != 1 || ch[1].Version != 1 {
		t.Fatalf("changed %+v", ch)
	}
	if again := l.Changed(); len(again) != 0 {
		t.Errorf("changed twice: %+v", again)
	}
	l.LearnMessage(Scope{}, "Invalid user alice from 10.0.0.9") // covered: no change
	if again := l.Changed(); len(again) != 0 {
		t.Errorf("a covered message changed %+v", again)
	}
	l.LearnMessage(Scope{}, "Invalid user bob from 10.0.0.2")
	if ch := l.Changed(); len(ch) != 1 || ch[0].Version != 2 {
		t.Errorf("changed %+v", ch)
	}
}

// TestRestoreRefuses: a state of another version, or one past the caps,
// is refused with the field named.
func TestRestoreRefuses(t *testing.T) {
	l := New(Options{})
	for i := range 5 {
		l.LearnMessage(Scope{}, fmt.Sprintf("%s failed", []string{"alpha", "beta", "gamma", "delta", "omega"}[i]))
	}
	st := l.State()
	cases := []struct {
		name  string
		opts  Options
		edit  func(*State)
		field string
	}{
		{"version", Options{}, func(s *State) { s.Version = "tpl0" }, "version"},
		{"cap", Options{MaxPerBucket: 2}, func(*State) {}, "templates"},
		{"scope cap", Options{MaxTemplates: 1}, func(*State) {}, "templates"},
		{"length", Options{}, func(s *State) { s.Buckets[0].Templates[0].Tokens = []string{"x"} }, "tokens"},
		{"key", Options{}, func(s *State) { s.Buckets[0].Templates[0].Key = "nope" }, "key"},
		{"scope", Options{}, func(s *State) { s.Buckets[0].Scope = "" }, "scope"},
	}
	for _, c := range cases {
		var s State
		raw, _ := json.Marshal(st)
		_ = json.Unmarshal(raw, &s)
		c.edit(&s)
		_, err := Restore(c.opts, s)
		var ve *vp.Error
		if !errors.As(err, &ve) || ve.Kind != vp.KindInvalid || ve.Field != c.field {
			t.Errorf("%s: %v, want an invalid %s", c.name, err, c.field)
		}
	}
	if _, err := Restore(Options{}, st); err != nil {
		t.Errorf("the state as learned: %v", err)
	}
}
