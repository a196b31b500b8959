package task

import (
	"context"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type UpdateTaskInput struct {
	TaskID             string   `json:"taskId"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty"`
	Title              *string  `json:"title,omitempty"`
	Description        *string  `json:"description,omitempty"`
	Project            *string  `json:"project,omitempty"`
	Tags               []string `json:"tags,omitempty"`
	AssignedTo         *string  `json:"assignedTo,omitempty"`
	AssignedToInstance *string  `json:"assignedToInstance,omitempty"`
	Priority           *string  `json:"priority,omitempty"`
	Status             *string  `json:"status,omitempty" jsonschema:"todo|in_progress|review|blocked|done|cancelled (failed: use fail_task)"`
	CancelReason       *string  `json:"cancelReason,omitempty" jsonschema:"required with status cancelled"`
	MissionID          *string  `json:"missionId,omitempty" jsonschema:"\"\" leaves the mission"`
	EstimatedMinutes   *float64 `json:"estimatedMinutes,omitempty"`
	ActualMinutes      *float64 `json:"actualMinutes,omitempty"`
	StartedAt          *int64   `json:"startedAt,omitempty"`
	CompletedAt        *int64   `json:"completedAt,omitempty"`
	DueDate            *int64   `json:"dueDate,omitempty"`
	DependsOn          []string `json:"dependsOn,omitempty" jsonschema:"replaces the list"`
	CompletionNote     *string  `json:"completionNote,omitempty"`
}

// UpdateLimits bound update_task's arguments: a task's fields, shared with
// create_task, and those only an update sets.
type UpdateLimits struct {
	FieldLimits
	CancelReason, CompletionNote, ActualMinutes vp.Limit
}

// Limits are update_task's limits.
func (UpdateTaskInput) Limits() UpdateLimits {
	return UpdateLimits{
		FieldLimits:    fieldLimits(),
		CancelReason:   vp.MaxBytes("cancelReason", vp.MaxReasonBytes),
		CompletionNote: vp.MaxBytes("completionNote", vp.MaxCompletionNoteBytes),
		ActualMinutes:  vp.Between("actualMinutes", 0, vp.MaxMinutes),
	}
}

func (in UpdateTaskInput) check(op string, p vp.Principal) vp.Errs {
	lim := in.Limits()
	errs := TaskRef{in.TaskID, in.CallerOrchestrator}.check(op, p)
	str := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	if in.Title != nil {
		errs.Add(lim.Title.Text(op, *in.Title, true))
	}
	errs.Add(lim.Description.Text(op, str(in.Description), false))
	errs.Add(lim.Project.Text(op, str(in.Project), false))
	errs.Add(lim.Tags.Tags(op, in.Tags))
	if in.AssignedTo != nil {
		errs.Add(vp.CheckName(op, "assignedTo", *in.AssignedTo, true))
	}
	errs.Add(vp.CheckName(op, "assignedToInstance", str(in.AssignedToInstance), false))
	if in.Priority != nil {
		errs.Add(vp.CheckPriority(op, *in.Priority, true))
	}
	if in.Status != nil {
		errs.Add(vp.CheckEnum(op, "status", *in.Status, vp.TaskStatuses, true))
		if *in.Status == vp.TaskFailed {
			// A failure carries its reason and is the assignee's call:
			// one verb says so, as complete_task does for done.
			errs.Add(vp.E(op, vp.KindInvalid, "status", "\"failed\" is set by fail_task {\"taskId\",\"reason\"}, which records why"))
		}
	}
	cancelling := in.Status != nil && *in.Status == vp.TaskCancelled
	switch {
	case cancelling:
		errs.Add(lim.CancelReason.Text(op, str(in.CancelReason), true))
	case in.CancelReason != nil:
		errs.Add(vp.E(op, vp.KindInvalid, "cancelReason", "goes with status \"cancelled\": pass both to cancel the task"))
	}
	errs.Add(vp.CheckName(op, "missionId", str(in.MissionID), false))
	errs.Add(lim.EstimatedMinutes.Minutes(op, in.EstimatedMinutes))
	errs.Add(lim.ActualMinutes.Minutes(op, in.ActualMinutes))
	errs.Add(vp.CheckMillis(op, "startedAt", in.StartedAt))
	errs.Add(vp.CheckMillis(op, "completedAt", in.CompletedAt))
	errs.Add(vp.CheckMillis(op, "dueDate", in.DueDate))
	errs.Add(lim.DependsOn.IDs(op, in.DependsOn))
	if slices.Contains(in.DependsOn, in.TaskID) {
		errs.Add(vp.Errorf(op, vp.KindInvalid, "dependsOn", "task %s cannot depend on itself", in.TaskID))
	}
	if in.CompletionNote != nil {
		errs.Add(lim.CompletionNote.Text(op, *in.CompletionNote, false))
	}
	if in.Title == nil && in.Description == nil && in.Project == nil && in.Tags == nil && in.AssignedTo == nil &&
		in.AssignedToInstance == nil && in.Priority == nil && in.Status == nil && in.MissionID == nil &&
		in.EstimatedMinutes == nil && in.ActualMinutes == nil && in.StartedAt == nil && in.CompletedAt == nil &&
		in.DueDate == nil && in.DependsOn == nil && in.CompletionNote == nil {
		errs.Add(vp.E(op, vp.KindInvalid, "taskId", "nothing to update: pass at least one field to change, e.g. {\"taskId\":\"tsk_...\",\"status\":\"review\"}"))
	}
	return errs
}

// UpdateTask applies a partial update. A status change follows the same
// lifecycle as the verbs (done needs a completion note, in_progress and
// done need the prerequisites done); cancelling needs the creator and a
// reason; moving to another mission moves the mission link in the same
// transaction.
func (s *Service) UpdateTask(ctx context.Context, p vp.Principal, in UpdateTaskInput) (vp.Task, error) {
	const op = "update_task"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Task{}, err
	}
	if err := in.check(op, p).First(); err != nil {
		return vp.Task{}, err
	}
	caller, _ := p.ActAs(op, "callerOrchestrator", in.CallerOrchestrator)
	t, _, err := s.changeTask(ctx, op, tenant, in.TaskID, func(t *vp.Task, now int64) ([]store.Op, error) {
		if err := authorize(op, "update", *t, caller); err != nil {
			return nil, err
		}
		var ops []store.Op
		setStr := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		setStr(&t.Title, in.Title)
		setStr(&t.Description, in.Description)
		setStr(&t.Project, in.Project)
		if in.Tags != nil {
			t.Tags = in.Tags
		}
		if in.AssignedTo != nil {
			t.AssignedTo = vp.NormalizeOrchestrator(*in.AssignedTo)
		}
		setStr(&t.AssignedToInstance, in.AssignedToInstance)
		setStr(&t.Priority, in.Priority)
		if in.EstimatedMinutes != nil {
			t.EstimatedMinutes = in.EstimatedMinutes
		}
		if in.DueDate != nil {
			t.DueDate = in.DueDate
		}
		if in.StartedAt != nil {
			t.StartedAt = in.StartedAt
		}
		setStr(&t.CompletionNote, in.CompletionNote)
		if in.DependsOn != nil {
			deps := vp.Dedupe(in.DependsOn)
			checks, err := s.dependencyChecks(ctx, op, tenant, t.ID, deps)
			if err != nil {
				return nil, err
			}
			t.DependsOn = deps
			ops = append(ops, checks...)
		}
		if in.MissionID != nil && *in.MissionID != t.MissionID {
			if t.MissionID != "" {
				ops = append(ops, s.missions.LeaveOps(tenant, t.MissionID, t.ID)...)
			}
			if *in.MissionID != "" {
				mops, err := s.missions.JoinOps(ctx, op, tenant, *in.MissionID, t.ID)
				if err != nil {
					return nil, err
				}
				ops = append(ops, mops...)
			}
			t.MissionID = *in.MissionID
		}
		if in.Status != nil && *in.Status != t.Status {
			to := *in.Status
			if to == vp.TaskCancelled && caller != vp.SystemCaller && caller != t.CreatedBy {
				return nil, vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the task's creator (%s) or system may cancel task %s; %s may not", t.CreatedBy, t.ID, caller)
			}
			if !slices.Contains(lifecycle[t.Status], to) {
				return nil, refused(op, "status", *t, to)
			}
			if t.Paused && to == vp.TaskInProgress {
				return nil, vp.Errorf(op, vp.KindConflict, "status", "task %s is paused", t.ID).WithRemedy("task.resume")
			}
			if to == vp.TaskDone && strings.TrimSpace(t.CompletionNote) == "" {
				return nil, vp.E(op, vp.KindInvalid, "completionNote", "is required to mark a task done: say what was done and the proof (commit, PR, test run)")
			}
			if to == vp.TaskInProgress || to == vp.TaskDone {
				if err := s.checkDeps(ctx, op, tenant, *t); err != nil {
					return nil, err
				}
			}
			if err := moveTask(op, t, to, now, in.ActualMinutes != nil); err != nil {
				return nil, err
			}
			if to == vp.TaskCancelled {
				t.CancelReason = *in.CancelReason
			}
		}
		if in.ActualMinutes != nil {
			t.ActualMinutes, t.ActualMinutesInferred = in.ActualMinutes, false
		}
		if in.CompletedAt != nil {
			t.CompletedAt = in.CompletedAt
		}
		return ops, nil
	})
	return t, err
}

