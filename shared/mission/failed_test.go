package mission_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestFailedTaskKeepsItsMissionOpen: fail_task publishes task.finished
// for the task's mission (the mission hears of it, NewStatus failed);
// the mission does not complete by itself while it holds a failed task,
// counts it in its view, and completes once the pilot detaches it.
func TestFailedTaskKeepsItsMissionOpen(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		svc := newServices(t, st, signer(t), nil)
		ob, err := outbox.New(outbox.Options{Store: st})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var heard []task.Finished
		if err := ob.Subscribe(task.TopicFinished, "mission.autocomplete", svc.missions.OnTaskFinished); err != nil {
			t.Fatal(err)
		}
		if err := ob.Subscribe(task.TopicFinished, "spy", func(_ context.Context, j outbox.Job) error {
			f, err := task.DecodeFinished(j)
			mu.Lock()
			heard = append(heard, f)
			mu.Unlock()
			return err
		}); err != nil {
			t.Fatal(err)
		}
		svc.tasks.UseEvents(ob)

		pi := as("acme", "pi")
		m := mustMission(t, svc, pi, newMissionIn("ship the export"))
		var ids []string
		for _, title := range []string{"export", "import"} {
			in := newTaskIn(title, "pi")
			in.MissionID = m.ID
			ids = append(ids, mustTask(t, svc, pi, in).ID)
		}
		if _, err := svc.CompleteTask(ctx(), pi, task.CompleteTaskInput{TaskID: ids[0], CompletionNote: "PR #3"}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.FailTask(ctx(), pi, task.FailTaskInput{TaskID: ids[1], Reason: "the import format is undocumented"}); err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		got := slices.IndexFunc(heard, func(f task.Finished) bool {
			return f.TaskID == ids[1] && f.MissionID == m.ID && f.NewStatus == vp.TaskFailed
		})
		mu.Unlock()
		if got < 0 {
			t.Fatalf("the mission did not hear of the failure: %+v", heard)
		}
		v, err := svc.GetMission(ctx(), pi, mission.MissionRef{MissionID: m.ID})
		if err != nil || v.Status == vp.MissionComplete || v.AutoCompleted || v.TaskCounts[vp.TaskFailed] != 1 {
			t.Fatalf("mission with a failed task: %v status %s auto %v counts %v", err, v.Status, v.AutoCompleted, v.TaskCounts)
		}
		if _, err := svc.UpdateTask(ctx(), pi, task.UpdateTaskInput{TaskID: ids[1], MissionID: tkStr("")}); err != nil {
			t.Fatal(err)
		}
		if v, _ := svc.GetMission(ctx(), pi, mission.MissionRef{MissionID: m.ID}); v.Status != vp.MissionComplete || !v.AutoCompleted {
			t.Fatalf("the failed task detached, the mission is %s", v.Status)
		}
	})
}

// TestTemplateStepsRecordWhoWaits: a template's later steps are recorded
// on the steps they depend on, so a step's assignee hears who waits on it.
func TestTemplateStepsRecordWhoWaits(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		pi := as("acme", "pi")
		steps := []vp.TemplateStep{
			{Title: "API", AssignedTo: "{{backend}}"},
			{Title: "Client", AssignedTo: "{{frontend}}", DependsOn: []int{0}},
			{Title: "Docs", AssignedTo: "{{backend}}", DependsOn: []int{0, 1}},
		}
		if _, err := svc.UpdateMissionTemplate(ctx(), pi, mission.UpdateTemplateInput{Name: "api-then-client", Steps: steps}); err != nil {
			t.Fatal(err)
		}
		m := mustMission(t, svc, pi, newMissionIn("api"))
		res, err := svc.InstantiateTemplate(ctx(), pi, mission.InstantiateInput{TemplateName: "api-then-client", MissionID: m.ID,
			Context: map[string]string{"backend": "zeta", "frontend": "pi"}})
		if err != nil {
			t.Fatal(err)
		}
		api, _ := svc.GetTask(ctx(), pi, task.TaskRef{TaskID: res.TaskIDs[0]})
		if !slices.Equal(api.WaitedOnBy, res.TaskIDs[1:]) {
			t.Fatalf("API step waited on by %v, want %v", api.WaitedOnBy, res.TaskIDs[1:])
		}
		w, err := svc.StuckWork(ctx(), "acme", "zeta", 4*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		// The Docs step is zeta's own: only pi's Client step waits on zeta.
		if len(w.PeersStuckOnYou) != 1 || w.PeersStuckOnYou[0].TaskID != res.TaskIDs[1] || w.PeersStuckOnYou[0].MissionID != m.ID {
			t.Fatalf("zeta's peers: %+v, want pi's Client step %s", w.PeersStuckOnYou, res.TaskIDs[1])
		}
	})
}
