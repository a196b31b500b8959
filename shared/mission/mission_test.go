package mission_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// faultStore fails every Write whose operations match poison, before the
// backend sees it: if the domain split a change into several writes, the
// ones before the poisoned write would be left behind.
type faultStore struct {
	store.Store
	poison func(ops []store.Op) bool
}

var errInjected = errors.New("injected write failure")

func (f faultStore) Write(ctx context.Context, ops ...store.Op) error {
	if f.poison(ops) {
		return errInjected
	}
	return f.Store.Write(ctx, ops...)
}

func carries(text string) func(ops []store.Op) bool {
	return func(ops []store.Op) bool {
		for _, op := range ops {
			if bytes.Contains(op.Item.Data, []byte(text)) {
				return true
			}
		}
		return false
	}
}

func newMissionIn(name string) mission.CreateMissionInput {
	return mission.CreateMissionInput{Name: name, Project: "studio/ws1", Priority: "high", Pilot: "pi", Agents: []string{"pi", "zeta"}}
}

func mustMission(t *testing.T, svc *services, p vp.Principal, in mission.CreateMissionInput) vp.Mission {
	t.Helper()
	m, err := svc.CreateMission(ctx(), p, in)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// missionIn creates a mission of alice's in the given status.
func missionIn(t *testing.T, svc *services, status string) vp.Mission {
	t.Helper()
	alice := as("acme", "alice")
	m := mustMission(t, svc, alice, newMissionIn("in "+status))
	var err error
	switch status {
	case vp.MissionPlan:
	case vp.MissionCancelled:
		m, err = svc.UpdateMission(ctx(), alice, mission.UpdateMissionInput{MissionID: m.ID, Status: tkStr(status), CancelReason: tkStr("priorities changed")})
	default:
		m, err = svc.UpdateMissionStatus(ctx(), alice, mission.MissionStatusInput{MissionID: m.ID, Status: status})
	}
	if err != nil || m.Status != status {
		t.Fatalf("reaching %s: %s %v", status, m.Status, err)
	}
	return m
}

func TestMissionTransitions(t *testing.T) {
	table := mission.Transitions()
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		for _, from := range vp.MissionStatuses {
			for _, to := range vp.MissionStatuses {
				open := from != vp.MissionComplete && from != vp.MissionCancelled
				allowed := slices.Contains(table[from], to) || (from == to && open)
				t.Run(from+"->"+to, func(t *testing.T) {
					m := missionIn(t, svc, from)
					var got vp.Mission
					var err error
					if to == vp.MissionCancelled {
						got, err = svc.UpdateMission(ctx(), alice, mission.UpdateMissionInput{MissionID: m.ID, Status: tkStr(to), CancelReason: tkStr("dropped")})
					} else {
						got, err = svc.UpdateMissionStatus(ctx(), alice, mission.MissionStatusInput{MissionID: m.ID, Status: to})
					}
					if !allowed {
						wantKind(t, err, vp.KindConflict, "status")
						if !strings.Contains(err.Error(), from) {
							t.Fatalf("refusal does not name the current status: %v", err)
						}
						return
					}
					if err != nil || got.Status != to {
						t.Fatalf("allowed move: %s %v", got.Status, err)
					}
					if to == vp.MissionComplete && got.CompletedAt == nil {
						t.Fatalf("complete without completedAt")
					}
				})
			}
		}
		m := missionIn(t, svc, vp.MissionPlan)
		_, err := svc.UpdateMissionStatus(ctx(), alice, mission.MissionStatusInput{MissionID: m.ID, Status: vp.MissionCancelled})
		wantKind(t, err, vp.KindInvalid, "status")
		if vp.RemedyOf(err) != "mission.cancel" {
			t.Fatalf("cancelling through update_mission_status should point to update_mission: %v", err)
		}
		_, err = svc.UpdateMissionStatus(ctx(), alice, mission.MissionStatusInput{MissionID: m.ID, Status: "blocked"})
		wantKind(t, err, vp.KindInvalid, "status")
		// Cancelling: the creator (or system) only, with a reason.
		_, err = svc.UpdateMission(ctx(), as("acme", "pi"), mission.UpdateMissionInput{MissionID: m.ID, Status: tkStr(vp.MissionCancelled), CancelReason: tkStr("x")})
		wantKind(t, err, vp.KindForbidden, "creator")
		_, err = svc.UpdateMission(ctx(), alice, mission.UpdateMissionInput{MissionID: m.ID, Status: tkStr(vp.MissionCancelled)})
		wantKind(t, err, vp.KindInvalid, "cancelReason")
		got, err := svc.UpdateMission(ctx(), admin("acme"), mission.UpdateMissionInput{MissionID: m.ID, CallerOrchestrator: "system", Status: tkStr(vp.MissionCancelled), CancelReason: tkStr("budget cut")})
		if err != nil || got.Status != vp.MissionCancelled || got.CancelReason != "budget cut" {
			t.Fatalf("system cancel: %+v %v", got, err)
		}
	})
}

