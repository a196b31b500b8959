package task

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The task lifecycle: transitions, work segments, prerequisites, and the
// read-modify-write every change of a task goes through.

// refused reports a transition the lifecycle does not allow, naming the
// current status and the allowed next ones.
func refused(op, field string, t vp.Task, to string) error {
	next := lifecycle[t.Status]
	cur := t.Status
	if t.Paused {
		cur = "todo (paused)"
	}
	if len(next) == 0 {
		return vp.Errorf(op, vp.KindConflict, field, "task %s is %s, which is final: it cannot become %s", t.ID, cur, to)
	}
	return vp.Errorf(op, vp.KindConflict, field, "task %s is %s and cannot become %s; from %s it can become %s", t.ID, cur, to, t.Status, strings.Join(next, ", "))
}

// moveTask moves t to status to, enforcing the lifecycle and keeping the
// work segments: a segment is open exactly while the task is in_progress.
// Entering done settles actualMinutes unless keepMinutes (the caller sets
// them explicitly).
func moveTask(op string, t *vp.Task, to string, now int64, keepMinutes bool) error {
	if !slices.Contains(lifecycle[t.Status], to) {
		return refused(op, "status", *t, to)
	}
	if t.Paused && to == vp.TaskInProgress {
		return vp.Errorf(op, vp.KindConflict, "taskId", "task %s is paused: its owner (%s) restarts it", t.ID, t.AssignedTo).WithRemedy("task.resume_by_owner")
	}
	if to == vp.TaskInProgress && len(t.WorkSegments) >= vp.MaxWorkSegments {
		return vp.Errorf(op, vp.KindTooLarge, "taskId", "task %s already has %d work segments, the limit; complete it or split the remaining work into a new task", t.ID, vp.MaxWorkSegments)
	}
	if i := t.OpenSegment(); i >= 0 {
		end := now
		t.WorkSegments[i].End = &end
	}
	t.Paused = false
	t.BlockedBy, t.BlockedCause = "", ""
	switch to {
	case vp.TaskInProgress:
		t.WorkSegments = append(t.WorkSegments, vp.WorkSegment{Start: now})
		if t.StartedAt == nil {
			t.StartedAt = &now
		}
	case vp.TaskDone:
		t.CompletedAt = &now
		if !keepMinutes {
			if err := settleMinutes(op, t, now); err != nil {
				return err
			}
		}
	case vp.TaskFailed:
		t.FailedAt = &now
		// The time spent is worth keeping, but a failing task is often
		// one whose clock ran through a break: settle what can be
		// settled rather than refuse to let the task go.
		_ = settleMinutes(op, t, now)
	}
	t.Status = to
	return nil
}

// settleMinutes sets actualMinutes to the sum of the work segments, refusing
// a segment longer than MaxWorkSegment. A task with no segments but a
// startedAt keeps startedAt→now, flagged inferred.
func settleMinutes(op string, t *vp.Task, now int64) error {
	if len(t.WorkSegments) == 0 {
		if t.StartedAt != nil && *t.StartedAt <= now {
			m := roundMinutes(now - *t.StartedAt)
			t.ActualMinutes, t.ActualMinutesInferred = &m, true
		}
		return nil
	}
	var total int64
	for i, sg := range t.WorkSegments {
		end := now
		if sg.End != nil {
			end = *sg.End
		}
		d := end - sg.Start
		if time.Duration(d)*time.Millisecond > MaxWorkSegment {
			return vp.Errorf(op, vp.KindConflict, "taskId",
				"work segment %d of task %s (started %s) lasted %s, longer than the %s maximum: the clock ran through a break that was never recorded. "+
					"Record the real time with update_task {\"taskId\":%q,\"status\":\"done\",\"actualMinutes\":<minutes>,\"completionNote\":\"...\"}, and use pause_task when you step away",
				i+1, t.ID, time.UnixMilli(sg.Start).UTC().Format(time.RFC3339), (time.Duration(d) * time.Millisecond).Round(time.Minute), MaxWorkSegment, t.ID)
		}
		total += d
	}
	m := roundMinutes(total)
	t.ActualMinutes, t.ActualMinutesInferred = &m, false
	return nil
}

