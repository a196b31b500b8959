package keyword_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/search"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// flakyIndex is a search index whose writes can be made to fail, to check
// that the store stays the source of truth.
type flakyIndex struct {
	search.Index
	fail atomic.Bool
}

var errIndexDown = errors.New("index down")

func (x *flakyIndex) Upsert(ctx context.Context, docs ...search.Doc) error {
	if x.fail.Load() {
		return errIndexDown
	}
	return x.Index.Upsert(ctx, docs...)
}

func (x *flakyIndex) Delete(ctx context.Context, tenant string, ids ...string) error {
	if x.fail.Load() {
		return errIndexDown
	}
	return x.Index.Delete(ctx, tenant, ids...)
}

func openIndex(t *testing.T) *flakyIndex {
	t.Helper()
	idx, err := searchlocal.Open(context.Background(), searchlocal.Options{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	return &flakyIndex{Index: idx}
}

func newSearchService(t *testing.T, st store.Store, idx search.Index) *keyword.Service {
	return appOn(t, st, idx).Keyword
}

// eachBackendSearch runs fn per store backend with a service on a fresh
// local search index.
func eachBackendSearch(t *testing.T, fn func(t *testing.T, svc *keyword.Service, st store.Store, idx *flakyIndex)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st, idx := b.Open(t, nil), openIndex(t)
		fn(t, newSearchService(t, st, idx), st, idx)
	})
}

// briefingsOn is the briefing service on st, indexing into idx (none when nil).
func briefingsOn(t *testing.T, st store.Store, idx search.Index) *briefing.Service {
	return appOn(t, st, idx).Briefings
}

// componentsOn is the component registry on st, indexing into idx (none when nil).
func componentsOn(t *testing.T, st store.Store, idx search.Index) *component.Service {
	return appOn(t, st, idx).Components
}

func strp(s string) *string { return &s }

const nSeed = 45

// words gives seed i one of three distinctive words.
var words = []string{"zebra", "giraffe", "walrus"}

func wantIDs(t *testing.T, what string, got []string, want []string) {
	t.Helper()
	g, w := slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(want))
	if !slices.Equal(g, w) {
		t.Fatalf("%s: got %d ids %v, want %d ids %v", what, len(g), g, len(w), w)
	}
}

func pick[T any](n int, keep func(i int) bool, id func(i int) T) []T {
	var out []T
	for i := range n {
		if keep(i) {
			out = append(out, id(i))
		}
	}
	return out
}