func TestMissionFieldsAndProgress(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		m := mustMission(t, svc, alice, mission.CreateMissionInput{Name: "landing page", Project: "studio/ws1", Priority: "medium"})
		if m.Status != vp.MissionPlan || m.Pilot != "alice" || len(m.Agents) != 1 || m.CreatedBy != "alice" {
			t.Fatalf("defaults: %+v", m)
		}
		for _, c := range []struct {
			v  float64
			ok bool
		}{{0, true}, {25, true}, {100, true}, {-1, false}, {101, false}, {50.5, false}} {
			got, err := svc.UpdateMissionProgress(ctx(), alice, mission.MissionProgressInput{MissionID: m.ID, Progress: c.v})
			if c.ok {
				if err != nil || got.Progress == nil || float64(*got.Progress) != c.v {
					t.Fatalf("progress %v: %+v %v", c.v, got.Progress, err)
				}
			} else {
				wantKind(t, err, vp.KindInvalid, "progress")
			}
		}
		got, err := svc.UpdateMission(ctx(), alice, mission.UpdateMissionInput{MissionID: m.ID, Pilot: tkStr("Zeta"), Agents: []string{"zeta", "ZETA", "pi"}, Brief: tkStr("ship v1")})
		if err != nil || got.Pilot != "zeta" || len(got.Agents) != 2 || got.Brief != "ship v1" || got.Name != "landing page" {
			t.Fatalf("update: %+v %v", got, err)
		}
		for _, c := range []struct {
			name  string
			in    mission.CreateMissionInput
			kind  vp.Kind
			field string
		}{
			{"no name", mission.CreateMissionInput{Project: "p", Priority: "low"}, vp.KindInvalid, "name"},
			{"no project", mission.CreateMissionInput{Name: "n", Priority: "low"}, vp.KindInvalid, "project"},
			{"bad priority", mission.CreateMissionInput{Name: "n", Project: "p", Priority: "p1"}, vp.KindInvalid, "priority"},
			{"created complete", mission.CreateMissionInput{Name: "n", Project: "p", Priority: "low", Status: "complete"}, vp.KindInvalid, "status"},
			{"impersonation", mission.CreateMissionInput{Name: "n", Project: "p", Priority: "low", CreatedBy: "bob"}, vp.KindForbidden, "createdBy"},
		} {
			_, err := svc.CreateMission(ctx(), alice, c.in)
			wantKind(t, err, c.kind, c.field)
		}
		_, err = svc.GetMission(ctx(), admin("other"), mission.MissionRef{MissionID: m.ID})
		wantKind(t, err, vp.KindNotFound, "missionId")
	})
}