func roundMinutes(ms int64) float64 { return math.Round(float64(ms)/600) / 100 }

// depsDone refuses to start or finish t while a prerequisite is not done.
func depsDone(op string, t vp.Task, deps []versionedTask) error {
	var waiting []string
	for _, d := range deps {
		if d.task.Status != vp.TaskDone {
			waiting = append(waiting, fmt.Sprintf("%s (%q, %s)", d.task.ID, d.task.Title, d.task.Status))
		}
	}
	if len(waiting) == 0 {
		return nil
	}
	return vp.Errorf(op, vp.KindConflict, "dependsOn", "task %s waits on %s: finish %s first (or drop it with update_task dependsOn)",
		t.ID, strings.Join(waiting, ", "), map[bool]string{true: "it", false: "them"}[len(waiting) == 1])
}

// checkDeps reads t's prerequisites and refuses when one is not done.
func (s *Service) checkDeps(ctx context.Context, op, tenant string, t vp.Task) error {
	deps, err := s.readTasks(ctx, op, tenant, "dependsOn", t.DependsOn)
	if vp.IsKind(err, vp.KindNotFound) {
		return vp.Errorf(op, vp.KindConflict, "dependsOn", "task %s depends on a task that no longer exists (%v); drop it with update_task dependsOn", t.ID, err)
	}
	if err != nil {
		return err
	}
	return depsDone(op, t, deps)
}

// authorize applies the task RBAC rule: the creator, the assignee or system.
func authorize(op, verb string, t vp.Task, caller string) error {
	if caller == vp.SystemCaller || caller == t.CreatedBy || caller == t.AssignedTo {
		return nil
	}
	return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the task's creator (%s), its assignee (%s) or system may %s task %s; %s may not", t.CreatedBy, t.AssignedTo, verb, t.ID, caller)
}

// changeTask is the read-modify-write every change of an existing task goes
// through: it reads the task, lets change modify it and add operations that
// must commit with it, and writes it under IfVersion, starting over from
// the read when another writer got there first. It returns the new and the
// previous task.
func (s *Service) changeTask(ctx context.Context, op, tenant, id string, change func(t *vp.Task, now int64) ([]store.Op, error)) (vp.Task, vp.Task, error) {
	if err := vp.CheckName(op, "taskId", id, true); err != nil {
		return vp.Task{}, vp.Task{}, err
	}
	var old, t vp.Task
	var ix search.Pending
	var evs []outbox.Pending
	err := table.Retry(ctx, op, "taskId", "task "+id, func() error {
		var it store.Item
		var err error
		if old, it, err = s.get(ctx, op, tenant, "taskId", id); err != nil {
			return err
		}
		t = cloneTask(old)
		now := s.nowMS()
		extra, err := change(&t, now)
		if err != nil {
			return err
		}
		t.UpdatedAt = max(now, old.UpdatedAt)
		item, err := Table.Item(op, tenant, t)
		if err != nil {
			return err
		}
		ops := append([]store.Op{store.Put(item, store.IfVersion(it.Version))}, extra...)
		// A change that leaves the document as it was (a heartbeat of
		// minutes, a note) has nothing to index.
		ix = search.Pending{}
		if Doc(tenant, old) != Doc(tenant, t) {
			if ix, err = s.indexing(ctx, tenant, t.ID); err != nil {
				return err
			}
			ops = append(ops, ix.Ops()...)
		}
		if evs, err = s.publish(ctx, op, s.finishedEvents(tenant, &old, &t), true); err != nil {
			return err
		}
		for _, e := range evs {
			ops = append(ops, e.Ops()...)
		}
		return s.st.Write(ctx, ops...)
	})
	if err != nil {
		return vp.Task{}, vp.Task{}, err
	}
	s.after(ctx, op, tenant, ix, evs, t)
	return t, old, nil
}