func TestSearchMessagesByKeyword(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, svc *keyword.Service, _ store.Store, _ *flakyIndex) {
		senders := []vp.Principal{as("acme", "alice"), as("acme", "bob")}
		ids := make([]string, nSeed)
		for i := range nSeed {
			channel := "carol"
			if i%5 == 0 {
				channel = "dave"
			}
			res, err := messagesOf(svc).Send(ctx(), senders[i%2], message.SendInput{Channel: channel,
				Content: fmt.Sprintf("standup %d: the %s report is ready", i, words[i%3])})
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = res.MessageID
		}
		msgIDs := func(r keyword.KeywordResult[keyword.MessageHit]) []string {
			out := []string{}
			for _, h := range r.Items {
				out = append(out, h.ID)
			}
			return out
		}
		cases := []struct {
			name string
			in   keyword.SearchMessagesInput
			want func(i int) bool
		}{
			{"word", keyword.SearchMessagesInput{Query: "zebra"}, func(i int) bool { return i%3 == 0 }},
			{"stemmed", keyword.SearchMessagesInput{Query: "Giraffes!"}, func(i int) bool { return i%3 == 1 }},
			{"from", keyword.SearchMessagesInput{Query: "walrus", From: "Bob"}, func(i int) bool { return i%3 == 2 && i%2 == 1 }},
			{"channel", keyword.SearchMessagesInput{Query: "zebra", Channel: "DAVE"}, func(i int) bool { return i%3 == 0 && i%5 == 0 }},
			{"none", keyword.SearchMessagesInput{Query: "okapi"}, func(int) bool { return false }},
		}
		for _, c := range cases {
			c.in.Limit = 50
			res, err := svc.SearchMessages(ctx(), as("acme", "erin"), c.in)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			want := pick(nSeed, c.want, func(i int) string { return ids[i] })
			wantIDs(t, c.name, msgIDs(res), want)
			if res.Count != len(res.Items) {
				t.Fatalf("%s: count %d for %d items", c.name, res.Count, len(res.Items))
			}
			for i, h := range res.Items {
				if h.Score <= 0 || (i > 0 && h.Score > res.Items[i-1].Score) || h.Content == "" || h.From == "" {
					t.Fatalf("%s: item %d %+v (scores best first, full messages)", c.name, i, h)
				}
			}
		}
		// Deleted messages leave the results.
		if _, err := messagesOf(svc).DeleteMessage(ctx(), senders[0], ids[0], ""); err != nil {
			t.Fatal(err)
		}
		res, err := svc.SearchMessages(ctx(), as("acme", "erin"), keyword.SearchMessagesInput{Query: "zebra", Limit: 50})
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "after delete", msgIDs(res), pick(nSeed, func(i int) bool { return i%3 == 0 && i != 0 }, func(i int) string { return ids[i] }))
		// Another tenant finds nothing of acme's.
		res, err = svc.SearchMessages(ctx(), as("beta", "alice"), keyword.SearchMessagesInput{Query: "zebra report standup", Limit: 50})
		if err != nil || res.Count != 0 || len(res.Items) != 0 {
			t.Fatalf("tenant beta sees %+v (%v)", res, err)
		}
		// Limits: default 10, clamped to 50 (55 messages say "report").
		for i := range 10 {
			if _, err := messagesOf(svc).Send(ctx(), senders[0], message.SendInput{Channel: "carol", Content: fmt.Sprint("extra report ", i)}); err != nil {
				t.Fatal(err)
			}
		}
		for _, c := range []struct{ limit, want int }{{0, keyword.DefaultKeywordLimit}, {-3, keyword.DefaultKeywordLimit}, {7, 7}, {500, keyword.MaxKeywordLimit}} {
			res, err := svc.SearchMessages(ctx(), senders[1], keyword.SearchMessagesInput{Query: "report", Limit: c.limit})
			if err != nil || len(res.Items) != c.want || res.Count != c.want {
				t.Fatalf("limit %d: %d items (%v), want %d", c.limit, len(res.Items), err, c.want)
			}
		}
	})
}