func TestListMissionsContract(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		const n = 45
		alice := as("acme", "alice")
		want := map[string]vp.Mission{}
		for i := 0; i < n; i++ {
			in := newMissionIn(fmt.Sprint("mission ", i))
			in.Pilot = []string{"pi", "sigma", "tau"}[i%3]
			in.Project = []string{"studio/a", "studio/b"}[i%2]
			in.Status = []string{"brainstorm", "plan", "execute", "validate"}[i%4]
			m := mustMission(t, svc, alice, in)
			if i%7 == 0 {
				var err error
				if m, err = svc.UpdateMissionStatus(ctx(), alice, mission.MissionStatusInput{MissionID: m.ID, Status: vp.MissionComplete}); err != nil {
					t.Fatal(err)
				}
			}
			want[m.ID] = m
		}
		root := admin("acme")
		limit := 20
		drain := func(in mission.ListMissionsInput) []vp.Mission {
			rows := pageAll(t, func(cursor string) (listing.Page[any], error) {
				in.Params = listing.Params{Limit: &limit, Cursor: cursor}
				return svc.ListMissions(ctx(), root, in)
			})
			out := make([]vp.Mission, len(rows))
			seen := map[string]bool{}
			for i, r := range rows {
				out[i] = r.(vp.Mission)
				if seen[out[i].ID] {
					t.Fatalf("mission listed twice")
				}
				seen[out[i].ID] = true
				if i > 0 && out[i].UpdatedAt > out[i-1].UpdatedAt {
					t.Fatalf("not newest-updated first")
				}
			}
			return out
		}
		count := func(f func(vp.Mission) bool) int {
			c := 0
			for _, m := range want {
				if f(m) {
					c++
				}
			}
			return c
		}
		if got := drain(mission.ListMissionsInput{}); len(got) != len(want) {
			t.Fatalf("paged %d missions, want %d", len(got), len(want))
		}
		for _, c := range []struct {
			name string
			in   mission.ListMissionsInput
			f    func(vp.Mission) bool
		}{
			{"project", mission.ListMissionsInput{Project: "studio/b"}, func(m vp.Mission) bool { return m.Project == "studio/b" }},
			{"pilot active", mission.ListMissionsInput{Pilot: "Sigma", Status: "active"}, func(m vp.Mission) bool {
				return m.Pilot == "sigma" && (m.Status == "plan" || m.Status == "execute")
			}},
			{"open", mission.ListMissionsInput{Status: "open"}, func(m vp.Mission) bool { return m.Status != "complete" && m.Status != "cancelled" }},
			{"array", mission.ListMissionsInput{Status: []any{"complete", "brainstorm"}}, func(m vp.Mission) bool { return m.Status == "complete" || m.Status == "brainstorm" }},
		} {
			if got, w := len(drain(c.in)), count(c.f); got != w || w == 0 {
				t.Fatalf("%s: %d rows, want %d", c.name, got, w)
			}
		}
		big := 500
		page, err := svc.ListMissions(ctx(), root, mission.ListMissionsInput{Params: listing.Params{Limit: &big, Fields: "lite"}})
		if err != nil || len(page.Items) > 200 || page.NextCursor != "" {
			t.Fatalf("limit 500: %d rows, cursor %q, %v", len(page.Items), page.NextCursor, err)
		}
		for k := range page.Items[0].(map[string]json.RawMessage) {
			if !slices.Contains([]string{"_id", "_creationTime", "name", "status", "pilot", "priority", "project"}, k) {
				t.Fatalf("lite row carries %q", k)
			}
		}
		first, _ := svc.ListMissions(ctx(), root, mission.ListMissionsInput{})
		_, err = svc.ListMissions(ctx(), root, mission.ListMissionsInput{Params: listing.Params{Cursor: "x" + first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListMissions(ctx(), root, mission.ListMissionsInput{Pilot: "pi", Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
	})
}

func TestMissionTasksAndListByMission(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		m := mustMission(t, svc, alice, newMissionIn("website"))
		const n = 45
		var ids []string
		for i := 0; i < n; i++ {
			in := newTaskIn(fmt.Sprint("page ", i), "zeta")
			in.MissionID = m.ID
			ids = append(ids, mustTask(t, svc, alice, in).ID)
		}
		mustTask(t, svc, alice, newTaskIn("not in the mission", "zeta"))
		// Move the last task out and back: the link follows.
		if _, err := svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: ids[n-1], MissionID: tkStr("")}); err != nil {
			t.Fatal(err)
		}
		view, err := svc.GetMission(ctx(), alice, mission.MissionRef{MissionID: m.ID})
		if err != nil || len(view.Tasks) != n-1 || view.TaskCounts[vp.TaskTodo] != n-1 {
			t.Fatalf("view after moving a task out: %d tasks %v", len(view.Tasks), err)
		}
		if _, err := svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: ids[n-1], MissionID: tkStr(m.ID)}); err != nil {
			t.Fatal(err)
		}
		limit := 20
		rows := pageAll(t, func(cursor string) (listing.Page[any], error) {
			return svc.ListTasksByMission(ctx(), alice, task.ListTasksByMissionInput{MissionID: m.ID, Params: listing.Params{Limit: &limit, Cursor: cursor}})
		})
		if len(rows) != n {
			t.Fatalf("list_tasks_by_mission: %d rows, want %d", len(rows), n)
		}
		for i, r := range rows {
			if r.(vp.Task).ID != ids[i] {
				t.Fatalf("row %d is %s, want %s (creation order)", i, r.(vp.Task).ID, ids[i])
			}
		}
		if _, err := svc.StartTask(ctx(), as("acme", "zeta"), task.TaskRef{TaskID: ids[3]}); err != nil {
			t.Fatal(err)
		}
		page, err := svc.ListTasksByMission(ctx(), alice, task.ListTasksByMissionInput{MissionID: m.ID, Status: "in_progress"})
		if err != nil || len(page.Items) != 1 || page.Items[0].(vp.Task).ID != ids[3] {
			t.Fatalf("by mission and status: %v %v", page.Items, err)
		}
		page, _ = svc.ListTasks(ctx(), alice, task.ListTasksInput{MissionID: m.ID, Status: "todo", Params: listing.Params{Limit: &limit}})
		if len(page.Items) != 20 || page.NextCursor == "" {
			t.Fatalf("list_tasks missionId: %d rows", len(page.Items))
		}
		_, err = svc.ListTasksByMission(ctx(), alice, task.ListTasksByMissionInput{MissionID: "msn_nope"})
		wantKind(t, err, vp.KindNotFound, "missionId")
		_, err = svc.ListTasksByMission(ctx(), alice, task.ListTasksByMissionInput{MissionID: m.ID, Params: listing.Params{Cursor: page.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
	})
}

