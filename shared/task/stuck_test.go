package task_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestFailTask: fail_task ends a task from every open state (todo,
// paused, in_progress, review, blocked) with its reason, and is refused
// from the final ones; it needs a reason within the declared limit and
// the creator, the assignee or system; update_task never sets failed.
func TestFailTask(t *testing.T) {
	allowed := map[string]bool{vp.TaskTodo: true, "paused": true, vp.TaskInProgress: true, vp.TaskReview: true, vp.TaskBlocked: true}
	eachBackendTasks(t, func(t *testing.T, svc *services, _ store.Store, clock *taskClock) {
		alice := as("acme", "alice")
		for _, from := range taskStates {
			t.Run(from, func(t *testing.T) {
				tk := taskIn(t, svc, from)
				_, err := svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(vp.TaskFailed)})
				wantKind(t, err, vp.KindInvalid, "status")
				if !strings.Contains(err.Error(), "fail_task") {
					t.Fatalf("update_task status failed should point to fail_task: %v", err)
				}
				clock.Advance(30 * time.Minute)
				got, err := svc.FailTask(ctx(), alice, task.FailTaskInput{TaskID: tk.ID, Reason: "the vendor API was removed; tried v1 and v2"})
				if !allowed[from] {
					wantKind(t, err, vp.KindConflict, "")
					if !strings.Contains(err.Error(), "final") && !strings.Contains(err.Error(), tk.Status) {
						t.Fatalf("refusal does not say why: %v", err)
					}
					after, _ := svc.GetTask(ctx(), alice, task.TaskRef{TaskID: tk.ID})
					if after.Status != tk.Status {
						t.Fatalf("a refused fail_task moved %s to %s", tk.Status, after.Status)
					}
					return
				}
				if err != nil {
					t.Fatalf("fail_task from %s: %v", from, err)
				}
				if got.Status != vp.TaskFailed || got.FailReason != "the vendor API was removed; tried v1 and v2" || got.FailedAt == nil ||
					got.OpenSegment() >= 0 || got.Paused || got.CompletedAt != nil {
					t.Fatalf("failed task: %+v", got)
				}
				if from == vp.TaskInProgress && (got.ActualMinutes == nil || *got.ActualMinutes < 30) {
					t.Fatalf("the 30 minutes spent were not settled: %v", got.ActualMinutes)
				}
				stored, _ := svc.GetTask(ctx(), alice, task.TaskRef{TaskID: tk.ID})
				if stored.Status != vp.TaskFailed || stored.FailReason != got.FailReason {
					t.Fatalf("stored: %+v", stored)
				}
				for _, to := range []string{vp.TaskTodo, vp.TaskInProgress, vp.TaskDone} {
					in := task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(to), CompletionNote: tkStr("x")}
					if _, err := svc.UpdateTask(ctx(), alice, in); vp.KindOf(err) != vp.KindConflict || !strings.Contains(err.Error(), "final") {
						t.Fatalf("failed → %s: %v, want a conflict saying failed is final", to, err)
					}
				}
			})
		}
		t.Run("checks", func(t *testing.T) {
			tk := taskIn(t, svc, vp.TaskInProgress)
			_, err := svc.FailTask(ctx(), alice, task.FailTaskInput{TaskID: tk.ID})
			wantKind(t, err, vp.KindInvalid, "reason")
			_, err = svc.FailTask(ctx(), alice, task.FailTaskInput{TaskID: tk.ID, Reason: strings.Repeat("x", task.FailTaskInput{}.Limits().Bytes+1)})
			if err == nil || !strings.Contains(err.Error(), "reason") || !strings.Contains(err.Error(), "2048") {
				t.Fatalf("oversize reason: %v", err)
			}
			_, err = svc.FailTask(ctx(), as("acme", "carol"), task.FailTaskInput{TaskID: tk.ID, Reason: "not mine"})
			wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		})
		t.Run("a clock that ran through a break does not keep the task open", func(t *testing.T) {
			tk := taskIn(t, svc, vp.TaskInProgress)
			clock.Advance(10 * time.Hour)
			got, err := svc.FailTask(ctx(), alice, task.FailTaskInput{TaskID: tk.ID, Reason: "stuck for good"})
			if err != nil || got.Status != vp.TaskFailed || got.ActualMinutes != nil {
				t.Fatalf("fail after a 10 h segment: %v %+v", err, got)
			}
		})
	})
}

