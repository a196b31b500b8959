package task_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/listing/listingtest"
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
	return newServices(st, signer, clock.Now)
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

var taskStates = []string{vp.TaskTodo, "paused", vp.TaskInProgress, vp.TaskReview, vp.TaskBlocked, vp.TaskDone, vp.TaskCancelled}

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
				if to == base {
					continue // not a transition: update_task leaves the status alone
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

func TestCreateTaskValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		cases := []struct {
			name  string
			edit  func(in *task.CreateTaskInput)
			kind  vp.Kind
			field string
		}{
			{"no title", func(in *task.CreateTaskInput) { in.Title = " " }, vp.KindInvalid, "title"},
			{"long title", func(in *task.CreateTaskInput) { in.Title = strings.Repeat("x", vp.MaxTaskTitleBytes+1) }, vp.KindTooLarge, "title"},
			{"no assignee", func(in *task.CreateTaskInput) { in.AssignedTo = "" }, vp.KindInvalid, "assignedTo"},
			{"numeric priority", func(in *task.CreateTaskInput) { in.Priority = "1" }, vp.KindInvalid, "urgent, high, medium, low"},
			{"created done", func(in *task.CreateTaskInput) { in.Status = "done" }, vp.KindInvalid, "status"},
			{"negative estimate", func(in *task.CreateTaskInput) { e := -1.0; in.EstimatedMinutes = &e }, vp.KindInvalid, "estimatedMinutes"},
			{"too many tags", func(in *task.CreateTaskInput) { in.Tags = make([]string, 33) }, vp.KindTooLarge, "tags"},
			{"impersonation", func(in *task.CreateTaskInput) { in.CreatedBy = "bob" }, vp.KindForbidden, "createdBy"},
			{"unknown mission", func(in *task.CreateTaskInput) { in.MissionID = "msn_nope" }, vp.KindNotFound, "missionId"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				in := newTaskIn("valid", "bob")
				c.edit(&in)
				_, err := svc.CreateTask(ctx(), alice, in)
				wantKind(t, err, c.kind, c.field)
			})
		}
		page, _ := svc.ListTasks(ctx(), alice, task.ListTasksInput{})
		if len(page.Items) != 0 {
			t.Fatalf("refused creates stored %d tasks", len(page.Items))
		}
		got := mustTask(t, svc, alice, task.CreateTaskInput{Title: "ok", AssignedTo: "Bob", Priority: "high", Status: "in_progress"})
		if got.AssignedTo != "bob" || got.CreatedBy != "alice" || got.Status != vp.TaskInProgress || got.StartedAt == nil || got.OpenSegment() != 0 {
			t.Fatalf("created %+v", got)
		}
		_, err := svc.CreateTask(ctx(), admin("acme"), newTaskIn("x", "bob"))
		wantKind(t, err, vp.KindInvalid, "createdBy") // a wildcard token must name its identity
	})
}

