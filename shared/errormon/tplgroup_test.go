package errormon_test

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint/corpus"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/errormon/templates"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// login is a failed login of user from a host: the user name is a
// variable the parameteriser cannot see (a word), the host one it can.
func login(user string, k int) source.Event {
	return source.Event{ID: fmt.Sprintf("login-%s-%d", user, k), Time: time.Now().Add(-time.Minute), Function: "auth:login", Type: "Error",
		Message: fmt.Sprintf("Invalid user %s from 10.0.%d.%d", user, k%7, k), Raw: "raw"}
}

func logins(users ...string) []source.Event {
	var out []source.Event
	for k, u := range users {
		out = append(out, login(u, k))
	}
	return out
}

// live returns the groups not merged into another, by id.
func live(gs []errormon.Group) map[string]errormon.Group {
	out := map[string]errormon.Group{}
	for _, g := range gs {
		if g.MergedInto == "" {
			out[g.ID] = g
		}
	}
	return out
}

// TestLaterGeneralisationMergesIntoTheOlderGroupOnBothStores: three user
// names are three groups (three or four values at a position may be
// three templates); a fourth, scanned by another process (a restart on
// the same store), makes the position a variable: the three groups merge
// into the oldest, whose count is the sum, and only its issue is filed.
func TestLaterGeneralisationMergesIntoTheOlderGroupOnBothStores(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		gh, src := &memGitHub{}, &memSource{}
		e1 := newEnvOn(t, st, gh, src)
		e1.addDeployment(t, "app")
		src.add(logins("alice", "alice", "bob", "carol")...)
		e1.scan(t, "app")
		if gs := live(e1.groups(t)); len(gs) != 3 {
			t.Fatalf("three names: %d groups, want 3", len(gs))
		}
		e2 := newEnvOn(t, st, gh, src) // a restart: nothing in memory
		src.add(logins("dave", "bob")...)
		e2.scan(t, "app")
		all := e2.groups(t)
		gs := live(all)
		if len(gs) != 1 {
			t.Fatalf("after a fourth name: %d live groups, want 1: %+v", len(gs), gs)
		}
		var g errormon.Group
		for _, g = range gs {
		}
		if g.Count != 6 || g.Algorithm != templates.Version || !strings.Contains(g.Message, "Invalid user <*> from") {
			t.Errorf("the group: count %d (want 6, the counts added), algorithm %q, message %q", g.Count, g.Algorithm, g.Message)
		}
		if !strings.Contains(g.Sample, "alice") {
			t.Errorf("the surviving group is %q, want the oldest (alice's)", g.Sample)
		}
		merged := 0
		for _, m := range all {
			if m.MergedInto != "" {
				merged++
				if m.MergedInto != g.ID {
					t.Errorf("group %s merged into %s, want %s", m.ID, m.MergedInto, g.ID)
				}
			}
		}
		if merged != 2 {
			t.Errorf("%d groups marked merged, want 2 (bob's and carol's)", merged)
		}
		e2.drain(t)
		if issues, _ := gh.snapshot(); len(issues) != 1 || !strings.Contains(issues[0].Title, "alice") {
			t.Fatalf("issues filed: %+v, want one, the oldest group's", issues)
		}
		// The merge records are gone: a rescan changes nothing.
		src.add(login("erin", 9))
		e1.scan(t, "app")
		e1.drain(t)
		if gs := live(e1.groups(t)); len(gs) != 1 || gs[g.ID].Count != 7 {
			t.Errorf("a fifth name: %+v, want one group of 7", gs)
		}
		if issues, _ := gh.snapshot(); len(issues) != 1 {
			t.Errorf("%d issues after the fifth name, want 1", len(issues))
		}
	})
}

// TestMergeAfterFilingFilesNothingMore: the merged groups' issues were
// filed before the fourth name: the merge files nothing, and the older
// group keeps its own issue.
func TestMergeAfterFilingFilesNothingMore(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	e.src.add(logins("alice", "bob", "carol")...)
	e.scan(t, "app")
	e.drain(t)
	before, _ := e.gh.snapshot()
	e.src.add(logins("dave", "erin")...)
	e.scan(t, "app")
	e.drain(t)
	after, _ := e.gh.snapshot()
	if len(before) != 3 || len(after) != 3 {
		t.Fatalf("issues: %d before the merge, %d after; want 3 and 3", len(before), len(after))
	}
	gs := live(e.groups(t))
	if len(gs) != 1 {
		t.Fatalf("%d live groups, want 1", len(gs))
	}
	alice := 0
	for _, is := range after {
		if strings.Contains(is.Title, "alice") {
			alice = is.Number
		}
	}
	for _, g := range gs {
		if g.Count != 5 || g.IssueNumber != alice || alice == 0 {
			t.Errorf("group %+v: want count 5 and issue %d (alice's)", g, alice)
		}
	}
}

