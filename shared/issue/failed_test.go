package issue_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestFailedStepIsNotAFix: the protocol reacts to done steps only. A
// failed T8 ("Fix ready") neither marks the issue fixed nor posts the
// fix comment; its mission stays open for the pilot.
func TestFailedStepIsNotAFix(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		e.mapRepo(t, "acme/api", "sigma", "api")
		e.deliver(t, "issues", "d-1", issuesPayload(t, "opened", ghIssue{Repo: "acme/api", Number: 9, Title: "Export times out"}, nil))
		e.drain(t)
		i := e.issue(t, "acme/api", 9)
		view := e.completeSteps(t, i.MissionID, 7, "ok at 3f2a9c1")
		e.drain(t)
		before := len(e.gh.commentsOn("acme/api", 9))
		t8 := view.Tasks[8]
		if _, err := e.tasks.FailTask(ctx(), as(tenant, t8.AssignedTo), task.FailTaskInput{TaskID: t8.ID, Reason: "the fix at 4b5c6d7 broke the import; reverted"}); err != nil {
			t.Fatal(err)
		}
		e.drain(t)
		got := e.issue(t, "acme/api", 9)
		if got.Status != issue.StatusInProgress {
			t.Fatalf("after a failed T8 the issue is %s, want in_progress", got.Status)
		}
		if n := len(e.gh.commentsOn("acme/api", 9)); n != before {
			t.Fatalf("a failed T8 posted %d comment(s)", n-before)
		}
		if v, _ := e.missions.GetMission(ctx(), admin(tenant), mission.MissionRef{MissionID: i.MissionID}); v.Status == vp.MissionComplete || v.TaskCounts[vp.TaskFailed] != 1 {
			t.Fatalf("mission %s, counts %v", v.Status, v.TaskCounts)
		}
	})
}
