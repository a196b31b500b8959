package task_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// taskClock is a settable clock for work-segment arithmetic.
type taskClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *taskClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *taskClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// eachBackendTasks runs fn per backend with a service on a settable clock
// and the raw store (for fault injection).
func eachBackendTasks(t *testing.T, fn func(t *testing.T, svc *services, st store.Store, clock *taskClock)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		clock := &taskClock{t: time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC)}
		st := b.Open(t, nil)
		fn(t, newTaskService(t, st, clock), st, clock)
	})
}

func newTaskService(t *testing.T, st store.Store, clock *taskClock) *services {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return newServices(t, st, signer, clock.Now)
}

func tkStr(s string) *string { return &s }

func newTaskIn(title, assignee string) task.CreateTaskInput {
	return task.CreateTaskInput{Title: title, AssignedTo: assignee, Priority: "medium"}
}

func mustTask(t *testing.T, svc *services, p vp.Principal, in task.CreateTaskInput) vp.Task {
	t.Helper()
	tk, err := svc.CreateTask(ctx(), p, in)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// taskIn creates a task of alice's (creator and assignee) in a state:
// one of the statuses, or "paused".
func taskIn(t *testing.T, svc *services, state string) vp.Task {
	t.Helper()
	alice := as("acme", "alice")
	tk := mustTask(t, svc, alice, newTaskIn("state "+state, "alice"))
	ref := task.TaskRef{TaskID: tk.ID}
	var err error
	step := func(f func() (vp.Task, error)) {
		if err == nil {
			tk, err = f()
		}
	}
	switch state {
	case vp.TaskTodo:
	case "paused":
		step(func() (vp.Task, error) { return svc.StartTask(ctx(), alice, ref) })
		step(func() (vp.Task, error) { return svc.PauseTask(ctx(), alice, ref) })
	case vp.TaskInProgress:
		step(func() (vp.Task, error) { return svc.StartTask(ctx(), alice, ref) })
	case vp.TaskReview:
		step(func() (vp.Task, error) { return svc.StartTask(ctx(), alice, ref) })
		step(func() (vp.Task, error) {
			return svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(vp.TaskReview)})
		})
	case vp.TaskBlocked:
		step(func() (vp.Task, error) {
			return svc.BlockTask(ctx(), alice, task.BlockTaskInput{TaskID: tk.ID, Reason: "waiting on bob since Monday"})
		})
	case vp.TaskDone:
		step(func() (vp.Task, error) {
			return svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: tk.ID, CompletionNote: "done: commit abc123"})
		})
	case vp.TaskCancelled:
		step(func() (vp.Task, error) {
			return svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("duplicate")})
		})
	case vp.TaskFailed:
		step(func() (vp.Task, error) {
			return svc.FailTask(ctx(), alice, task.FailTaskInput{TaskID: tk.ID, Reason: "the endpoint it needs was removed"})
		})
	default:
		t.Fatalf("unknown state %q", state)
	}
	if err != nil {
		t.Fatalf("reaching %s: %v", state, err)
	}
	want := state
	if state == "paused" {
		want = vp.TaskTodo
	}
	if tk.Status != want || tk.Paused != (state == "paused") {
		t.Fatalf("reaching %s: got %s paused=%v", state, tk.Status, tk.Paused)
	}
	return tk
}

var taskStates = []string{vp.TaskTodo, "paused", vp.TaskInProgress, vp.TaskReview, vp.TaskBlocked, vp.TaskDone, vp.TaskCancelled, vp.TaskFailed}