// TestListTasksFiltersFailed: list_tasks status failed lists failed tasks
// only; open and active never do; all does.
func TestListTasksFiltersFailed(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		failed := taskIn(t, svc, vp.TaskFailed)
		open := taskIn(t, svc, vp.TaskInProgress)
		done := taskIn(t, svc, vp.TaskDone)
		ids := func(status any, assignee string) []string {
			page, err := svc.ListTasks(ctx(), alice, task.ListTasksInput{Status: status, AssignedTo: assignee})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, it := range page.Items {
				out = append(out, it.(vp.Task).ID)
			}
			return out
		}
		for _, assignee := range []string{"", "alice"} { // gsi2 and gsi1
			if got := ids(vp.TaskFailed, assignee); !slices.Equal(got, []string{failed.ID}) {
				t.Fatalf("status failed (assignee %q): %v, want [%s]", assignee, got, failed.ID)
			}
			for _, alias := range []string{"open", "active"} {
				if got := ids(alias, assignee); slices.Contains(got, failed.ID) || !slices.Contains(got, open.ID) {
					t.Fatalf("status %s (assignee %q): %v", alias, assignee, got)
				}
			}
			if got := ids("all", assignee); !slices.Contains(got, failed.ID) || !slices.Contains(got, done.ID) {
				t.Fatalf("status all (assignee %q): %v", assignee, got)
			}
		}
	})
}

// TestBlockTaskCause: block_task stores an optional blockedCause from a
// small enum beside the reason; another value is refused naming the
// allowed ones; leaving blocked clears both.
func TestBlockTaskCause(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		tk := taskIn(t, svc, vp.TaskInProgress)
		_, err := svc.BlockTask(ctx(), alice, task.BlockTaskInput{TaskID: tk.ID, Reason: "bob", BlockedCause: "waiting"})
		wantKind(t, err, vp.KindInvalid, "blockedCause")
		for _, c := range vp.BlockedCauses {
			if !strings.Contains(err.Error(), c) {
				t.Fatalf("refusal does not name %q: %v", c, err)
			}
		}
		got, err := svc.BlockTask(ctx(), alice, task.BlockTaskInput{TaskID: tk.ID, Reason: "bob's review, since Monday", BlockedCause: "review"})
		if err != nil || got.BlockedCause != "review" || got.BlockedBy != "bob's review, since Monday" {
			t.Fatalf("block: %v %+v", err, got)
		}
		if stored, _ := svc.GetTask(ctx(), alice, task.TaskRef{TaskID: tk.ID}); stored.BlockedCause != "review" {
			t.Fatalf("stored cause %q", stored.BlockedCause)
		}
		got, err = svc.StartTask(ctx(), alice, task.TaskRef{TaskID: tk.ID})
		if err != nil || got.BlockedCause != "" || got.BlockedBy != "" {
			t.Fatalf("unblocked task keeps its cause: %v %+v", err, got)
		}
		other := taskIn(t, svc, vp.TaskTodo)
		got, err = svc.BlockTask(ctx(), alice, task.BlockTaskInput{TaskID: other.ID, Reason: "no cause given"})
		if err != nil || got.BlockedCause != "" || got.Status != vp.TaskBlocked {
			t.Fatalf("block without cause: %v %+v", err, got)
		}
	})
}