func TestSearchTasksByKeyword(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, svc *keyword.Service, st store.Store, idx *flakyIndex) {
		tsk, msn := taskServices(t, st, idx)
		alice := as("acme", "alice", "bob")
		m, err := msn.CreateMission(ctx(), alice, mission.CreateMissionInput{Name: "search mission", Project: "vp", Priority: "high"})
		if err != nil {
			t.Fatal(err)
		}
		tasks := make([]vp.Task, nSeed)
		for i := range nSeed {
			in := task.CreateTaskInput{Title: fmt.Sprintf("Fix the %s pipeline %d", words[i%3], i), AssignedTo: []string{"alice", "bob"}[i%2],
				Priority: "medium", Description: "see the runbook", Project: []string{"vp", "studio/x"}[i%3/2]}
			if i%4 == 0 {
				in.Status = vp.TaskInProgress
			}
			if i%9 == 0 {
				in.MissionID = m.ID
			}
			if i == 44 {
				in.Description = "the okapi migration"
			}
			tasks[i] = mustTask(t, tsk, alice, in)
		}
		taskIDs := func(r keyword.KeywordResult[keyword.TaskHit]) []string {
			out := []string{}
			for _, h := range r.Items {
				out = append(out, h.ID)
			}
			return out
		}
		search := func(in keyword.SearchTasksInput) []string {
			t.Helper()
			in.Limit = 50
			res, err := svc.SearchTasks(ctx(), as("acme", "carol"), in)
			if err != nil {
				t.Fatalf("%+v: %v", in, err)
			}
			return taskIDs(res)
		}
		id := func(i int) string { return tasks[i].ID }
		cases := []struct {
			name string
			in   keyword.SearchTasksInput
			want func(i int) bool
		}{
			{"title word", keyword.SearchTasksInput{Query: "zebra"}, func(i int) bool { return i%3 == 0 }},
			{"description", keyword.SearchTasksInput{Query: "okapi"}, func(i int) bool { return i == 44 }},
			{"status", keyword.SearchTasksInput{Query: "giraffe", Status: vp.TaskInProgress}, func(i int) bool { return i%3 == 1 && i%4 == 0 }},
			{"status alias", keyword.SearchTasksInput{Query: "giraffe", Status: "open"}, func(i int) bool { return i%3 == 1 }},
			{"status list", keyword.SearchTasksInput{Query: "giraffe", Status: []any{"todo"}}, func(i int) bool { return i%3 == 1 && i%4 != 0 }},
			{"assignee", keyword.SearchTasksInput{Query: "walrus", AssignedTo: "BOB"}, func(i int) bool { return i%3 == 2 && i%2 == 1 }},
			{"project", keyword.SearchTasksInput{Query: "pipeline", Project: "studio/x"}, func(i int) bool { return i%3 == 2 }},
			{"mission", keyword.SearchTasksInput{Query: "pipeline", MissionID: m.ID}, func(i int) bool { return i%9 == 0 }},
		}
		for _, c := range cases {
			wantIDs(t, c.name, search(c.in), pick(nSeed, c.want, id))
		}

		// A new title is found by its new words, not by its old ones.
		if _, err := tsk.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tasks[3].ID, Title: tkStr("Rotate the capybara keys")}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "new title", search(keyword.SearchTasksInput{Query: "capybara"}), []string{tasks[3].ID})
		wantIDs(t, "old title", search(keyword.SearchTasksInput{Query: "zebra"}), pick(nSeed, func(i int) bool { return i%3 == 0 && i != 3 }, id))
		// Status changes move a task between status filters: checkout, complete, bulk.
		co, err := tsk.CheckoutTask(ctx(), as("acme", "bob"), task.CheckoutInput{TaskID: tasks[6].ID})
		if err != nil || !co.Claimed {
			t.Fatalf("checkout: %+v %v", co, err)
		}
		wantIDs(t, "checked out", search(keyword.SearchTasksInput{Query: "zebra", Status: vp.TaskInProgress, AssignedTo: "bob"}), []string{tasks[6].ID})
		dry := false
		if _, err := tsk.BulkCompleteTasks(ctx(), alice, task.BulkCompleteInput{Filter: task.BulkFilter{TaskIDs: []string{tasks[9].ID, tasks[15].ID}}, DryRun: &dry, CallerOrchestrator: "alice"}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "bulk done", search(keyword.SearchTasksInput{Query: "zebra", Status: vp.TaskDone}), []string{tasks[9].ID, tasks[15].ID})
		// Deleted tasks leave the results.
		if _, err := tsk.DeleteTask(ctx(), alice, task.TaskRef{TaskID: tasks[44].ID}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "deleted", search(keyword.SearchTasksInput{Query: "okapi"}), nil)
		// Template instantiation indexes the tasks it creates.
		inst, err := msn.InstantiateTemplate(ctx(), alice, mission.InstantiateInput{TemplateName: "repo-fix-v1", MissionID: m.ID, TitlePrefix: "Quokka"})
		if err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "instantiated", search(keyword.SearchTasksInput{Query: "quokka"}), inst.TaskIDs)
		// Tenant isolation.
		res, err := svc.SearchTasks(ctx(), as("beta", "alice"), keyword.SearchTasksInput{Query: "pipeline zebra quokka"})
		if err != nil || len(res.Items) != 0 {
			t.Fatalf("tenant beta sees %+v (%v)", res, err)
		}
		_, err = svc.SearchTasks(ctx(), alice, keyword.SearchTasksInput{Query: "zebra", Status: "finished"})
		wantKind(t, err, vp.KindInvalid, "status")
	})
}