func TestMissionAutoComplete(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		// Cancelled tasks do not hold a mission open; the last close
		// (a completion or a cancellation) completes it.
		for _, last := range []string{"complete", "cancel"} {
			m := mustMission(t, svc, alice, newMissionIn("auto "+last))
			var ids []string
			for i := 0; i < 3; i++ {
				in := newTaskIn(fmt.Sprint("t", i), "alice")
				in.MissionID = m.ID
				ids = append(ids, mustTask(t, svc, alice, in).ID)
			}
			if _, err := svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: ids[0], Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("not needed")}); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: ids[1], CompletionNote: "ok"}); err != nil {
				t.Fatal(err)
			}
			if v, _ := svc.GetMission(ctx(), alice, mission.MissionRef{MissionID: m.ID}); v.Status != vp.MissionPlan {
				t.Fatalf("%s: mission %s with a task open", last, v.Status)
			}
			var err error
			if last == "complete" {
				_, err = svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: ids[2], CompletionNote: "ok"})
			} else {
				_, err = svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: ids[2], Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("cut")})
			}
			if err != nil {
				t.Fatal(err)
			}
			v, _ := svc.GetMission(ctx(), alice, mission.MissionRef{MissionID: m.ID})
			if v.Status != vp.MissionComplete || !v.AutoCompleted || v.CompletedAt == nil {
				t.Fatalf("%s: mission %s after its last task closed", last, v.Status)
			}
			// A complete mission takes no new task.
			in := newTaskIn("late", "alice")
			in.MissionID = m.ID
			_, err = svc.CreateTask(ctx(), alice, in)
			wantKind(t, err, vp.KindConflict, "missionId")
		}
		// All cancelled: nothing was done, the mission stays open.
		m := mustMission(t, svc, alice, newMissionIn("all cancelled"))
		in := newTaskIn("only", "alice")
		in.MissionID = m.ID
		only := mustTask(t, svc, alice, in)
		if _, err := svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: only.ID, Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("x")}); err != nil {
			t.Fatal(err)
		}
		if v, _ := svc.GetMission(ctx(), alice, mission.MissionRef{MissionID: m.ID}); v.Status != vp.MissionPlan {
			t.Fatalf("a mission with only cancelled tasks completed")
		}
		// Tasks completed concurrently: the mission still completes.
		m = mustMission(t, svc, alice, newMissionIn("parallel"))
		var ids []string
		for i := 0; i < 10; i++ {
			in := newTaskIn(fmt.Sprint("p", i), "alice")
			in.MissionID = m.ID
			ids = append(ids, mustTask(t, svc, alice, in).ID)
		}
		var wg sync.WaitGroup
		for _, id := range ids {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := svc.CompleteTask(context.Background(), alice, task.CompleteTaskInput{TaskID: id, CompletionNote: "ok"}); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if v, _ := svc.GetMission(ctx(), alice, mission.MissionRef{MissionID: m.ID}); v.Status != vp.MissionComplete {
			t.Fatalf("concurrent completions left the mission %s", v.Status)
		}
	})
}