// TestTaskStatusTransitions tries update_task status=<to> from every state:
// exactly the moves of the lifecycle table are allowed, and a refusal
// names the current status and the allowed next ones.
func TestTaskStatusTransitions(t *testing.T) {
	table := task.Transitions()
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		for _, from := range taskStates {
			for _, to := range vp.TaskStatuses {
				base := from
				if from == "paused" {
					base = vp.TaskTodo
				}
				if to == base || to == vp.TaskFailed {
					continue // not a transition: update_task leaves the status alone; failed is fail_task's (TestFailTask)
				}
				allowed := slices.Contains(table[base], to) && !(from == "paused" && to == vp.TaskInProgress)
				t.Run(from+"->"+to, func(t *testing.T) {
					tk := taskIn(t, svc, from)
					in := task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(to)}
					switch to {
					case vp.TaskCancelled:
						in.CancelReason = tkStr("no longer needed")
					case vp.TaskDone:
						in.CompletionNote = tkStr("finished: PR #12 merged")
					}
					got, err := svc.UpdateTask(ctx(), alice, in)
					if !allowed {
						wantKind(t, err, vp.KindConflict, "status")
						if from == "paused" && to == vp.TaskInProgress {
							if vp.RemedyOf(err) != "task.resume" {
								t.Fatalf("paused → in_progress should point to resuming: %v", err)
							}
							return
						}
						if !strings.Contains(err.Error(), base) {
							t.Fatalf("refusal does not name the current status %s: %v", base, err)
						}
						for _, n := range table[base] {
							if !strings.Contains(err.Error(), n) {
								t.Fatalf("refusal does not name allowed next status %s: %v", n, err)
							}
						}
						after, _ := svc.GetTask(ctx(), alice, task.TaskRef{TaskID: tk.ID})
						if after.Status != base {
							t.Fatalf("a refused move changed the status to %s", after.Status)
						}
						return
					}
					if err != nil {
						t.Fatalf("allowed move refused: %v", err)
					}
					if got.Status != to || got.Paused {
						t.Fatalf("status %s paused=%v, want %s", got.Status, got.Paused, to)
					}
					open := got.OpenSegment() >= 0
					if open != (to == vp.TaskInProgress) {
						t.Fatalf("status %s with open segment = %v", to, open)
					}
				})
			}
		}
	})
}

// TestTaskVerbs tries every lifecycle verb from every state.
func TestTaskVerbs(t *testing.T) {
	ok := func(states ...string) map[string]bool {
		m := map[string]bool{}
		for _, s := range states {
			m[s] = true
		}
		return m
	}
	verbs := []struct {
		name    string
		allowed map[string]bool
		want    string // status after success
		run     func(svc *services, p vp.Principal, id string) (vp.Task, error)
	}{
		{"start_task", ok(vp.TaskTodo, vp.TaskReview, vp.TaskBlocked), vp.TaskInProgress, func(svc *services, p vp.Principal, id string) (vp.Task, error) {
			return svc.StartTask(ctx(), p, task.TaskRef{TaskID: id})
		}},
		{"pause_task", ok(vp.TaskInProgress), vp.TaskTodo, func(svc *services, p vp.Principal, id string) (vp.Task, error) {
			return svc.PauseTask(ctx(), p, task.TaskRef{TaskID: id})
		}},
		{"resume_task", ok("paused"), vp.TaskInProgress, func(svc *services, p vp.Principal, id string) (vp.Task, error) {
			return svc.ResumeTask(ctx(), p, task.TaskRef{TaskID: id})
		}},
		{"block_task", ok(vp.TaskTodo, "paused", vp.TaskInProgress, vp.TaskReview), vp.TaskBlocked, func(svc *services, p vp.Principal, id string) (vp.Task, error) {
			return svc.BlockTask(ctx(), p, task.BlockTaskInput{TaskID: id, Reason: "waiting on design review"})
		}},
		{"complete_task", ok(vp.TaskTodo, "paused", vp.TaskInProgress, vp.TaskReview), vp.TaskDone, func(svc *services, p vp.Principal, id string) (vp.Task, error) {
			return svc.CompleteTask(ctx(), p, task.CompleteTaskInput{TaskID: id, CompletionNote: "shipped in PR #7"})
		}},
		{"checkout_task", ok(vp.TaskTodo), vp.TaskInProgress, func(svc *services, p vp.Principal, id string) (vp.Task, error) {
			res, err := svc.CheckoutTask(ctx(), p, task.CheckoutInput{TaskID: id, CallerOrchestrator: "bob"})
			if err != nil {
				return vp.Task{}, err
			}
			if !res.Claimed {
				return vp.Task{}, vp.E("checkout_task", vp.KindConflict, "taskId", res.Reason)
			}
			return *res.Task, nil
		}},
	}
	eachBackend(t, func(t *testing.T, svc *services) {
		p := as("acme", "alice", "bob")
		for _, v := range verbs {
			for _, from := range taskStates {
				t.Run(v.name+"/"+from, func(t *testing.T) {
					tk := taskIn(t, svc, from)
					got, err := v.run(svc, p, tk.ID)
					if !v.allowed[from] {
						if vp.KindOf(err) != vp.KindConflict {
							t.Fatalf("%s from %s: got %v, want a conflict", v.name, from, err)
						}
						switch {
						case v.name == "start_task" && from == "paused":
							if vp.RemedyOf(err) != "task.resume" {
								t.Fatalf("start on a paused task should point to resuming: %v", err)
							}
						case v.name == "start_task" && from == vp.TaskInProgress:
							if !strings.Contains(err.Error(), "already in progress") {
								t.Fatalf("start with an open segment: %v", err)
							}
						case v.name == "checkout_task" && from == "paused":
							if !strings.Contains(err.Error(), "paused") {
								t.Fatalf("checkout of a paused task: %v", err)
							}
						}
						after, _ := svc.GetTask(ctx(), p, task.TaskRef{TaskID: tk.ID})
						if after.Status != tk.Status || after.Paused != tk.Paused {
							t.Fatalf("refused %s changed the task: %s → %s", v.name, tk.Status, after.Status)
						}
						return
					}
					if err != nil {
						t.Fatalf("%s from %s refused: %v", v.name, from, err)
					}
					if got.Status != v.want || got.Paused != (v.name == "pause_task") {
						t.Fatalf("%s from %s: status %s paused %v", v.name, from, got.Status, got.Paused)
					}
					if v.name == "checkout_task" && got.AssignedTo != "bob" {
						t.Fatalf("checkout did not hand the task to the caller: %s", got.AssignedTo)
					}
				})
			}
		}
	})
}