// TestStuckInProgress: the caller's in_progress tasks without an update
// for the threshold, oldest first; no one else's, no other status; at
// most MaxStuckListed, the rest flagged.
func TestStuckInProgress(t *testing.T) {
	eachBackendTasks(t, func(t *testing.T, svc *services, _ store.Store, clock *taskClock) {
		bob := as("acme", "bob")
		start := func(p vp.Principal, who, title string) vp.Task {
			tk := mustTask(t, svc, p, newTaskIn(title, who))
			if _, err := svc.StartTask(ctx(), p, task.TaskRef{TaskID: tk.ID}); err != nil {
				t.Fatal(err)
			}
			return tk
		}
		a := start(bob, "bob", "migrate the schema")
		b := start(bob, "bob", "write the release notes")
		start(as("acme", "carol"), "carol", "carol's own")
		idle := mustTask(t, svc, bob, newTaskIn("not started", "bob"))
		clock.Advance(3 * time.Hour)
		if _, err := svc.UpdateTask(ctx(), bob, task.UpdateTaskInput{TaskID: b.ID, Description: tkStr("half done")}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(2 * time.Hour)
		w, err := svc.StuckWork(ctx(), "acme", "bob", 4*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		if len(w.StuckInProgress) != 1 || w.StuckInProgress[0].TaskID != a.ID || w.StuckInProgress[0].IdleHours != 5 || w.Truncated {
			t.Fatalf("after 4 h: %+v, want only %s idle 5 h", w, a.ID)
		}
		w, _ = svc.StuckWork(ctx(), "acme", "bob", time.Hour)
		if got := stuckIDs(w.StuckInProgress); !slices.Equal(got, []string{a.ID, b.ID}) {
			t.Fatalf("after 1 h: %v, want [%s %s] (oldest first; not %s, todo)", got, a.ID, b.ID, idle.ID)
		}
		for range task.MaxStuckListed + 1 {
			start(bob, "bob", "more")
		}
		clock.Advance(5 * time.Hour)
		w, _ = svc.StuckWork(ctx(), "acme", "bob", 4*time.Hour)
		if len(w.StuckInProgress) != task.MaxStuckListed || !w.Truncated || w.StuckInProgress[0].TaskID != a.ID {
			t.Fatalf("%d stuck listed (truncated %v), want %d, oldest first", len(w.StuckInProgress), w.Truncated, task.MaxStuckListed)
		}
	})
}

func stuckIDs(ts []vp.StuckTask) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.TaskID)
	}
	return out
}

// countingStore counts the reads that reach the store.
type countingStore struct {
	store.Store
	gets, queries atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, k)
}

func (c *countingStore) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	c.queries.Add(1)
	return c.Store.Query(ctx, q)
}

