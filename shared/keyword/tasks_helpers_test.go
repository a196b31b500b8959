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
// idx (nil: not indexed), wired as main wires them next to keyword search: the
// keyword searches find what they write.
func taskServices(st store.Store, idx search.Index) (*task.Service, *mission.Service) {
	var w *search.Writer
	if idx != nil {
		w = &search.Writer{Index: idx}
	}
	ts := task.New(task.Options{Store: st, Search: w})
	ms := mission.New(mission.Options{Store: st, Tasks: ts})
	ts.UseMissions(ms)
	return ts, ms
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