func TestTaskWorkSegments(t *testing.T) {
	eachBackendTasks(t, func(t *testing.T, svc *services, _ store.Store, clock *taskClock) {
		alice := as("acme", "alice")
		tk := mustTask(t, svc, alice, newTaskIn("Migrate HeroSection", "alice"))
		ref := task.TaskRef{TaskID: tk.ID}
		t0 := clock.Now().UnixMilli()
		if _, err := svc.StartTask(ctx(), alice, ref); err != nil {
			t.Fatal(err)
		}
		clock.Advance(30 * time.Minute)
		_, err := svc.StartTask(ctx(), alice, ref)
		wantKind(t, err, vp.KindConflict, "taskId")
		paused, err := svc.PauseTask(ctx(), alice, ref)
		if err != nil || !paused.Paused || paused.Status != vp.TaskTodo || paused.OpenSegment() != -1 {
			t.Fatalf("pause: %+v %v", paused, err)
		}
		clock.Advance(2 * time.Hour) // idle: never billed
		_, err = svc.StartTask(ctx(), alice, ref)
		if vp.KindOf(err) != vp.KindConflict || vp.RemedyOf(err) != "task.resume" {
			t.Fatalf("start on a paused task: %v", err)
		}
		res, err := svc.CheckoutTask(ctx(), as("acme", "bob"), task.CheckoutInput{TaskID: tk.ID})
		if err != nil || res.Claimed || !strings.Contains(res.Reason, "paused") {
			t.Fatalf("checkout of a paused task: %+v %v", res, err)
		}
		_, err = svc.ResumeTask(ctx(), as("acme", "bob"), ref)
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		resumed, err := svc.ResumeTask(ctx(), alice, ref)
		if err != nil || resumed.Status != vp.TaskInProgress || len(resumed.WorkSegments) != 2 || *resumed.StartedAt != t0 {
			t.Fatalf("resume: %+v %v", resumed, err)
		}
		_, err = svc.ResumeTask(ctx(), alice, ref)
		if vp.KindOf(err) != vp.KindConflict || !strings.Contains(err.Error(), "not paused") {
			t.Fatalf("resume of a running task: %v", err)
		}
		clock.Advance(15 * time.Minute)
		_, err = svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: tk.ID, CompletionNote: "  "})
		wantKind(t, err, vp.KindInvalid, "completionNote")
		done, err := svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: tk.ID, CompletionNote: "HeroSection migrated; tsc passes"})
		if err != nil {
			t.Fatal(err)
		}
		if done.ActualMinutes == nil || *done.ActualMinutes != 45 || done.ActualMinutesInferred || done.CompletedAt == nil || *done.CompletedAt != clock.Now().UnixMilli() {
			t.Fatalf("actualMinutes %v (inferred %v), completedAt %v; want 45 measured", done.ActualMinutes, done.ActualMinutesInferred, done.CompletedAt)
		}

		// A segment over 8 hours is refused and named; update_task records
		// the real time explicitly.
		long := mustTask(t, svc, alice, newTaskIn("left running", "alice"))
		if _, err := svc.StartTask(ctx(), alice, task.TaskRef{TaskID: long.ID}); err != nil {
			t.Fatal(err)
		}
		clock.Advance(9 * time.Hour)
		_, err = svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: long.ID, CompletionNote: "done"})
		wantKind(t, err, vp.KindConflict, "segment 1")
		mins := 90.0
		fixed, err := svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: long.ID, Status: tkStr(vp.TaskDone), ActualMinutes: &mins, CompletionNote: tkStr("done, 90 real minutes")})
		if err != nil || fixed.Status != vp.TaskDone || *fixed.ActualMinutes != 90 {
			t.Fatalf("explicit actualMinutes: %+v %v", fixed, err)
		}
	})
}