func TestMissionTemplates(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		irp, err := svc.GetMissionTemplate(ctx(), alice, mission.TemplateRef{Name: "issue-resolution-v2"})
		if err != nil {
			t.Fatal(err)
		}
		if len(irp.Steps) != 14 || !irp.IsDefault || irp.CreatedBy != "system" {
			t.Fatalf("issue-resolution-v2: %d steps, default %v", len(irp.Steps), irp.IsDefault)
		}
		titles := []string{"Acknowledge", "KB Search", "Verify Config", "Identify Tests", "Run Existing Tests", "Evaluate Coverage",
			"Write Missing Tests", "Fix", "Run ALL Tests", "Code Review", "Deploy Dev + Push", "Verification Preview", "Update KB", "Close Issue"}
		for i, st := range irp.Steps {
			if want := fmt.Sprintf("T%d — %s", i, titles[i]); st.Title != want {
				t.Fatalf("step %d is %q, want %q", i, st.Title, want)
			}
		}
		for name, steps := range map[string]int{"repo-fix-v1": 10, "new-feature-v1": 10} {
			tpl, err := svc.GetMissionTemplate(ctx(), alice, mission.TemplateRef{Name: name})
			if err != nil || len(tpl.Steps) != steps {
				t.Fatalf("%s: %d steps %v", name, len(tpl.Steps), err)
			}
		}
		// Seeding is idempotent under concurrency: one row, one id.
		ids := make(chan string, 10)
		var wg sync.WaitGroup
		for i := 0; i < 10; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tpl, err := svc.GetMissionTemplate(context.Background(), as("race", "alice"), mission.TemplateRef{Name: "repo-fix-v1"})
				if err != nil {
					t.Error(err)
					return
				}
				ids <- tpl.ID
			}()
		}
		wg.Wait()
		close(ids)
		var distinct []string
		for id := range ids {
			if !slices.Contains(distinct, id) {
				distinct = append(distinct, id)
			}
		}
		if len(distinct) != 1 {
			t.Fatalf("concurrent first reads seeded %d templates", len(distinct))
		}
		// A tenant's own version overrides the built-in, for that tenant only.
		custom := []vp.TemplateStep{
			{Title: "Acknowledge", Description: "Auto-posted GitHub comment"},
			{Title: "KB Search", Description: "Search fixPatterns for {{repo}}", DependsOn: []int{0}},
		}
		up, err := svc.UpdateMissionTemplate(ctx(), alice, mission.UpdateTemplateInput{Name: "issue-resolution-v2", Steps: custom})
		if err != nil || up.ID != irp.ID || up.CreatedBy != "alice" || !up.IsDefault {
			t.Fatalf("override: %+v %v", up, err)
		}
		got, _ := svc.GetMissionTemplate(ctx(), alice, mission.TemplateRef{Name: "issue-resolution-v2"})
		if len(got.Steps) != 2 {
			t.Fatalf("override not read back: %d steps", len(got.Steps))
		}
		other, _ := svc.GetMissionTemplate(ctx(), as("other", "x"), mission.TemplateRef{Name: "issue-resolution-v2"})
		if len(other.Steps) != 14 {
			t.Fatalf("another tenant sees the override")
		}
		// A template written before first use is never replaced by the seed.
		if _, err := svc.UpdateMissionTemplate(ctx(), as("fresh", "alice"), mission.UpdateTemplateInput{Name: "new-feature-v1", Steps: custom[:1]}); err != nil {
			t.Fatal(err)
		}
		if tpl, _ := svc.GetMissionTemplate(ctx(), as("fresh", "alice"), mission.TemplateRef{Name: "new-feature-v1"}); len(tpl.Steps) != 1 {
			t.Fatalf("the seed overwrote a tenant's template")
		}
		_, err = svc.GetMissionTemplate(ctx(), alice, mission.TemplateRef{Name: "issue-resolution-v9"})
		wantKind(t, err, vp.KindNotFound, "name")
		for _, c := range []struct {
			name  string
			steps []vp.TemplateStep
			kind  vp.Kind
			field string
		}{
			{"no steps", nil, vp.KindInvalid, "steps"},
			{"forward dependency", []vp.TemplateStep{{Title: "a", DependsOn: []int{1}}, {Title: "b"}}, vp.KindInvalid, "steps[0].dependsOn"},
			{"self dependency", []vp.TemplateStep{{Title: "a"}, {Title: "b", DependsOn: []int{1}}}, vp.KindInvalid, "steps[1].dependsOn"},
			{"untitled", []vp.TemplateStep{{Description: "x"}}, vp.KindInvalid, "steps[0].title"},
			{"too many", make([]vp.TemplateStep, vp.MaxTemplateSteps+1), vp.KindTooLarge, "steps"},
		} {
			_, err := svc.UpdateMissionTemplate(ctx(), alice, mission.UpdateTemplateInput{Name: "bad", Steps: c.steps})
			wantKind(t, err, c.kind, c.field)
		}
	})
}