// DeleteResultTask reports delete_task.
type DeleteResultTask struct {
	Deleted bool `json:"deleted"`
}

// DeleteTask permanently deletes a task and its mission link (creator or
// system only). Cancelling keeps the history and is usually better.
func (s *Service) DeleteTask(ctx context.Context, p vp.Principal, ref TaskRef) (DeleteResultTask, error) {
	const op = "delete_task"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return DeleteResultTask{}, err
	}
	if err := ref.check(op, p).First(); err != nil {
		return DeleteResultTask{}, err
	}
	caller, _ := p.ActAs(op, "callerOrchestrator", ref.CallerOrchestrator)
	var ix search.Pending
	var evs []outbox.Pending
	err = table.Conflicts{Op: op, Exhausted: func() error {
		return vp.Errorf(op, vp.KindConflict, "taskId", "task %s kept changing under this call; retry", ref.TaskID)
	}}.Retry(ctx, func() error {
		t, it, err := s.get(ctx, op, tenant, "taskId", ref.TaskID)
		if err != nil {
			return err
		}
		if caller != vp.SystemCaller && caller != t.CreatedBy {
			return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the task's creator (%s) or system may delete task %s; %s may not", t.CreatedBy, t.ID, caller).WithRemedy("task.cancel")
		}
		ops := []store.Op{store.Delete(it.Key, store.IfVersion(it.Version))}
		if t.MissionID != "" {
			ops = append(ops, s.missions.LeaveOps(tenant, t.MissionID, t.ID)...)
		}
		if ix, err = s.indexing(ctx, tenant, t.ID); err != nil {
			return err
		}
		if evs, err = s.publish(ctx, op, s.finishedEvents(tenant, &t, nil), true); err != nil {
			return err
		}
		ops = append(ops, ix.Ops()...)
		for _, e := range evs {
			ops = append(ops, e.Ops()...)
		}
		return s.st.Write(ctx, ops...)
	})
	if err != nil {
		return DeleteResultTask{}, err
	}
	s.after(ctx, op, tenant, ix, evs)
	return DeleteResultTask{Deleted: true}, nil
}