// TestPeersStuckOnYou: others' open tasks that depend on the caller's
// open tasks — named at creation, by add_task_dependency or update_task —
// blocked ones first, each with the tasks it waits on; not the caller's
// own, not finished ones, not one that dropped the dependency; none once
// the caller's task is done. The answer is bounded, and so are its reads.
func TestPeersStuckOnYou(t *testing.T) {
	eachBackendTasks(t, func(t *testing.T, _ *services, st store.Store, clock *taskClock) {
		cs := &countingStore{Store: st}
		svc := newTaskService(t, cs, clock)
		alice, lead := as("acme", "alice"), as("acme", "lead")
		mine := mustTask(t, svc, alice, newTaskIn("the API", "alice"))
		other := mustTask(t, svc, alice, newTaskIn("unrelated", "alice"))
		dep := func(title, who string, deps ...string) vp.Task {
			in := newTaskIn(title, who)
			in.DependsOn = deps
			return mustTask(t, svc, lead, in)
		}
		bobs := dep("the client", "bob", mine.ID)
		carols := dep("the docs", "carol")
		if _, err := svc.AddTaskDependency(ctx(), lead, task.DependencyInput{TaskID: carols.ID, DependsOn: mine.ID}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.BlockTask(ctx(), lead, task.BlockTaskInput{TaskID: carols.ID, Reason: "needs alice's API", BlockedCause: "dependency"}); err != nil {
			t.Fatal(err)
		}
		eves := dep("the dashboard", "eve")
		if _, err := svc.UpdateTask(ctx(), lead, task.UpdateTaskInput{TaskID: eves.ID, DependsOn: []string{other.ID, mine.ID}}); err != nil {
			t.Fatal(err)
		}
		dropped := dep("dropped", "dan", mine.ID)
		if _, err := svc.UpdateTask(ctx(), lead, task.UpdateTaskInput{TaskID: dropped.ID, DependsOn: []string{bobs.ID}}); err != nil {
			t.Fatal(err)
		}
		cancelled := dep("cancelled", "fay", mine.ID)
		if _, err := svc.UpdateTask(ctx(), lead, task.UpdateTaskInput{TaskID: cancelled.ID, Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("cut")}); err != nil {
			t.Fatal(err)
		}
		dep("alice's own next step", "alice", mine.ID)
		if got, _ := svc.GetTask(ctx(), alice, task.TaskRef{TaskID: mine.ID}); got.UpdatedAt != mine.UpdatedAt || len(got.WaitedOnBy) != 6 {
			t.Fatalf("being waited on changed updatedAt (%d → %d) or waitedOnBy is %v", mine.UpdatedAt, got.UpdatedAt, got.WaitedOnBy)
		}

		w, err := svc.StuckWork(ctx(), "acme", "alice", 4*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		got := stuckIDs(w.PeersStuckOnYou)
		if len(got) != 3 || got[0] != carols.ID || !slices.Contains(got, bobs.ID) || !slices.Contains(got, eves.ID) {
			t.Fatalf("peersStuckOnYou %v, want carol's %s (blocked) first, then bob's %s and eve's %s", got, carols.ID, bobs.ID, eves.ID)
		}
		c := w.PeersStuckOnYou[0]
		if c.AssignedTo != "carol" || c.BlockedCause != "dependency" || c.BlockedBy != "needs alice's API" || !slices.Equal(c.WaitsOn, []string{mine.ID}) {
			t.Fatalf("carol's entry: %+v", c)
		}
		for _, e := range w.PeersStuckOnYou {
			want := []string{mine.ID}
			if e.TaskID == eves.ID {
				want = []string{mine.ID, other.ID}
				slices.Sort(want)
			}
			if slices.Sort(e.WaitsOn); !slices.Equal(e.WaitsOn, want) {
				t.Fatalf("%s waits on %v, want %v", e.TaskID, e.WaitsOn, want)
			}
		}
		// dan's task dropped alice's for bob's: it now waits on bob.
		if w, _ := svc.StuckWork(ctx(), "acme", "bob", 4*time.Hour); len(w.PeersStuckOnYou) != 1 || w.PeersStuckOnYou[0].TaskID != dropped.ID ||
			!slices.Equal(w.PeersStuckOnYou[0].WaitsOn, []string{bobs.ID}) {
			t.Fatalf("bob's peers: %+v, want dan's %s waiting on %s", w.PeersStuckOnYou, dropped.ID, bobs.ID)
		}

		// Bounded: 25 more dependents of a task of alice's.
		for i := range 25 {
			dep("waiter", "w"+string(rune('a'+i)), other.ID)
		}
		gets, queries := cs.gets.Load(), cs.queries.Load()
		w, _ = svc.StuckWork(ctx(), "acme", "alice", 4*time.Hour)
		gets, queries = cs.gets.Load()-gets, cs.queries.Load()-queries
		if len(w.PeersStuckOnYou) != task.MaxStuckListed || !w.Truncated {
			t.Fatalf("%d peers listed (truncated %v), want %d", len(w.PeersStuckOnYou), w.Truncated, task.MaxStuckListed)
		}
		if queries > 4 || gets > 2*task.MaxStuckListed {
			t.Fatalf("one StuckWork made %d queries and %d gets; want at most 4 and %d", queries, gets, 2*task.MaxStuckListed)
		}
		t.Logf("stuck work with 31 dependents: %d queries, %d gets", queries, gets)

		if _, err := svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: mine.ID, CompletionNote: "shipped"}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: other.ID, CompletionNote: "shipped"}); err != nil {
			t.Fatal(err)
		}
		if w, _ := svc.StuckWork(ctx(), "acme", "alice", 4*time.Hour); len(w.PeersStuckOnYou) != 0 {
			t.Fatalf("nothing waits on a done task: %+v", w.PeersStuckOnYou)
		}
	})
}

// BenchmarkStuckWork is what check_messages adds per call on SQLite: for
// an agent with no task, and for one with 20 open tasks, 5 of them
// waited on by another agent's task.
func BenchmarkStuckWork(b *testing.B) {
	for _, n := range []int{0, 20} {
		b.Run(fmt.Sprintf("own=%d", n), func(b *testing.B) {
			st := teststores.All[0].Open(b, nil)
			svc := newServices(b, st, domaintest.Signer(b), nil)
			alice := as("acme", "alice")
			for i := range n {
				tk, err := svc.CreateTask(ctx(), alice, newTaskIn(fmt.Sprint("own ", i), "alice"))
				if err != nil {
					b.Fatal(err)
				}
				if i%4 == 0 {
					in := newTaskIn("waits", "bob")
					in.DependsOn = []string{tk.ID}
					if _, err := svc.CreateTask(ctx(), alice, in); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ResetTimer()
			for range b.N {
				if _, err := svc.StuckWork(ctx(), "acme", "alice", 4*time.Hour); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
