package mission

import (
	"context"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The membership of tasks: Service implements task.Missions.
var _ task.Missions = (*Service)(nil)

// JoinOps returns the operations that add task taskID to mission missionID
// inside the task's transaction: the link row, and a rewrite of the
// mission item on the version read. The rewrite changes nothing but the
// version, which is what makes a concurrent auto-completion (written on
// the version it read) and a join exclude each other.
func (s *Service) JoinOps(ctx context.Context, op, tenant, missionID, taskID string) ([]store.Op, error) {
	m, it, err := s.get(ctx, op, tenant, missionID)
	if err != nil {
		return nil, err
	}
	if !isOpen(m.Status) {
		return nil, vp.Errorf(op, vp.KindConflict, "missionId", "mission %s is %s: tasks can only be added to an open mission (%s)", m.ID, m.Status, strings.Join(openStages, ", "))
	}
	w, err := put(op, tenant, m, store.IfVersion(it.Version))
	if err != nil {
		return nil, err
	}
	return []store.Op{w, linkPut(tenant, missionID, taskID)}, nil
}

// LeaveOps returns the operation that removes task taskID from mission
// missionID, in the task's transaction.
func (s *Service) LeaveOps(tenant, missionID, taskID string) []store.Op {
	return []store.Op{store.Delete(linkKey(tenant, missionID, taskID), store.Always)}
}

// Members checks that mission missionID exists and returns the query of
// its task links, in creation (step) order, with the task id of a row.
func (s *Service) Members(ctx context.Context, op, tenant, missionID string) (store.Query, func(store.Item) string, error) {
	if _, _, err := s.get(ctx, op, tenant, missionID); err != nil {
		return store.Query{}, nil, err
	}
	q := store.Query{PK: Key(tenant, missionID).PK, SKPrefix: linkPrefix}
	return q, func(it store.Item) string { return strings.TrimPrefix(it.Key.SK, linkPrefix) }, nil
}

// OnTaskFinished is the mission's subscriber to task.TopicFinished (wired
// in main: ob.Subscribe(task.TopicFinished, "mission.autocomplete", ...)):
// the event's mission completes by itself when its last open task closed
// or left. It is idempotent — it decides on the mission and tasks as
// stored now, and a mission already completed (or still open because a
// task was reopened or added since) is left alone — so a redelivered or
// late event changes nothing.
func (s *Service) OnTaskFinished(ctx context.Context, j outbox.Job) error {
	f, err := task.DecodeFinished(j)
	if err != nil {
		return err
	}
	if f.MissionID == "" {
		return nil // a watched task outside missions
	}
	return s.autoComplete(ctx, "mission.autocomplete", f.Tenant, f.MissionID)
}

// autoComplete completes an open mission whose non-cancelled tasks
// are all done (and at least one is). The write is conditional on the
// mission version read, which every join of a new task changes.
func (s *Service) autoComplete(ctx context.Context, op, tenant, id string) error {
	return table.Conflicts{Op: op, Exhausted: func() error {
		return vp.Errorf(op, vp.KindConflict, "missionId", "mission %s kept changing during its completion check", id)
	}}.Retry(ctx, func() error {
		_, it, err := s.get(ctx, op, tenant, id)
		if vp.IsKind(err, vp.KindNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		m, tasks, err := s.missionWithTasks(ctx, op, tenant, id)
		if err != nil {
			return err
		}
		if !isOpen(m.Status) {
			return nil
		}
		done := 0
		for _, t := range tasks {
			switch t.Status {
			case vp.TaskDone:
				done++
			case vp.TaskCancelled:
			default:
				return nil
			}
		}
		if done == 0 {
			return nil
		}
		now := s.nowMS()
		m.Status, m.CompletedAt, m.AutoCompleted = vp.MissionComplete, &now, true
		m.UpdatedAt = max(now, m.UpdatedAt)
		w, err := put(op, tenant, m, store.IfVersion(it.Version))
		if err != nil {
			return err
		}
		return s.st.Write(ctx, w)
	})
}
