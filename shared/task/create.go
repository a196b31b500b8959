package task

import (
	"context"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// create_task and get_task.

// CreateTaskInput is create_task's arguments.
type CreateTaskInput struct {
	Title              string   `json:"title" jsonschema:"#N or owner/repo#N links that issue of the project's mapped repo on completion"`
	Description        string   `json:"description,omitempty"`
	Project            string   `json:"project,omitempty"`
	Tags               []string `json:"tags,omitempty"`
	AssignedTo         string   `json:"assignedTo"`
	AssignedToInstance string   `json:"assignedToInstance,omitempty"`
	Priority           string   `json:"priority" jsonschema:"urgent|high|medium|low"`
	Status             string   `json:"status,omitempty" jsonschema:"todo (default)|in_progress"`
	DependsOn          []string `json:"dependsOn,omitempty"`
	MissionID          string   `json:"missionId,omitempty"`
	EstimatedMinutes   *float64 `json:"estimatedMinutes,omitempty"`
	DueDate            *int64   `json:"dueDate,omitempty" jsonschema:"Unix ms"`
	CreatedBy          string   `json:"createdBy,omitempty"`
}

func (in CreateTaskInput) task() vp.Task {
	return vp.Task{
		Title: in.Title, Description: in.Description, Project: in.Project, Tags: in.Tags,
		AssignedTo: in.AssignedTo, AssignedToInstance: in.AssignedToInstance, Priority: in.Priority,
		DependsOn: in.DependsOn, MissionID: in.MissionID, EstimatedMinutes: in.EstimatedMinutes, DueDate: in.DueDate,
		CreatedBy: in.CreatedBy,
	}
}

func (in CreateTaskInput) check(op string, p vp.Principal) vp.Errs {
	t := in.task()
	if t.CreatedBy == "" {
		t.CreatedBy = "x" // identity is checked below, with its own message
	}
	errs := checkFields(op, t)
	errs.Add(vp.CheckEnum(op, "status", in.Status, []string{vp.TaskTodo, vp.TaskInProgress}, false))
	if vp.CheckName(op, "createdBy", in.CreatedBy, false) == nil {
		_, err := p.ActAs(op, "createdBy", in.CreatedBy)
		errs.Add(err)
	}
	return errs
}

// CreateTask creates a task, with its mission link when it names a mission,
// in one transaction that also checks that its prerequisites exist.
func (s *Service) CreateTask(ctx context.Context, p vp.Principal, in CreateTaskInput) (vp.Task, error) {
	const op = "create_task"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Task{}, err
	}
	if err := in.check(op, p).First(); err != nil {
		return vp.Task{}, err
	}
	creator, _ := p.ActAs(op, "createdBy", in.CreatedBy)
	draft := in.task()
	draft.CreatedBy = creator
	var t vp.Task
	var ix search.Pending
	err = table.Conflicts{Op: op, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "dependsOn", "its prerequisites or mission kept changing; retry")
	}}.Retry(ctx, func() error {
		now := s.nowMS()
		var it store.Item
		var err error
		t, it, err = s.Build(op, tenant, draft, now)
		if err != nil {
			return err
		}
		draft.ID = t.ID // keep the id across retries
		ops := []store.Op{}
		deps, err := s.readTasks(ctx, op, tenant, "dependsOn", t.DependsOn)
		if err != nil {
			return err
		}
		for _, d := range deps {
			w, err := waitOp(op, tenant, t.ID, d.task, d.version)
			if err != nil {
				return err
			}
			ops = append(ops, w)
		}
		if in.Status == vp.TaskInProgress {
			if err := depsDone(op, t, deps); err != nil {
				return err
			}
			if err := moveTask(op, &t, vp.TaskInProgress, now, false); err != nil {
				return err
			}
			if it, err = Table.Item(op, tenant, t); err != nil {
				return err
			}
		}
		if t.MissionID != "" {
			mops, err := s.missions.JoinOps(ctx, op, tenant, t.MissionID, t.ID)
			if err != nil {
				return err
			}
			ops = append(ops, mops...)
		}
		if ix, err = s.indexing(ctx, tenant, t.ID); err != nil {
			return err
		}
		ops = append(append([]store.Op{store.Put(it, store.IfNotExists)}, ops...), ix.Ops()...)
		// A lost write means a prerequisite or the mission changed
		// meanwhile: check again.
		return s.st.Write(ctx, ops...)
	})
	if err != nil {
		return vp.Task{}, err
	}
	s.after(ctx, op, tenant, ix, nil, t)
	return t, nil
}

// GetTask returns one task of the tenant.
func (s *Service) GetTask(ctx context.Context, p vp.Principal, in TaskRef) (vp.Task, error) {
	const op = "get_task"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Task{}, err
	}
	if err := vp.CheckName(op, "taskId", in.TaskID, true); err != nil {
		return vp.Task{}, err
	}
	t, _, err := s.get(ctx, op, tenant, "taskId", in.TaskID)
	return t, err
}

type versionedTask struct {
	task    vp.Task
	version int64
}

// readTasks reads tasks by id (primary-key reads); a missing one is a
// NotFound naming field.
func (s *Service) readTasks(ctx context.Context, op, tenant, field string, ids []string) ([]versionedTask, error) {
	out := make([]versionedTask, 0, len(ids))
	for _, id := range ids {
		t, it, err := s.get(ctx, op, tenant, field, id)
		if vp.IsKind(err, vp.KindNotFound) {
			return nil, vp.Errorf(op, vp.KindNotFound, field, "no task %q in this tenant", id)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, versionedTask{t, it.Version})
	}
	return out, nil
}