// seedTasks creates n tasks spread over assignees, statuses, creators and
// projects; it returns them by id.
func seedTasks(t *testing.T, svc *services, n int) map[string]vp.Task {
	t.Helper()
	out := map[string]vp.Task{}
	for i := 0; i < n; i++ {
		creator := []string{"alice", "cron-daily"}[i%2]
		assignee := []string{"bob", "carol", "dave"}[i%3]
		p := as("acme", creator, assignee)
		in := newTaskIn(fmt.Sprintf("task %02d", i), assignee)
		if i%4 == 0 {
			in.Project = "studio/ws1"
		}
		if i%9 == 0 {
			in.Title = "/check-messages"
		}
		tk := mustTask(t, svc, p, in)
		ref := task.TaskRef{TaskID: tk.ID, CallerOrchestrator: assignee}
		var err error
		switch i % 5 {
		case 1:
			tk, err = svc.StartTask(ctx(), p, ref)
		case 2:
			tk, err = svc.CompleteTask(ctx(), p, task.CompleteTaskInput{TaskID: tk.ID, CallerOrchestrator: assignee, CompletionNote: "done"})
		case 3:
			tk, err = svc.BlockTask(ctx(), p, task.BlockTaskInput{TaskID: tk.ID, CallerOrchestrator: assignee, Reason: "waiting"})
		case 4:
			if i%10 == 4 {
				tk, err = svc.UpdateTask(ctx(), p, task.UpdateTaskInput{TaskID: tk.ID, CallerOrchestrator: creator, Status: tkStr(vp.TaskCancelled), CancelReason: tkStr("dup")})
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		out[tk.ID] = tk
	}
	return out
}

func TestListTasksContract(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		const n = 45
		seeded := seedTasks(t, svc, n)
		root := admin("acme")
		limit := 20
		drain := func(in task.ListTasksInput) []vp.Task {
			t.Helper()
			pages := 0
			rows := pageAll(t, func(cursor string) (listing.Page[any], error) {
				pages++
				in.Params = listing.Params{Limit: &limit, Cursor: cursor}
				return svc.ListTasks(ctx(), root, in)
			})
			seen := map[string]bool{}
			out := make([]vp.Task, len(rows))
			for i, r := range rows {
				out[i] = r.(vp.Task)
				if seen[out[i].ID] {
					t.Fatalf("task %s listed twice", out[i].ID)
				}
				seen[out[i].ID] = true
			}
			if !sort.SliceIsSorted(out, func(i, j int) bool { return out[i].UpdatedAt > out[j].UpdatedAt }) {
				t.Fatalf("not newest-updated first")
			}
			return out
		}
		count := func(f func(vp.Task) bool) int {
			c := 0
			for _, tk := range seeded {
				if f(tk) {
					c++
				}
			}
			return c
		}
		all := drain(task.ListTasksInput{})
		if len(all) != n {
			t.Fatalf("paged %d tasks, want %d", len(all), n)
		}
		open := []string{vp.TaskTodo, vp.TaskInProgress, vp.TaskReview, vp.TaskBlocked}
		cases := []struct {
			name string
			in   task.ListTasksInput
			want func(vp.Task) bool
		}{
			{"assignee×status", task.ListTasksInput{AssignedTo: "Bob", Status: "todo"}, func(x vp.Task) bool { return x.AssignedTo == "bob" && x.Status == "todo" }},
			{"assignee open", task.ListTasksInput{AssignedTo: "carol", Status: "open"}, func(x vp.Task) bool { return x.AssignedTo == "carol" && slices.Contains(open, x.Status) }},
			{"assignee all", task.ListTasksInput{AssignedTo: "dave"}, func(x vp.Task) bool { return x.AssignedTo == "dave" }},
			{"active alias", task.ListTasksInput{Status: "active"}, func(x vp.Task) bool { return x.Status == "todo" || x.Status == "in_progress" }},
			{"status array", task.ListTasksInput{Status: []any{"done", "cancelled"}}, func(x vp.Task) bool { return x.Status == "done" || x.Status == "cancelled" }},
			{"all alias", task.ListTasksInput{Status: "all"}, func(vp.Task) bool { return true }},
			{"project", task.ListTasksInput{Project: "studio/ws1"}, func(x vp.Task) bool { return x.Project == "studio/ws1" }},
			{"creator open", task.ListTasksInput{CreatedBy: "alice", Status: "open"}, func(x vp.Task) bool { return x.CreatedBy == "alice" && slices.Contains(open, x.Status) }},
			{"exclude auto-generated", task.ListTasksInput{ExcludeAutoGenerated: true}, func(x vp.Task) bool {
				return !strings.HasPrefix(x.CreatedBy, "cron-") && x.Title != "/check-messages"
			}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				got := drain(c.in)
				if want := count(c.want); len(got) != want || want == 0 {
					t.Fatalf("%d rows, want %d", len(got), want)
				}
				for _, x := range got {
					if !c.want(x) {
						t.Fatalf("row does not match the filter: %+v", x)
					}
				}
			})
		}
		since := all[9].UpdatedAt
		recent := drain(task.ListTasksInput{UpdatedSince: &since})
		if want := count(func(x vp.Task) bool { return x.UpdatedAt >= since }); len(recent) != want {
			t.Fatalf("updatedSince: %d rows, want %d", len(recent), want)
		}
		// Lite rows carry exactly the documented keys.
		lite, err := svc.ListTasks(ctx(), root, task.ListTasksInput{Params: listing.Params{Fields: "lite"}})
		if err != nil || len(lite.Items) != 20 {
			t.Fatalf("lite: %d rows %v", len(lite.Items), err)
		}
		for _, r := range lite.Items {
			for k := range r.(map[string]json.RawMessage) {
				if !slices.Contains([]string{"_id", "_creationTime", "title", "status", "priority", "assignedTo", "missionId"}, k) {
					t.Fatalf("lite row carries %q", k)
				}
			}
		}
		// Cursors are bound to their filters and tenant; tampering is refused.
		first, _ := svc.ListTasks(ctx(), root, task.ListTasksInput{Status: "open"})
		_, err = svc.ListTasks(ctx(), root, task.ListTasksInput{Status: "active", Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListTasks(ctx(), admin("other"), task.ListTasksInput{Status: "open", Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListTasks(ctx(), root, task.ListTasksInput{Params: listing.Params{Cursor: listingtest.Tamper(first.NextCursor)}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListTasks(ctx(), root, task.ListTasksInput{Status: "opened"})
		wantKind(t, err, vp.KindInvalid, "status")
		_, err = svc.ListTasks(ctx(), root, task.ListTasksInput{Status: 3.0})
		wantKind(t, err, vp.KindInvalid, "status")
		// Tenants do not see each other's tasks.
		other, _ := svc.ListTasks(ctx(), admin("other"), task.ListTasksInput{})
		if len(other.Items) != 0 {
			t.Fatalf("another tenant lists %d tasks", len(other.Items))
		}
	})
}

func TestListTasksLimitClamp(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		for i := 0; i < 205; i++ {
			mustTask(t, svc, alice, newTaskIn(fmt.Sprint("t", i), "bob"))
		}
		big := 500
		page, err := svc.ListTasks(ctx(), alice, task.ListTasksInput{Params: listing.Params{Limit: &big}})
		if err != nil || len(page.Items) != 200 || page.NextCursor == "" {
			t.Fatalf("limit 500: %d rows, cursor %q, %v", len(page.Items), page.NextCursor, err)
		}
		page, err = svc.ListTasks(ctx(), alice, task.ListTasksInput{AssignedTo: "bob", Status: "open", Params: listing.Params{Limit: &big}})
		if err != nil || len(page.Items) != 200 || page.NextCursor == "" {
			t.Fatalf("merged partitions, limit 500: %d rows, %v", len(page.Items), err)
		}
		rest, err := svc.ListTasks(ctx(), alice, task.ListTasksInput{AssignedTo: "bob", Status: "open", Params: listing.Params{Limit: &big, Cursor: page.NextCursor}})
		if err != nil || len(rest.Items) != 5 || rest.NextCursor != "" {
			t.Fatalf("second page: %d rows, cursor %q, %v", len(rest.Items), rest.NextCursor, err)
		}
	})
}

func bulkIn(f task.BulkFilter, dry bool, caller string) task.BulkCompleteInput {
	return task.BulkCompleteInput{Filter: f, DryRun: &dry, CallerOrchestrator: caller}
}

func statusOf(t *testing.T, svc *services, id string) vp.Task {
	t.Helper()
	tk, err := svc.GetTask(ctx(), admin("acme"), task.TaskRef{TaskID: id})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func TestBulkCompleteTasks(t *testing.T) {
	eachBackendTasks(t, func(t *testing.T, svc *services, _ store.Store, _ *taskClock) { // 2026-07-01: project day 118
		cron := as("acme", "cron-daily")
		alice := as("acme", "alice")
		var piSpam, tauSpam, normal []string
		for i := 0; i < 12; i++ {
			piSpam = append(piSpam, mustTask(t, svc, cron, newTaskIn(fmt.Sprint("poll ", i), "pi")).ID)
		}
		for i := 0; i < 3; i++ {
			piSpam = append(piSpam, mustTask(t, svc, alice, newTaskIn("/check-messages", "pi")).ID)
		}
		for i := 0; i < 2; i++ {
			tauSpam = append(tauSpam, mustTask(t, svc, cron, newTaskIn(fmt.Sprint("tau poll ", i), "tau")).ID)
		}
		for i := 0; i < 4; i++ {
			normal = append(normal, mustTask(t, svc, alice, newTaskIn(fmt.Sprint("real work ", i), "pi")).ID)
		}
		closedAlready := mustTask(t, svc, cron, newTaskIn("old poll", "pi"))
		if _, err := svc.CompleteTask(ctx(), as("acme", "pi"), task.CompleteTaskInput{TaskID: closedAlready.ID, CompletionNote: "x"}); err != nil {
			t.Fatal(err)
		}
		pi := as("acme", "pi")
		auto := task.BulkFilter{AutoGeneratedOnly: true}

		_, err := svc.BulkCompleteTasks(ctx(), pi, task.BulkCompleteInput{})
		wantKind(t, err, vp.KindInvalid, "BULK_FILTER_TOO_BROAD")
		_, err = svc.BulkCompleteTasks(ctx(), admin("acme"), bulkIn(auto, false, ""))
		wantKind(t, err, vp.KindInvalid, "BULK_CALLER_REQUIRED")
		_, err = svc.BulkCompleteTasks(ctx(), pi, bulkIn(auto, false, "tau"))
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")

		// Dry run is the default and changes nothing.
		prev, err := svc.BulkCompleteTasks(ctx(), pi, task.BulkCompleteInput{Filter: auto})
		if err != nil {
			t.Fatal(err)
		}
		if !prev.DryRun || prev.Count != 15 || prev.Failed != 2 || len(prev.SampleIDs) != 10 || len(prev.Report) != 17 || !strings.HasPrefix(prev.BulkRunID, "bulk-") || prev.ExecutedAt != nil {
			t.Fatalf("preview: dry %v count %d failed %d samples %d report %d run %s", prev.DryRun, prev.Count, prev.Failed, len(prev.SampleIDs), len(prev.Report), prev.BulkRunID)
		}
		for _, e := range prev.Report {
			if slices.Contains(tauSpam, e.TaskID) == e.OK || (!e.OK && !strings.Contains(e.Reason, "RBAC_DENIED")) {
				t.Fatalf("report line %+v", e)
			}
		}
		// Live as pi: two matched tasks are not pi's, so nothing closes.
		_, err = svc.BulkCompleteTasks(ctx(), pi, bulkIn(auto, false, ""))
		wantKind(t, err, vp.KindForbidden, "RBAC_DENIED")
		for _, id := range append(append([]string{}, piSpam...), tauSpam...) {
			if st := statusOf(t, svc, id).Status; st != vp.TaskTodo {
				t.Fatalf("a refused run closed %s (%s)", id, st)
			}
		}
		// AND-combined with assignedTo, pi's own run goes through.
		res, err := svc.BulkCompleteTasks(ctx(), pi, bulkIn(task.BulkFilter{AutoGeneratedOnly: true, AssignedTo: "pi"}, false, ""))
		if err != nil || res.Count != 15 || res.Failed != 0 || res.ExecutedAt == nil {
			t.Fatalf("live run: %+v %v", res, err)
		}
		for _, id := range piSpam {
			tk := statusOf(t, svc, id)
			if tk.Status != vp.TaskDone || !strings.Contains(tk.CompletionNote, "runId="+res.BulkRunID) || !strings.Contains(tk.CompletionNote, "day 118") || tk.CompletedAt == nil {
				t.Fatalf("closed task %+v", tk)
			}
		}
		for _, id := range append(append([]string{}, normal...), tauSpam...) {
			if st := statusOf(t, svc, id).Status; st != vp.TaskTodo {
				t.Fatalf("the run closed %s outside its filter", id)
			}
		}
		// system closes anyone's; explicit ids are all-or-nothing too.
		sys := admin("acme")
		_, err = svc.BulkCompleteTasks(ctx(), sys, bulkIn(task.BulkFilter{TaskIDs: []string{tauSpam[0], closedAlready.ID}}, false, "system"))
		wantKind(t, err, vp.KindConflict, "nothing was closed")
		if st := statusOf(t, svc, tauSpam[0]).Status; st != vp.TaskTodo {
			t.Fatalf("partial close: %s", st)
		}
		res, err = svc.BulkCompleteTasks(ctx(), sys, bulkIn(task.BulkFilter{TaskIDs: tauSpam}, false, "system"))
		if err != nil || res.Count != 2 {
			t.Fatalf("system run: %+v %v", res, err)
		}
		// A prerequisite in the same run does not hold its dependent back.
		a := mustTask(t, svc, alice, newTaskIn("a", "pi"))
		bIn := newTaskIn("b", "pi")
		bIn.DependsOn = []string{a.ID}
		b := mustTask(t, svc, alice, bIn)
		_, err = svc.BulkCompleteTasks(ctx(), alice, bulkIn(task.BulkFilter{TaskIDs: []string{b.ID}}, false, ""))
		wantKind(t, err, vp.KindConflict, "waits on")
		if res, err := svc.BulkCompleteTasks(ctx(), alice, bulkIn(task.BulkFilter{TaskIDs: []string{b.ID, a.ID}}, false, "")); err != nil || res.Count != 2 {
			t.Fatalf("run with the prerequisite: %+v %v", res, err)
		}
		again, _ := svc.BulkCompleteTasks(ctx(), pi, task.BulkCompleteInput{Filter: auto})
		if again.Count != 0 || len(again.Report) != 0 {
			t.Fatalf("after the runs, %d auto tasks still match", again.Count)
		}
	})
}

func TestBulkCompleteCap(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		cron := as("acme", "cron-hourly")
		for i := 0; i < task.BulkHardCap+1; i++ {
			mustTask(t, svc, cron, newTaskIn(fmt.Sprint("poll ", i), "pi"))
		}
		sys := admin("acme")
		auto := task.BulkFilter{AutoGeneratedOnly: true}
		prev, err := svc.BulkCompleteTasks(ctx(), sys, bulkIn(auto, true, "system"))
		if err != nil || prev.Count != task.BulkHardCap || prev.CappedAt == nil || *prev.CappedAt != task.BulkHardCap {
			t.Fatalf("capped preview: count %d capped %v %v", prev.Count, prev.CappedAt, err)
		}
		_, err = svc.BulkCompleteTasks(ctx(), sys, bulkIn(auto, false, "system"))
		wantKind(t, err, vp.KindTooLarge, "BULK_HARD_CAP_EXCEEDED")
		ids := make([]string, task.BulkHardCap+1)
		for i := range ids {
			ids[i] = fmt.Sprintf("tsk_%d", i)
		}
		_, err = svc.BulkCompleteTasks(ctx(), sys, bulkIn(task.BulkFilter{TaskIDs: ids}, true, "system"))
		wantKind(t, err, vp.KindTooLarge, "BULK_HARD_CAP_EXCEEDED")
		// Close one, then the remaining 500 go in one live run (5 transactions).
		first := prev.SampleIDs[0]
		if _, err := svc.CompleteTask(ctx(), as("acme", "pi"), task.CompleteTaskInput{TaskID: first, CompletionNote: "by hand"}); err != nil {
			t.Fatal(err)
		}
		res, err := svc.BulkCompleteTasks(ctx(), sys, bulkIn(auto, false, "system"))
		if err != nil || res.Count != task.BulkHardCap || res.CappedAt != nil {
			t.Fatalf("500-task run: count %d %v", res.Count, err)
		}
		left, _ := svc.ListTasks(ctx(), sys, task.ListTasksInput{Status: "open"})
		if len(left.Items) != 0 {
			t.Fatalf("%d tasks left open", len(left.Items))
		}
	})
}

// TestBulkCompleteAllOrNothing: when a later transaction of a large run
// fails, the tasks earlier transactions closed are reopened; a run of at
// most 100 is one transaction.
func TestBulkCompleteAllOrNothing(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		poisoned := func(ops []store.Op) bool {
			for _, op := range ops {
				if strings.Contains(string(op.Item.Data), "poison-task") && strings.Contains(string(op.Item.Data), "runId=") {
					return true
				}
			}
			return false
		}
		raw := b.Open(t, nil)
		svc := newService(t, faultStore{Store: raw, poison: poisoned})
		alice := as("acme", "alice")
		for _, n := range []int{150, 40} {
			var ids []string
			for i := 0; i < n-1; i++ {
				ids = append(ids, mustTask(t, svc, alice, newTaskIn(fmt.Sprint("chore ", i), "alice")).ID)
			}
			ids = append(ids, mustTask(t, svc, alice, newTaskIn("poison-task", "alice")).ID)
			res, err := svc.BulkCompleteTasks(ctx(), alice, bulkIn(task.BulkFilter{TaskIDs: ids}, true, ""))
			if err != nil || res.Count != n {
				t.Fatalf("preview of %d: %+v %v", n, res.Count, err)
			}
			_, err = svc.BulkCompleteTasks(ctx(), alice, bulkIn(task.BulkFilter{TaskIDs: ids}, false, ""))
			wantKind(t, err, vp.KindConflict, "nothing was closed")
			for _, id := range ids {
				tk := statusOf(t, svc, id)
				if tk.Status != vp.TaskTodo || tk.CompletionNote != "" || tk.CompletedAt != nil {
					t.Fatalf("run of %d left %s %s (note %q)", n, id, tk.Status, tk.CompletionNote)
				}
			}
			// The first 100 of the large run were closed, then reopened
			// (versions 1 → 2 → 3); the small run never wrote.
			it, err := raw.Get(ctx(), store.Key{PK: "T#acme#TASK#" + ids[0], SK: "TASK"})
			if want := map[int]int64{150: 3, 40: 1}[n]; err != nil || it.Version != want {
				t.Fatalf("run of %d: first task at version %d (%v), want %d", n, it.Version, err, want)
			}
			// Without the poison, the same ids close.
			res, err = svc.BulkCompleteTasks(ctx(), alice, bulkIn(task.BulkFilter{TaskIDs: ids[:n-1]}, false, ""))
			if err != nil || res.Count != n-1 {
				t.Fatalf("clean run of %d: %d %v", n-1, res.Count, err)
			}
		}
	})
}

