package task

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TaskRef names a task and the caller acting on it.
type TaskRef struct {
	TaskID             string `json:"taskId"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

func (in TaskRef) check(op string, p vp.Principal) vp.Errs {
	var errs vp.Errs
	errs.Add(vp.CheckName(op, "taskId", in.TaskID, true))
	errs.Add(checkCaller(op, p, in.CallerOrchestrator))
	return errs
}

func checkCaller(op string, p vp.Principal, caller string) error {
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return err
	}
	_, err := p.ActAs(op, "callerOrchestrator", caller)
	return err
}

// verb runs a lifecycle verb: it refuses the payload's failures (checked
// by the caller with the same function validate_task_payload uses),
// resolves the caller, then changes the task.
func (s *Service) verb(ctx context.Context, op string, p vp.Principal, ref TaskRef, failures vp.Errs, change func(t *vp.Task, caller string, now int64) error) (vp.Task, error) {
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Task{}, err
	}
	if err := failures.First(); err != nil {
		return vp.Task{}, err
	}
	caller, _ := p.ActAs(op, "callerOrchestrator", ref.CallerOrchestrator)
	t, _, err := s.changeTask(ctx, op, tenant, ref.TaskID, func(t *vp.Task, now int64) ([]store.Op, error) {
		return nil, change(t, caller, now)
	})
	return t, err
}

// StartTask moves a todo, blocked or review task to in_progress and opens a
// work segment. It refuses a task already in progress (a segment is open)
// and a paused one (resume_task restarts those).
func (s *Service) StartTask(ctx context.Context, p vp.Principal, ref TaskRef) (vp.Task, error) {
	const op = "start_task"
	return s.verb(ctx, op, p, ref, ref.check(op, p), func(t *vp.Task, caller string, now int64) error {
		if err := authorize(op, "start", *t, caller); err != nil {
			return err
		}
		if i := t.OpenSegment(); t.Status == vp.TaskInProgress && i >= 0 {
			return vp.Errorf(op, vp.KindConflict, "taskId", "task %s is already in progress: its work segment has been open since %s.",
				t.ID, time.UnixMilli(t.WorkSegments[i].Start).UTC().Format(time.RFC3339)).WithRemedy("task.pause_or_complete")
		}
		if t.Paused {
			return vp.Errorf(op, vp.KindConflict, "taskId", "task %s is paused", t.ID).WithRemedy("task.resume")
		}
		if !slices.Contains(lifecycle[t.Status], vp.TaskInProgress) {
			return refused(op, "taskId", *t, vp.TaskInProgress)
		}
		if err := s.checkDeps(ctx, op, p.Tenant, *t); err != nil {
			return err
		}
		return moveTask(op, t, vp.TaskInProgress, now, false)
	})
}

// PauseTask closes the open work segment of an in_progress task and puts it
// back to todo, marked paused: only resume_task restarts it, and
// checkout_task refuses it meanwhile.
func (s *Service) PauseTask(ctx context.Context, p vp.Principal, ref TaskRef) (vp.Task, error) {
	const op = "pause_task"
	return s.verb(ctx, op, p, ref, ref.check(op, p), func(t *vp.Task, caller string, now int64) error {
		if err := authorize(op, "pause", *t, caller); err != nil {
			return err
		}
		if t.Status != vp.TaskInProgress {
			return vp.Errorf(op, vp.KindConflict, "taskId", "task %s is %s: only an in_progress task (with an open work segment) can be paused", t.ID, describeStatus(*t))
		}
		if err := moveTask(op, t, vp.TaskTodo, now, false); err != nil {
			return err
		}
		t.Paused = true
		return nil
	})
}

// ResumeTask reopens a paused task: in_progress again, with a new segment.
// Only its owner (the assignee) or system may.
func (s *Service) ResumeTask(ctx context.Context, p vp.Principal, ref TaskRef) (vp.Task, error) {
	const op = "resume_task"
	return s.verb(ctx, op, p, ref, ref.check(op, p), func(t *vp.Task, caller string, now int64) error {
		if caller != vp.SystemCaller && caller != t.AssignedTo {
			return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the owner of paused task %s (%s) or system may resume it; %s may not", t.ID, t.AssignedTo, caller)
		}
		if !t.Paused {
			return vp.Errorf(op, vp.KindConflict, "taskId", "task %s is not paused (it is %s)", t.ID, t.Status).WithRemedy("task.start")
		}
		if err := s.checkDeps(ctx, op, p.Tenant, *t); err != nil {
			return err
		}
		t.Paused = false
		return moveTask(op, t, vp.TaskInProgress, now, false)
	})
}

func describeStatus(t vp.Task) string {
	if t.Paused {
		return "todo (paused)"
	}
	return t.Status
}

// BlockTaskInput is block_task's arguments.
type BlockTaskInput struct {
	TaskID             string `json:"taskId"`
	Reason             string `json:"reason" jsonschema:"who or what you wait on, since when"`
	BlockedCause       string `json:"blockedCause,omitempty" jsonschema:"dependency|review|question|external|other"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

// BlockLimits bound block_task's arguments.
type BlockLimits struct{ Reason, BlockedCause vp.Limit }

// Limits are block_task's limits: blockedCause is one of vp.BlockedCauses,
// none longer than a name.
func (BlockTaskInput) Limits() BlockLimits {
	return BlockLimits{Reason: vp.MaxBytes("reason", vp.MaxReasonBytes), BlockedCause: vp.MaxBytes("blockedCause", vp.MaxNameBytes)}
}

func (in BlockTaskInput) check(op string, p vp.Principal) vp.Errs {
	errs := TaskRef{in.TaskID, in.CallerOrchestrator}.check(op, p)
	errs.Add(in.Limits().Reason.Text(op, in.Reason, true))
	errs.Add(vp.CheckEnum(op, "blockedCause", in.BlockedCause, vp.BlockedCauses, false))
	return errs
}

// BlockTask sets a task blocked with a reason (stored as blockedBy) and
// an optional kind of wait (blockedCause), closing its work segment.
func (s *Service) BlockTask(ctx context.Context, p vp.Principal, in BlockTaskInput) (vp.Task, error) {
	const op = "block_task"
	return s.verb(ctx, op, p, TaskRef{in.TaskID, in.CallerOrchestrator}, in.check(op, p), func(t *vp.Task, caller string, now int64) error {
		if err := authorize(op, "block", *t, caller); err != nil {
			return err
		}
		if err := moveTask(op, t, vp.TaskBlocked, now, false); err != nil {
			return err
		}
		t.BlockedBy, t.BlockedCause = in.Reason, in.BlockedCause
		return nil
	})
}

// FailTaskInput is fail_task's arguments.
type FailTaskInput struct {
	TaskID             string `json:"taskId"`
	Reason             string `json:"reason" jsonschema:"why the task cannot be done, and what was tried"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

// Limits are fail_task's limits.
func (FailTaskInput) Limits() vp.Limit { return vp.MaxBytes("reason", vp.MaxReasonBytes) }

func (in FailTaskInput) check(op string, p vp.Principal) vp.Errs {
	errs := TaskRef{in.TaskID, in.CallerOrchestrator}.check(op, p)
	errs.Add(in.Limits().Text(op, in.Reason, true))
	return errs
}

// FailTask ends a task that cannot be done: failed, final, with its
// reason (failReason), from any open status (todo, paused, in_progress,
// review, blocked); its creator, its assignee or system may. It closes
// the work segment and settles the minutes spent. Its mission hears of
// it (TopicFinished with NewStatus failed) and does not complete by
// itself while it holds a failed task.
func (s *Service) FailTask(ctx context.Context, p vp.Principal, in FailTaskInput) (vp.Task, error) {
	const op = "fail_task"
	return s.verb(ctx, op, p, TaskRef{in.TaskID, in.CallerOrchestrator}, in.check(op, p), func(t *vp.Task, caller string, now int64) error {
		if err := authorize(op, "fail", *t, caller); err != nil {
			return err
		}
		if err := moveTask(op, t, vp.TaskFailed, now, false); err != nil {
			return err
		}
		t.FailReason = in.Reason
		return nil
	})
}

// CompleteTaskInput is complete_task's arguments.
type CompleteTaskInput struct {
	TaskID             string `json:"taskId"`
	CompletionNote     string `json:"completionNote" jsonschema:"what was done, with proof (commit, PR, test run)"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

// Limits are complete_task's limits: update_task's completionNote.
func (CompleteTaskInput) Limits() vp.Limit { return UpdateTaskInput{}.Limits().CompletionNote }

func (in CompleteTaskInput) check(op string, p vp.Principal) vp.Errs {
	errs := TaskRef{in.TaskID, in.CallerOrchestrator}.check(op, p)
	errs.Add(in.Limits().Text(op, in.CompletionNote, true))
	return errs
}

// CompleteTask marks a task done with its completion note, settles
// actualMinutes from the work segments, and completes the mission when
// this was its last open task.
func (s *Service) CompleteTask(ctx context.Context, p vp.Principal, in CompleteTaskInput) (vp.Task, error) {
	const op = "complete_task"
	return s.verb(ctx, op, p, TaskRef{in.TaskID, in.CallerOrchestrator}, in.check(op, p), func(t *vp.Task, caller string, now int64) error {
		if err := authorize(op, "complete", *t, caller); err != nil {
			return err
		}
		if !slices.Contains(lifecycle[t.Status], vp.TaskDone) {
			return refused(op, "taskId", *t, vp.TaskDone)
		}
		if err := s.checkDeps(ctx, op, p.Tenant, *t); err != nil {
			return err
		}
		if err := moveTask(op, t, vp.TaskDone, now, false); err != nil {
			return err
		}
		t.CompletionNote = in.CompletionNote
		return nil
	})
}

// CheckoutInput is checkout_task's arguments.
type CheckoutInput struct {
	TaskID             string `json:"taskId"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
	CallerInstance     string `json:"callerInstance,omitempty"`
}

func (in CheckoutInput) check(op string, p vp.Principal) vp.Errs {
	errs := TaskRef{in.TaskID, in.CallerOrchestrator}.check(op, p)
	errs.Add(vp.CheckName(op, "callerInstance", in.CallerInstance, false))
	return errs
}

// CheckoutResult is checkout_task's answer: claimed, or why not.
type CheckoutResult struct {
	Claimed bool     `json:"claimed"`
	Reason  string   `json:"reason,omitempty"`
	Task    *vp.Task `json:"task,omitempty"`
}

// CheckoutTask atomically claims a todo task: one conditional write
// (IfVersion on the task as read) moves it to in_progress, owned by the
// caller. Under any number of concurrent callers exactly one wins; the
// others get claimed:false with the reason.
func (s *Service) CheckoutTask(ctx context.Context, p vp.Principal, in CheckoutInput) (CheckoutResult, error) {
	const op = "checkout_task"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return CheckoutResult{}, err
	}
	if err := in.check(op, p).First(); err != nil {
		return CheckoutResult{}, err
	}
	caller, _ := p.ActAs(op, "callerOrchestrator", in.CallerOrchestrator)
	var res CheckoutResult
	err = table.Conflicts{Op: op, Exhausted: func() error {
		res = CheckoutResult{Reason: "the task kept changing under this call; read it again"}
		return nil
	}}.Retry(ctx, func() error {
		old, it, err := s.get(ctx, op, tenant, "taskId", in.TaskID)
		if err != nil {
			return err
		}
		switch {
		case old.Paused:
			res = CheckoutResult{Reason: fmt.Sprintf("task is paused by its owner %s, who resumes it with resume_task", old.AssignedTo)}
			return nil
		case old.Status != vp.TaskTodo:
			res = CheckoutResult{Reason: fmt.Sprintf("task is %s (assigned to %s); only todo tasks can be checked out", old.Status, old.AssignedTo)}
			return nil
		}
		if err := s.checkDeps(ctx, op, tenant, old); err != nil {
			if vp.IsKind(err, vp.KindConflict) {
				var e *vp.Error
				errors.As(err, &e)
				res = CheckoutResult{Reason: e.Msg}
				return nil
			}
			return err
		}
		t := cloneTask(old)
		now := s.nowMS()
		if err := moveTask(op, &t, vp.TaskInProgress, now, false); err != nil {
			return err
		}
		t.AssignedTo, t.AssignedToInstance = caller, in.CallerInstance
		t.UpdatedAt = max(now, old.UpdatedAt)
		item, err := Table.Item(op, tenant, t)
		if err != nil {
			return err
		}
		// A claim publishes no event (the task stays open): its cost is
		// the index job, one op here and its removal after.
		ix, err := s.indexing(ctx, tenant, t.ID)
		if err != nil {
			return err
		}
		// A lost write: someone else wrote first; read again and report.
		if err := s.st.Write(ctx, append([]store.Op{store.Put(item, store.IfVersion(it.Version))}, ix.Ops()...)...); err != nil {
			return err
		}
		s.after(ctx, op, tenant, ix, nil, t)
		res = CheckoutResult{Claimed: true, Task: &t}
		return nil
	})
	if err != nil {
		return CheckoutResult{}, err
	}
	return res, nil
}