// TestSameGroupsInAnyOrderOnBothStores: the same events scanned in two
// orders, each in pages of a few events, end in the same groups with the
// same counts and the same issues.
func TestSameGroupsInAnyOrderOnBothStores(t *testing.T) {
	var events []source.Event
	for k, u := range []string{"alice", "bob", "carol", "dave", "erin", "frank", "grace"} {
		events = append(events, login(u, k), login(u, k+10))
		events = append(events, source.Event{ID: fmt.Sprint("pw-", k), Time: time.Now().Add(-time.Minute), Function: "auth:login", Type: "Error",
			Message: fmt.Sprintf("Failed password for root from 10.0.0.%d port %d ssh2", k, 4000+k)})
	}
	events = append(events, cause(1, 1), cause(2, 1), cause(1, 2))
	type outcome struct {
		counts map[string]int64
		issues []string
	}
	run := func(t *testing.T, b teststores.Backend, es []source.Event) outcome {
		e := newEnvOn(t, b.Open(t, nil), &memGitHub{}, &memSource{})
		e.addDeployment(t, "app")
		for start := 0; start < len(es); start += 4 {
			e.src.add(es[start:min(start+4, len(es))]...)
			e.scan(t, "app")
		}
		e.drain(t)
		out := outcome{counts: map[string]int64{}}
		// A group's id is its oldest template's, which the order chooses:
		// the groups are compared by what they hold.
		for _, g := range live(e.groups(t)) {
			out.counts[g.Function+" "+g.Message] += g.Count
		}
		issues, _ := e.gh.snapshot()
		for _, is := range issues {
			out.issues = append(out.issues, is.Title)
		}
		sort.Strings(out.issues)
		return out
	}
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		a := run(t, b, events)
		rev := slices.Clone(events)
		slices.Reverse(rev)
		z := run(t, b, rev)
		if len(a.counts) != 4 {
			t.Errorf("%d groups, want 4 (the logins, the passwords, two causes): %v", len(a.counts), a.counts)
		}
		if fmt.Sprint(a.counts) != fmt.Sprint(z.counts) {
			t.Errorf("groups in order %v, reversed %v", a.counts, z.counts)
		}
		if len(a.issues) != len(a.counts) || len(z.issues) != len(z.counts) {
			t.Errorf("issues: %d and %d for %d groups", len(a.issues), len(z.issues), len(a.counts))
		}
	})
}

// racingStore runs hook once, before the first write of a template
// bucket: the moment a scan has learned a page and not stored it.
type racingStore struct {
	store.Store
	once sync.Once
	hook func()
}

func (r *racingStore) Write(ctx context.Context, ops ...store.Op) error {
	for _, op := range ops {
		if strings.Contains(op.Key.PK, "#ERRTPL#") {
			r.once.Do(r.hook)
			break
		}
	}
	return r.Store.Write(ctx, ops...)
}

// TestLostTemplateRaceRegroupsOnBothStores: a scan whose lease ran out
// learns a page, and before it stores the templates another process
// takes the lease, scans the same events and stores them. The first
// one's conditional write fails: it reads the templates again, groups
// again, finds its lease gone and counts nothing. Every event is counted
// once, and one issue is filed per group.
func TestLostTemplateRaceRegroupsOnBothStores(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		var mu sync.Mutex
		now := time.Now()
		clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		st := b.Open(t, nil)
		gh, src := &memGitHub{}, &memSource{}
		race := &racingStore{Store: st}
		slow := newEnvOn(t, race, gh, src, func(o *errormon.Options) { o.Now = clock })
		fast := newEnvOn(t, st, gh, src, func(o *errormon.Options) { o.Now = clock })
		slow.addDeployment(t, "app")
		src.add(logins("alice", "bob", "carol", "dave", "erin")...)
		src.add(cause(1, 1), cause(1, 2))
		raced := false
		race.hook = func() {
			mu.Lock()
			now = now.Add(10 * time.Minute) // past the slow scan's lease
			mu.Unlock()
			fast.scan(t, "app")
			raced = true
		}
		_, err := slow.mon.Scan(ctx(), tenant, "app")
		if !raced {
			t.Fatal("the slow scan never wrote templates")
		}
		wantKind(t, err, vp.KindConflict, "name")
		slow.drain(t)
		gs := live(slow.groups(t))
		total := int64(0)
		for _, g := range gs {
			total += g.Count
		}
		if len(gs) != 2 || total != 7 {
			t.Errorf("%d groups counting %d events, want 2 counting 7: %+v", len(gs), total, gs)
		}
		if issues, _ := gh.snapshot(); len(issues) != 2 {
			t.Errorf("%d issues for 2 groups", len(issues))
		}
	})
}