func TestValidateTaskPayload(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice := as("acme", "alice")
		check := func(tool string, args map[string]any) task.PayloadReport {
			t.Helper()
			rep, err := svc.ValidateTaskPayload(ctx(), alice, task.PayloadInput{Tool: tool, Arguments: args})
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		fields := func(rep task.PayloadReport) []string {
			var out []string
			for _, f := range rep.Failures {
				out = append(out, f.Field)
			}
			sort.Strings(out)
			return out
		}
		cases := []struct {
			tool   string
			args   map[string]any
			fields []string
		}{
			{"create_task", map[string]any{"title": "Fix login", "assignedTo": "bob", "priority": "high"}, nil},
			{"create_task", map[string]any{"title": "", "assignedTo": "bob", "priority": 1, "colour": "red"}, []string{"colour", "priority", "title"}},
			{"create_task", map[string]any{"title": "x", "assignedTo": "a#b", "priority": "p1", "status": "done", "createdBy": "bob"}, []string{"assignedTo", "createdBy", "priority", "status"}},
			{"update_task", map[string]any{"taskId": "tsk_1"}, []string{"taskId"}},
			{"update_task", map[string]any{"taskId": "tsk_1", "status": "cancelled"}, []string{"cancelReason"}},
			{"update_task", map[string]any{"taskId": "tsk_1", "status": "finished", "estimatedMinutes": -5}, []string{"estimatedMinutes", "status"}},
			{"complete_task", map[string]any{"taskId": "tsk_1", "completionNote": " "}, []string{"completionNote"}},
			{"start_task", map[string]any{}, []string{"taskId"}},
			{"block_task", map[string]any{"taskId": "tsk_1"}, []string{"reason"}},
			{"checkout_task", map[string]any{"taskId": "tsk_1", "callerOrchestrator": "bob"}, []string{"callerOrchestrator"}},
			{"add_task_dependency", map[string]any{"taskId": "tsk_1", "dependsOn": []any{"tsk_2"}}, []string{"dependsOn"}},
			{"bulk_complete_tasks", map[string]any{"filter": map[string]any{}}, []string{"filter"}},
			{"bulk_complete_tasks", map[string]any{"filter": map[string]any{"assignedTo": "a,b"}, "dryRun": "no"}, []string{"dryRun", "filter.assignedTo"}},
		}
		for _, c := range cases {
			t.Run(c.tool, func(t *testing.T) {
				rep := check(c.tool, c.args)
				if got := fields(rep); !slices.Equal(got, c.fields) || rep.Valid != (len(c.fields) == 0) {
					t.Fatalf("failures on %v, want %v: %+v", got, c.fields, rep.Failures)
				}
				for _, f := range rep.Failures {
					if f.Message == "" || (f.Fix == nil && f.Field != "colour") {
						t.Fatalf("failure without message or fix: %+v", f)
					}
				}
				if !rep.Valid {
					again := check(c.tool, rep.Corrected)
					if !again.Valid {
						t.Fatalf("the corrected payload %v still fails: %+v", rep.Corrected, again.Failures)
					}
				}
			})
		}
		// The write paths refuse with the same messages (one rule set).
		rep := check("create_task", map[string]any{"title": "x", "assignedTo": "bob", "priority": "p1"})
		_, err := svc.CreateTask(ctx(), alice, task.CreateTaskInput{Title: "x", AssignedTo: "bob", Priority: "p1"})
		if err == nil || !strings.HasSuffix(err.Error(), rep.Failures[0].Message) {
			t.Fatalf("write path says %v, validator %q", err, rep.Failures[0].Message)
		}
		rep = check("bulk_complete_tasks", map[string]any{"filter": map[string]any{}})
		_, err = svc.BulkCompleteTasks(ctx(), alice, task.BulkCompleteInput{})
		if err == nil || !strings.HasSuffix(err.Error(), rep.Failures[0].Message) {
			t.Fatalf("write path says %v, validator %q", err, rep.Failures[0].Message)
		}
		_, err = svc.ValidateTaskPayload(ctx(), alice, task.PayloadInput{Tool: "create_mission"})
		wantKind(t, err, vp.KindInvalid, "tool")
		if page, _ := svc.ListTasks(ctx(), alice, task.ListTasksInput{}); len(page.Items) != 0 {
			t.Fatalf("validation wrote %d tasks", len(page.Items))
		}
	})
}