// TestCheckoutRace: 50 callers claim one task at once; exactly one wins.
func TestCheckoutRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		tk := mustTask(t, svc, as("acme", "pi"), newTaskIn("claim me", "pi"))
		const n = 50
		var wins atomic.Int32
		winner := make(chan string, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				who := fmt.Sprintf("agent%02d", i)
				<-start
				res, err := svc.CheckoutTask(context.Background(), as("acme", who), task.CheckoutInput{TaskID: tk.ID, CallerInstance: who + "-vps"})
				if err != nil {
					t.Errorf("%s: %v", who, err)
					return
				}
				if res.Claimed {
					wins.Add(1)
					winner <- who
				} else if res.Reason == "" {
					t.Errorf("%s: claimed:false without a reason", who)
				}
			}(i)
		}
		close(start)
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d callers claimed the task, want exactly 1", wins.Load())
		}
		w := <-winner
		got, _ := svc.GetTask(ctx(), admin("acme"), task.TaskRef{TaskID: tk.ID})
		if got.AssignedTo != w || got.AssignedToInstance != w+"-vps" || got.Status != vp.TaskInProgress || len(got.WorkSegments) != 1 {
			t.Fatalf("task after the race: %+v (winner %s)", got, w)
		}
	})
}

func TestTaskDependencies(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		a := mustTask(t, svc, alice, newTaskIn("migrate hero", "alice"))
		in := newTaskIn("migrate pricing", "alice")
		in.DependsOn = []string{a.ID}
		b := mustTask(t, svc, alice, in)
		_, err := svc.StartTask(ctx(), alice, task.TaskRef{TaskID: b.ID})
		wantKind(t, err, vp.KindConflict, "dependsOn")
		if !strings.Contains(err.Error(), a.ID) {
			t.Fatalf("refusal does not name the prerequisite: %v", err)
		}
		res, err := svc.CheckoutTask(ctx(), alice, task.CheckoutInput{TaskID: b.ID})
		if err != nil || res.Claimed || !strings.Contains(res.Reason, a.ID) {
			t.Fatalf("checkout with an open prerequisite: %+v %v", res, err)
		}
		_, err = svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: b.ID, CompletionNote: "x"})
		wantKind(t, err, vp.KindConflict, "dependsOn")
		c := mustTask(t, svc, alice, newTaskIn("migrate footer", "alice"))
		if _, err := svc.AddTaskDependency(ctx(), alice, task.DependencyInput{TaskID: c.ID, DependsOn: b.ID}); err != nil {
			t.Fatal(err)
		}
		// a ← b ← c: a depending on c closes a cycle.
		_, err = svc.AddTaskDependency(ctx(), alice, task.DependencyInput{TaskID: a.ID, DependsOn: c.ID})
		wantKind(t, err, vp.KindConflict, "cycle")
		_, err = svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: a.ID, DependsOn: []string{c.ID}})
		wantKind(t, err, vp.KindConflict, "cycle")
		_, err = svc.AddTaskDependency(ctx(), alice, task.DependencyInput{TaskID: a.ID, DependsOn: a.ID})
		wantKind(t, err, vp.KindInvalid, "dependsOn")
		_, err = svc.AddTaskDependency(ctx(), alice, task.DependencyInput{TaskID: a.ID, DependsOn: "tsk_nope"})
		wantKind(t, err, vp.KindNotFound, "dependsOn")
		bad := newTaskIn("x", "alice")
		bad.DependsOn = []string{"tsk_nope"}
		_, err = svc.CreateTask(ctx(), alice, bad)
		wantKind(t, err, vp.KindNotFound, "dependsOn")
		// Once a is done, b starts.
		if _, err := svc.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: a.ID, CompletionNote: "merged"}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.StartTask(ctx(), alice, task.TaskRef{TaskID: b.ID}); err != nil {
			t.Fatalf("start after the prerequisite is done: %v", err)
		}
		got, _ := svc.GetTask(ctx(), alice, task.TaskRef{TaskID: c.ID})
		if len(got.DependsOn) != 1 || got.DependsOn[0] != b.ID {
			t.Fatalf("dependsOn %v", got.DependsOn)
		}
	})
}