// TestConvexCorpusCauseByCauseThroughTheMonitor: the labelled corpus,
// scanned by the monitor in pages, keeps every cause apart: the
// templates it stored put no two causes in one group, and each event's
// group is one the monitor counted.
func TestConvexCorpusCauseByCauseThroughTheMonitor(t *testing.T) {
	gen := corpus.Generate(12, 60)
	e := newEnv(t)
	e.addDeployment(t, "app")
	for start := 0; start < len(gen); start += 700 {
		for _, g := range gen[start:min(start+700, len(gen))] {
			e.src.add(g.Event)
		}
		e.scan(t, "app")
	}
	rows, err := records.QueryAll(ctx(), e.st, errormon.TemplateBuckets.Query(tenant, store.Primary, table.Values{"deployment": "app"}), 10000)
	if err != nil {
		t.Fatal(err)
	}
	var st templates.State
	st.Version = templates.Version
	for _, it := range rows {
		b, err := records.Decode[errormon.TemplateBucket]("test", it)
		if err != nil {
			t.Fatal(err)
		}
		st.Buckets = append(st.Buckets, b.Bucket)
	}
	l, err := templates.Restore(templates.Options{}, st)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]errormon.Group{}
	for _, g := range e.groups(t) {
		groups[g.ID] = g
	}
	labels := map[string]map[string]bool{}
	for _, g := range gen {
		r := l.Learn(g.Event)
		if len(r.Merged) > 0 {
			t.Fatalf("an event already scanned merged groups on a replay: %v", r.Merged)
		}
		id := errormon.GroupID("app", r.Key)
		if _, ok := groups[id]; !ok {
			t.Fatalf("event %q is in group %s, which the monitor never counted", g.Event.Message, id)
		}
		if labels[id] == nil {
			labels[id] = map[string]bool{}
		}
		labels[id][g.Label] = true
	}
	for id, ls := range labels {
		if len(ls) > 1 {
			t.Errorf("group %s (%s) holds %d causes: %v", id, groups[id].Message, len(ls), ls)
		}
	}
	t.Logf("corpus: %d events, %d causes, %d groups", len(gen), len(corpus.Labels()), len(labels))
}

// TestUpgradeFromFP1KeepsTheIssue: a deployment's group from before tpl1
// (fp1, its issue filed) stays listed, and the first tpl1 group of the
// same error carries its issue on: nothing is filed again.
func TestUpgradeFromFP1KeepsTheIssue(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	ev := cause(3, 1)
	fp := fingerprint.Of(ev)
	old := errormon.Group{ID: errormon.GroupID("app", fp.Hash), Deployment: "app", Fingerprint: fp.Hash, Algorithm: fp.Version,
		Function: fp.Function, Type: fp.Type, Message: fp.Message, Sample: ev.Message, Count: 12, FirstSeen: 1, LastSeen: 2,
		Status: errormon.StatusOngoing, IssueRepo: "acme/app", IssueNumber: 41, IssueURL: "https://github.com/acme/app/issues/41"}
	it, err := errormon.Groups.Item("test", tenant, old)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.Write(ctx(), store.Put(it, store.IfNotExists)); err != nil {
		t.Fatal(err)
	}
	e.src.add(ev, cause(3, 2))
	e.scan(t, "app")
	e.drain(t)
	if issues, _ := e.gh.snapshot(); len(issues) != 0 {
		t.Fatalf("the upgrade filed %d issues for a known error", len(issues))
	}
	gs := e.groups(t)
	if len(gs) != 2 {
		t.Fatalf("%d groups, want the fp1 one and the tpl1 one", len(gs))
	}
	for _, g := range gs {
		switch g.Algorithm {
		case fingerprint.Version:
			if g.Count != 12 {
				t.Errorf("the fp1 group changed: %+v", g)
			}
		case templates.Version:
			if g.IssueNumber != 41 || g.IssueFrom != old.ID || g.Count != 2 || g.Status != errormon.StatusOngoing {
				t.Errorf("the tpl1 group: %+v; want issue 41 from %s, 2 occurrences, ongoing", g, old.ID)
			}
		default:
			t.Errorf("group of algorithm %q", g.Algorithm)
		}
	}
}
