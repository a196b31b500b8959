package keyword_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// taskServices are the tasks and missions capabilities on st, indexed in
// idx (nil: not indexed), built as main builds them next to keyword search:
// the keyword searches find what they write.
func taskServices(t *testing.T, st store.Store, idx search.Index) (*task.Service, *mission.Service) {
	a := appOn(t, st, idx)
	return a.Tasks, a.Missions
}

func tkStr(s string) *string { return &s }

func newTaskIn(title, assignee string) task.CreateTaskInput {
	return task.CreateTaskInput{Title: title, AssignedTo: assignee, Priority: "medium"}
}

func mustTask(t *testing.T, svc *task.Service, p vp.Principal, in task.CreateTaskInput) vp.Task {
	t.Helper()
	tk, err := svc.CreateTask(ctx(), p, in)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}