func TestInstantiateTemplate(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		pi := as("acme", "pi")
		m := mustMission(t, svc, pi, newMissionIn("fix-issue-142"))
		res, err := svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{
			TemplateName: "issue-resolution-v2", MissionID: m.ID, TitlePrefix: "[#142]",
			Context: map[string]string{"issueNumber": "142", "repo": "vantage-memory", "orchestrator": "pi"},
		})
		if err != nil || res.Count != 14 || len(res.TaskIDs) != 14 {
			t.Fatalf("instantiate: %+v %v", res, err)
		}
		view, err := svc.GetMission(ctx(), pi, mission.MissionRef{MissionID: m.ID})
		if err != nil || len(view.Tasks) != 14 {
			t.Fatalf("mission view: %d tasks %v", len(view.Tasks), err)
		}
		for i, tk := range view.Tasks {
			if tk.ID != res.TaskIDs[i] || !strings.HasPrefix(tk.Title, fmt.Sprintf("[#142] T%d — ", i)) {
				t.Fatalf("task %d: %s %q", i, tk.ID, tk.Title)
			}
			if tk.MissionID != m.ID || tk.AssignedTo != "pi" || tk.Priority != "high" || tk.Project != "studio/ws1" || tk.CreatedBy != "pi" {
				t.Fatalf("task %d fields: %+v", i, tk)
			}
			if i > 0 && (len(tk.DependsOn) != 1 || tk.DependsOn[0] != res.TaskIDs[i-1]) {
				t.Fatalf("task %d dependsOn %v, want the previous step", i, tk.DependsOn)
			}
			if strings.Contains(tk.Description, "{{") {
				t.Fatalf("task %d: placeholders left: %q", i, tk.Description)
			}
		}
		if !strings.Contains(view.Tasks[0].Description, "#142 (vantage-memory)") {
			t.Fatalf("context not interpolated: %q", view.Tasks[0].Description)
		}
		// Refusals leave nothing behind.
		m2 := mustMission(t, svc, pi, newMissionIn("refusals"))
		_, err = svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "issue-resolution-v2", MissionID: m2.ID, TitlePrefix: strings.Repeat("x", 120)})
		if err != nil {
			t.Fatalf("a 120-byte prefix fits: %v", err)
		}
		m3 := mustMission(t, svc, pi, newMissionIn("long titles"))
		long := make([]vp.TemplateStep, 20)
		for i := range long {
			long[i] = vp.TemplateStep{Title: fmt.Sprint("step ", i)}
		}
		long[19].Title = strings.Repeat("y", vp.MaxTaskTitleBytes-3) // fits alone, not with "[#9] "
		if _, err := svc.UpdateMissionTemplate(ctx(), pi, mission.UpdateTemplateInput{Name: "long-v1", Steps: long}); err != nil {
			t.Fatal(err)
		}
		_, err = svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "long-v1", MissionID: m3.ID, TitlePrefix: "[#9]"})
		wantKind(t, err, vp.KindTooLarge, "titlePrefix")
		_, err = svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "nope-v1", MissionID: m3.ID})
		wantKind(t, err, vp.KindNotFound, "templateName")
		_, err = svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "repo-fix-v1", MissionID: "msn_nope"})
		wantKind(t, err, vp.KindNotFound, "missionId")
		cancelled := missionIn(t, svc, vp.MissionCancelled)
		_, err = svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "repo-fix-v1", MissionID: cancelled.ID})
		wantKind(t, err, vp.KindConflict, "missionId")
		for _, id := range []string{m3.ID, cancelled.ID} {
			if v, _ := svc.GetMission(ctx(), pi, mission.MissionRef{MissionID: id}); len(v.Tasks) != 0 {
				t.Fatalf("a refused instantiation left %d tasks", len(v.Tasks))
			}
		}
		all, _ := svc.ListTasks(ctx(), pi, task.ListTasksInput{CreatedBy: "pi", Params: listing.Params{Limit: ptrInt(200)}})
		if len(all.Items) != 28 {
			t.Fatalf("%d tasks exist, want the 28 of the two successful instantiations", len(all.Items))
		}
	})
}