func TestSearchBriefingNotesByKeyword(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, svc *keyword.Service, st store.Store, idx *flakyIndex) {
		notes := briefingsOn(t, st, idx)
		pi := as("acme", "pi")
		ids := make([]string, nSeed)
		for i := range nSeed {
			in := briefing.Input{Title: fmt.Sprintf("Day %d close", i), Topic: []string{"standup", "sprint-review"}[i%2],
				Participants: []string{"pi"}, Content: fmt.Sprintf("We discussed the %s rollout.", words[i%3])}
			if i == 10 {
				in.Decisions = []string{"adopt the narwhal protocol"}
			}
			n, err := notes.CreateBriefingNote(ctx(), pi, in)
			if err != nil {
				t.Fatal(err)
			}
			ids[i] = n.ID
		}
		search := func(in keyword.SearchBriefingsInput) []string {
			t.Helper()
			in.Limit = 50
			res, err := svc.SearchBriefingNotes(ctx(), as("acme", "sigma"), in)
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, h := range res.Items {
				if h.Content == "" || h.Score <= 0 {
					t.Fatalf("hit %+v", h)
				}
				out = append(out, h.ID)
			}
			return out
		}
		id := func(i int) string { return ids[i] }
		wantIDs(t, "content", search(keyword.SearchBriefingsInput{Query: "zebra"}), pick(nSeed, func(i int) bool { return i%3 == 0 }, id))
		wantIDs(t, "topic", search(keyword.SearchBriefingsInput{Query: "zebra", Topic: " sprint-review "}), pick(nSeed, func(i int) bool { return i%3 == 0 && i%2 == 1 }, id))
		wantIDs(t, "decision", search(keyword.SearchBriefingsInput{Query: "narwhal"}), []string{ids[10]})
		wantIDs(t, "title", search(keyword.SearchBriefingsInput{Query: "close"}), ids)
		// An update is searchable by its new words only.
		if _, err := notes.UpdateBriefingNote(ctx(), pi, briefing.Update{NoteID: ids[0], Content: strp("The manatee plan.")}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "updated", search(keyword.SearchBriefingsInput{Query: "manatee"}), []string{ids[0]})
		wantIDs(t, "old words", search(keyword.SearchBriefingsInput{Query: "zebra"}), pick(nSeed, func(i int) bool { return i%3 == 0 && i != 0 }, id))
		res, err := svc.SearchBriefingNotes(ctx(), as("beta", "pi"), keyword.SearchBriefingsInput{Query: "close zebra"})
		if err != nil || len(res.Items) != 0 {
			t.Fatalf("tenant beta sees %+v (%v)", res, err)
		}
	})
}

func TestSearchComponents(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, svc *keyword.Service, st store.Store, idx *flakyIndex) {
		comps := componentsOn(t, st, idx)
		carol := as("acme", "carol")
		names := make([]string, nSeed)
		for i := range nSeed {
			names[i] = fmt.Sprintf("dev-%s-expert-%d", words[i%3], i)
			content := "---\nname: x\ndescription: Reviews the otter schema\n---\nbody text mentions a penguin"
			if i%2 == 1 {
				content = "plain file, penguin"
			}
			if _, err := comps.RegisterComponent(ctx(), carol, component.RegisterInput{Name: names[i], Type: vp.ComponentTypes[i%4],
				Team: []string{"development", "operations"}[i%2], Content: content}); err != nil {
				t.Fatal(err)
			}
		}
		search := func(in keyword.SearchComponentsInput) []string {
			t.Helper()
			in.Limit = 50
			res, err := svc.SearchComponents(ctx(), as("acme", "dave"), in)
			if err != nil {
				t.Fatal(err)
			}
			out := []string{}
			for _, h := range res.Items {
				if h.Content == "" || h.ID == "" || h.Score <= 0 {
					t.Fatalf("hit %+v", h)
				}
				out = append(out, h.Name)
			}
			return out
		}
		name := func(i int) string { return names[i] }
		wantIDs(t, "name", search(keyword.SearchComponentsInput{Query: "giraffe"}), pick(nSeed, func(i int) bool { return i%3 == 1 }, name))
		wantIDs(t, "type", search(keyword.SearchComponentsInput{Query: "giraffe", Type: "skill"}), pick(nSeed, func(i int) bool { return i%3 == 1 && i%4 == 1 }, name))
		wantIDs(t, "team", search(keyword.SearchComponentsInput{Query: "operations"}), pick(nSeed, func(i int) bool { return i%2 == 1 }, name))
		wantIDs(t, "front matter", search(keyword.SearchComponentsInput{Query: "otter"}), pick(nSeed, func(i int) bool { return i%2 == 0 }, name))
		wantIDs(t, "body is not indexed", search(keyword.SearchComponentsInput{Query: "penguin"}), nil)
		// An update changes what the team finds; a delete removes it.
		if _, err := comps.UpdateComponent(ctx(), carol, component.Update{Name: names[0], Type: "agent", Team: strp("operations")}); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "updated team", search(keyword.SearchComponentsInput{Query: "operations"}), pick(nSeed, func(i int) bool { return i%2 == 1 || i == 0 }, name))
		if _, err := comps.DeleteComponent(ctx(), carol, names[1], "skill", ""); err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "deleted", search(keyword.SearchComponentsInput{Query: "giraffe"}), pick(nSeed, func(i int) bool { return i%3 == 1 && i != 1 }, name))
		_, err := svc.SearchComponents(ctx(), carol, keyword.SearchComponentsInput{Query: "giraffe", Type: "widget"})
		wantKind(t, err, vp.KindInvalid, "type")
		res, err := svc.SearchComponents(ctx(), as("beta", "carol"), keyword.SearchComponentsInput{Query: "giraffe operations"})
		if err != nil || len(res.Items) != 0 {
			t.Fatalf("tenant beta sees %+v (%v)", res, err)
		}
	})
}