// TestDependencyCycleRace: two opposite edges added at once can never both
// commit (each checks the other's task version).
func TestDependencyCycleRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		for round := 0; round < 5; round++ {
			a := mustTask(t, svc, alice, newTaskIn("a", "alice"))
			b := mustTask(t, svc, alice, newTaskIn("b", "alice"))
			var wg sync.WaitGroup
			var okCount atomic.Int32
			for _, e := range [][2]string{{a.ID, b.ID}, {b.ID, a.ID}} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := svc.AddTaskDependency(context.Background(), alice, task.DependencyInput{TaskID: e[0], DependsOn: e[1]}); err == nil {
						okCount.Add(1)
					}
				}()
			}
			wg.Wait()
			if okCount.Load() != 1 {
				t.Fatalf("round %d: %d opposite edges committed, want 1", round, okCount.Load())
			}
		}
	})
}

func TestTaskRBACAndCancel(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice, bob, carol := as("acme", "alice"), as("acme", "bob"), as("acme", "carol")
		tk := mustTask(t, svc, alice, newTaskIn("write docs", "bob"))
		ref := task.TaskRef{TaskID: tk.ID}
		_, err := svc.StartTask(ctx(), carol, ref)
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		_, err = svc.UpdateTask(ctx(), carol, task.UpdateTaskInput{TaskID: tk.ID, Priority: tkStr("high")})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		_, err = svc.StartTask(ctx(), alice, task.TaskRef{TaskID: tk.ID, CallerOrchestrator: "bob"})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator") // impersonation
		if _, err := svc.StartTask(ctx(), bob, ref); err != nil {
			t.Fatalf("assignee start: %v", err)
		}
		// Cancel: creator only, with a reason.
		_, err = svc.UpdateTask(ctx(), bob, task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("meh")})
		wantKind(t, err, vp.KindForbidden, "creator")
		_, err = svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(vp.TaskCancelled)})
		wantKind(t, err, vp.KindInvalid, "cancelReason")
		_, err = svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tk.ID, CancelReason: tkStr("x")})
		wantKind(t, err, vp.KindInvalid, "cancelReason")
		got, err := svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: tk.ID, Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("superseded by #12")})
		if err != nil || got.Status != vp.TaskCancelled || got.CancelReason != "superseded by #12" || got.OpenSegment() != -1 {
			t.Fatalf("cancel: %+v %v", got, err)
		}
		done := taskIn(t, svc, vp.TaskDone)
		_, err = svc.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: done.ID, Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("oops")})
		wantKind(t, err, vp.KindConflict, "done")
		// system (admin only) bypasses.
		sys := admin("acme")
		if _, err := svc.UpdateTask(ctx(), sys, task.UpdateTaskInput{TaskID: done.ID, CallerOrchestrator: "system", Tags: []string{"audited"}}); err != nil {
			t.Fatalf("system update: %v", err)
		}
		// Delete: creator or system.
		_, err = svc.DeleteTask(ctx(), bob, ref)
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		if d, err := svc.DeleteTask(ctx(), alice, ref); err != nil || !d.Deleted {
			t.Fatalf("delete: %+v %v", d, err)
		}
		_, err = svc.GetTask(ctx(), alice, ref)
		wantKind(t, err, vp.KindNotFound, "taskId")
		// Another tenant sees nothing.
		_, err = svc.GetTask(ctx(), admin("other"), task.TaskRef{TaskID: done.ID})
		wantKind(t, err, vp.KindNotFound, "taskId")
	})
}