func ptrInt(n int) *int { return &n }

// TestInstantiateIsOneTransaction: a write failure anywhere in the
// instantiation leaves no task and no link (nothing partial).
func TestInstantiateIsOneTransaction(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		raw := b.Open(t, nil)
		svc := newService(t, faultStore{Store: raw, poison: carries("[#7] T7 — Fix")})
		pi := as("acme", "pi")
		m := mustMission(t, svc, pi, newMissionIn("fix-issue-7"))
		_, err := svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "issue-resolution-v2", MissionID: m.ID, TitlePrefix: "[#7]"})
		if !errors.Is(err, errInjected) {
			t.Fatalf("got %v, want the injected failure", err)
		}
		view, err := svc.GetMission(ctx(), pi, mission.MissionRef{MissionID: m.ID})
		if err != nil || len(view.Tasks) != 0 {
			t.Fatalf("%d tasks left behind (%v)", len(view.Tasks), err)
		}
		rows, err := raw.Query(ctx(), store.Query{PK: "T#acme#MISSION#" + m.ID, Limit: 100})
		if err != nil || len(rows) != 1 {
			t.Fatalf("mission partition holds %d rows (links left behind?) %v", len(rows), err)
		}
		page, _ := svc.ListTasks(ctx(), pi, task.ListTasksInput{})
		if len(page.Items) != 0 {
			t.Fatalf("%d tasks exist", len(page.Items))
		}
	})
}