func TestKeywordSearchQueries(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, svc *keyword.Service, _ store.Store, _ *flakyIndex) {
		p := as("acme", "alice")
		calls := map[string]func(q string) error{
			"search_messages_by_keyword": func(q string) error {
				_, err := svc.SearchMessages(ctx(), p, keyword.SearchMessagesInput{Query: q})
				return err
			},
			"search_tasks_by_keyword": func(q string) error {
				_, err := svc.SearchTasks(ctx(), p, keyword.SearchTasksInput{Query: q})
				return err
			},
			"search_briefing_notes_by_keyword": func(q string) error {
				_, err := svc.SearchBriefingNotes(ctx(), p, keyword.SearchBriefingsInput{Query: q})
				return err
			},
			"search_components": func(q string) error {
				_, err := svc.SearchComponents(ctx(), p, keyword.SearchComponentsInput{Query: q})
				return err
			},
		}
		for name, call := range calls {
			for _, q := range []string{"", "   ", "?!… —", "&&"} {
				err := call(q)
				wantKind(t, err, vp.KindInvalid, "query")
				if !strings.Contains(err.Error(), name) {
					t.Errorf("%s(%q): %v does not name the tool", name, q, err)
				}
			}
			err := call(strings.Repeat("word ", vp.MaxQueryBytes))
			wantKind(t, err, vp.KindTooLarge, "query")
			if !strings.Contains(err.Error(), fmt.Sprint(vp.MaxQueryBytes)) {
				t.Errorf("%s: %v does not name the limit", name, err)
			}
			if err := call("nothing here"); err != nil {
				t.Errorf("%s on an empty tenant: %v", name, err)
			}
		}
		_, err := svc.SearchMessages(ctx(), vp.Principal{}, keyword.SearchMessagesInput{Query: "x"})
		wantKind(t, err, vp.KindUnauthorized, "")
	})
}

