package task_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestTaskKeysUnchanged: the declared keys are byte for byte the keys
// existing data was written with.
func TestTaskKeysUnchanged(t *testing.T) {
	tk := vp.Task{ID: "tsk_1", AssignedTo: "bob", Status: vp.TaskTodo, CreatedBy: "alice", Project: "web", UpdatedAt: 42}
	it, err := task.Table.Item("op", "acme", tk)
	if err != nil {
		t.Fatal(err)
	}
	sk := "0000000000042#tsk_1"
	want := [store.NumGSI]store.Key{{PK: "T#acme#TASGN#bob#todo", SK: sk}, {PK: "T#acme#TSTAT#todo", SK: sk}, {PK: "T#acme#TBY#alice", SK: sk}, {PK: "T#acme#TPROJ#web", SK: sk}}
	if it.Key != (store.Key{PK: "T#acme#TASK#tsk_1", SK: "TASK"}) || it.GSI != want || task.Key("acme", "tsk_1") != it.Key {
		t.Fatalf("keys %+v %+v", it.Key, it.GSI)
	}
	tk.Project = ""
	if it, _ = task.Table.Item("op", "acme", tk); it.GSI[3] != (store.Key{}) {
		t.Fatalf("a task without a project is in the project index: %+v", it.GSI[3])
	}
}