// TestTemplateMissionLifecycle: a mission from a template whose tasks are
// checked out, started, paused, resumed and completed completes by itself.
func TestTemplateMissionLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		pi, zeta := as("acme", "pi"), as("acme", "zeta")
		m := mustMission(t, svc, pi, newMissionIn("fix external bug"))
		res, err := svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "repo-fix-v1", MissionID: m.ID,
			Context: map[string]string{"repo": "get-convex/better-auth", "issueNumber": "88"}})
		if err != nil || res.Count != 10 {
			t.Fatalf("instantiate: %+v %v", res, err)
		}
		if _, err := svc.UpdateMissionStatus(ctx(), pi, mission.MissionStatusInput{MissionID: m.ID, Status: vp.MissionExecute}); err != nil {
			t.Fatal(err)
		}
		// The second step waits for the first.
		if r, _ := svc.CheckoutTask(ctx(), zeta, task.CheckoutInput{TaskID: res.TaskIDs[1]}); r.Claimed {
			t.Fatal("claimed a step whose prerequisite is open")
		}
		for i, id := range res.TaskIDs {
			ref := task.TaskRef{TaskID: id}
			if i%2 == 0 {
				r, err := svc.CheckoutTask(ctx(), zeta, task.CheckoutInput{TaskID: id, CallerInstance: "zeta-vps"})
				if err != nil || !r.Claimed {
					t.Fatalf("step %d checkout: %+v %v", i, r, err)
				}
			} else {
				if _, err := svc.UpdateTask(ctx(), pi, task.UpdateTaskInput{TaskID: id, AssignedTo: tkStr("zeta")}); err != nil {
					t.Fatal(err)
				}
				if _, err := svc.StartTask(ctx(), zeta, ref); err != nil {
					t.Fatalf("step %d start: %v", i, err)
				}
			}
			if _, err := svc.PauseTask(ctx(), zeta, ref); err != nil {
				t.Fatalf("step %d pause: %v", i, err)
			}
			if _, err := svc.ResumeTask(ctx(), zeta, ref); err != nil {
				t.Fatalf("step %d resume: %v", i, err)
			}
			done, err := svc.CompleteTask(ctx(), zeta, task.CompleteTaskInput{TaskID: id, CompletionNote: fmt.Sprintf("step %d done, evidence in PR #5", i)})
			if err != nil || len(done.WorkSegments) != 2 || done.ActualMinutes == nil {
				t.Fatalf("step %d complete: %+v %v", i, done, err)
			}
			v, _ := svc.GetMission(ctx(), pi, mission.MissionRef{MissionID: m.ID})
			if last := i == len(res.TaskIDs)-1; (v.Status == vp.MissionComplete) != last {
				t.Fatalf("after step %d the mission is %s", i, v.Status)
			}
		}
		v, _ := svc.GetMission(ctx(), pi, mission.MissionRef{MissionID: m.ID})
		if !v.AutoCompleted || v.TaskCounts[vp.TaskDone] != 10 {
			t.Fatalf("mission %+v", v.Mission)
		}
	})
}