// TestKeywordSearchIndexFailure: a write whose index update fails still
// succeeds, and a search never returns the row in its stale state.
func TestKeywordSearchIndexFailure(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, svc *keyword.Service, st store.Store, idx *flakyIndex) {
		registry := componentsOn(t, st, idx)
		tsk, _ := taskServices(t, st, idx)
		alice := as("acme", "alice")
		tk := mustTask(t, tsk, alice, newTaskIn("Tune the heron cache", "alice"))
		idx.fail.Store(true)
		if _, err := tsk.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(vp.TaskBlocked)}); err != nil {
			t.Fatalf("update with the index down: %v", err)
		}
		c, err := registry.RegisterComponent(ctx(), alice, component.RegisterInput{Name: "heron-agent", Type: "agent", Content: "x"})
		if err != nil {
			t.Fatalf("register with the index down: %v", err)
		}
		idx.fail.Store(false)
		// The index still says todo; the store says blocked.
		res, err := svc.SearchTasks(ctx(), alice, keyword.SearchTasksInput{Query: "heron", Status: vp.TaskTodo})
		if err != nil || len(res.Items) != 0 {
			t.Fatalf("stale status returned: %+v (%v)", res, err)
		}
		// A blocked-status search cannot find it through the stale document
		// either; the next write of the task repairs the index.
		if _, err := tsk.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tk.ID, Priority: tkStr("high")}); err != nil {
			t.Fatal(err)
		}
		res, err = svc.SearchTasks(ctx(), alice, keyword.SearchTasksInput{Query: "heron", Status: vp.TaskBlocked})
		if err != nil || len(res.Items) != 1 || res.Items[0].Status != vp.TaskBlocked || res.Items[0].Priority != "high" {
			t.Fatalf("after repair: %+v (%v)", res, err)
		}
		// A delete whose index update fails: the search drops the orphan.
		idx.fail.Store(true)
		if _, err := registry.DeleteComponent(ctx(), alice, c.Name, c.Type, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := tsk.DeleteTask(ctx(), alice, task.TaskRef{TaskID: tk.ID}); err != nil {
			t.Fatal(err)
		}
		idx.fail.Store(false)
		comps, err := svc.SearchComponents(ctx(), alice, keyword.SearchComponentsInput{Query: "heron"})
		if err != nil || len(comps.Items) != 0 {
			t.Fatalf("deleted component returned: %+v (%v)", comps, err)
		}
		res, err = svc.SearchTasks(ctx(), alice, keyword.SearchTasksInput{Query: "heron"})
		if err != nil || len(res.Items) != 0 {
			t.Fatalf("deleted task returned: %+v (%v)", res, err)
		}
	})
}

func TestKeywordSearchWithoutIndex(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *keyword.Service) {
		alice := as("acme", "alice")
		if _, err := messagesOf(svc).Send(ctx(), alice, message.SendInput{Channel: "bob", Content: "hello"}); err != nil {
			t.Fatalf("writes work without an index: %v", err)
		}
		_, err := svc.SearchMessages(ctx(), alice, keyword.SearchMessagesInput{Query: "hello"})
		wantKind(t, err, vp.KindConflict, "not configured")
		if rep, err := svc.EnsureIndexed(ctx(), "acme"); err != nil || rep.Messages != 0 {
			t.Fatalf("EnsureIndexed without an index: %+v %v", rep, err)
		}
	})
}

// TestEnsureIndexed: rows written before the index existed are found after
// the backfill, which runs once per index.
func TestEnsureIndexed(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		old := newSearchService(t, st, nil)
		oldTasks, _ := taskServices(t, st, nil)
		alice := as("acme", "alice")
		for i := range nSeed {
			mustTask(t, oldTasks, alice, task.CreateTaskInput{Title: fmt.Sprint("legacy pelican task ", i), AssignedTo: "alice", Priority: "low",
				Status: []string{"", vp.TaskInProgress}[i%2]})
			if _, err := messagesOf(old).Send(ctx(), alice, message.SendInput{Channel: "bob", Content: fmt.Sprint("legacy pelican message ", i)}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := briefingsOn(t, st, nil).CreateBriefingNote(ctx(), alice, briefing.Input{Title: "pelican", Topic: "t", Participants: []string{"alice"}, Content: "c"}); err != nil {
			t.Fatal(err)
		}
		if _, err := componentsOn(t, st, nil).RegisterComponent(ctx(), alice, component.RegisterInput{Name: "pelican", Type: "hook", Content: "c"}); err != nil {
			t.Fatal(err)
		}
		if _, err := messagesOf(old).Send(ctx(), as("beta", "x"), message.SendInput{Channel: "y", Content: "beta pelican"}); err != nil {
			t.Fatal(err)
		}
		idx := openIndex(t)
		svc := newSearchService(t, st, idx)
		rep, err := svc.EnsureIndexed(ctx(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		if rep.AlreadyIndexed || rep.Tasks != nSeed || rep.Messages != nSeed || rep.Briefings != 1 || rep.Components != 1 {
			t.Fatalf("report %+v", rep)
		}
		tasks, _ := svc.SearchTasks(ctx(), alice, keyword.SearchTasksInput{Query: "pelican", Limit: 50})
		msgs, _ := svc.SearchMessages(ctx(), alice, keyword.SearchMessagesInput{Query: "pelican", Limit: 50})
		notes, _ := svc.SearchBriefingNotes(ctx(), alice, keyword.SearchBriefingsInput{Query: "pelican"})
		comps, _ := svc.SearchComponents(ctx(), alice, keyword.SearchComponentsInput{Query: "pelican"})
		if tasks.Count != nSeed || msgs.Count != nSeed || notes.Count != 1 || comps.Count != 1 {
			t.Fatalf("after backfill: %d tasks, %d messages, %d notes, %d components", tasks.Count, msgs.Count, notes.Count, comps.Count)
		}
		// Beta, which no backfill reached, is indexed by its first search.
		if res, _ := svc.SearchMessages(ctx(), as("beta", "x"), keyword.SearchMessagesInput{Query: "pelican"}); res.Count != 1 {
			t.Fatalf("beta's first search: %+v", res)
		}
		if rep, err := svc.EnsureIndexed(ctx(), "beta"); err != nil || !rep.AlreadyIndexed {
			t.Fatalf("beta after its first search: %+v %v", rep, err)
		}
		// Once per index: this process remembers it, another reads the marker.
		if rep, err := svc.EnsureIndexed(ctx(), "acme"); err != nil || !rep.AlreadyIndexed {
			t.Fatalf("second run: %+v %v", rep, err)
		}
		if rep, err := newSearchService(t, st, idx).EnsureIndexed(ctx(), "acme"); err != nil || !rep.AlreadyIndexed || rep.Tasks != 0 {
			t.Fatalf("another process: %+v %v", rep, err)
		}
		// A new (lost and recreated) index is backfilled again.
		if rep, err := newSearchService(t, st, openIndex(t)).EnsureIndexed(ctx(), "acme"); err != nil || rep.AlreadyIndexed || rep.Tasks != nSeed {
			t.Fatalf("fresh index: %+v %v", rep, err)
		}
		if _, err := svc.EnsureIndexed(ctx(), "Not A Tenant"); err == nil {
			t.Fatal("invalid tenant accepted")
		}
	})
}

// TestEnsureIndexedNoticesAReplacedIndex: a long-lived process (a warm
// Lambda container, the scheduler) trusts the marker it saw for a while,
// then looks again, and backfills an index that was replaced under it.
func TestEnsureIndexedNoticesAReplacedIndex(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		var mu sync.Mutex
		clock := time.Now()
		now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
		advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); clock = clock.Add(d) }
		idx := openIndex(t)
		svc := appAt(t, b.Open(t, nil), idx, now).Keyword
		alice := as("acme", "alice")
		for i := range nSeed {
			if _, err := messagesOf(svc).Send(ctx(), alice, message.SendInput{Channel: "bob", Content: fmt.Sprint("heron sighting ", i)}); err != nil {
				t.Fatal(err)
			}
		}
		search := func() int {
			t.Helper()
			res, err := svc.SearchMessages(ctx(), alice, keyword.SearchMessagesInput{Query: "heron", Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			return res.Count
		}
		if n := search(); n != nSeed {
			t.Fatalf("before the swap: %d messages, want %d", n, nSeed)
		}
		idx.Index = openIndex(t).Index // replaced by an operator: empty, no marker
		advance(5 * time.Minute)
		if n := search(); n != 0 {
			t.Fatalf("within the recheck period the marker is trusted: %d messages, want 0", n)
		}
		advance(6 * time.Minute)
		if n := search(); n != nSeed {
			t.Fatalf("after the recheck period: %d messages, want %d (backfilled)", n, nSeed)
		}
		if rep, err := svc.EnsureIndexed(ctx(), "acme"); err != nil || !rep.AlreadyIndexed {
			t.Fatalf("after the backfill: %+v %v", rep, err)
		}
	})
}
