package task

import (
	"context"
	"math"
	"slices"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Stuck work: what check_messages tells an agent besides its messages —
// its own tasks in progress that nobody touched for hours, and the tasks
// of others that wait on its open ones. Who waits on a task is kept on the
// task itself (WaitedOnBy, written by whoever adds the dependency), since
// no index maps a prerequisite to its dependents; so the answer costs the
// caller's own open partitions and a bounded number of reads, whatever the
// size of the tenant.

const (
	// MaxStuckListed bounds each list of StuckWork.
	MaxStuckListed = 10
	// maxOwnOpenRead bounds the caller's open tasks read per status.
	maxOwnOpenRead = 50
	// maxWaiterReads bounds the dependents read to check them.
	maxWaiterReads = 2 * MaxStuckListed
	// maxShownReason cuts a blocked reason in a list entry.
	maxShownReason = 200
)

// openStatuses are the statuses of work not finished, in the order
// StuckWork reads them.
var openStatuses = []string{vp.TaskInProgress, vp.TaskBlocked, vp.TaskReview, vp.TaskTodo}

// addWaiter records on dep that task id depends on it, keeping the newest
// MaxWaitedOnBy entries; false when it was recorded already.
func addWaiter(dep *vp.Task, id string) bool {
	if slices.Contains(dep.WaitedOnBy, id) {
		return false
	}
	dep.WaitedOnBy = append(dep.WaitedOnBy, id)
	if n := len(dep.WaitedOnBy); n > vp.MaxWaitedOnBy {
		dep.WaitedOnBy = slices.Clone(dep.WaitedOnBy[n-vp.MaxWaitedOnBy:])
	}
	return true
}

// waitOp is the operation a change of task id commits for its
// prerequisite dep read at version: dep rewritten with id among its
// waiters, or only checked when it is there already. The rewrite keeps
// dep's updatedAt: being waited on is not an update of the work.
func waitOp(op, tenant, id string, dep vp.Task, version int64) (store.Op, error) {
	dep = cloneTask(dep)
	if !addWaiter(&dep, id) {
		return store.Check(Key(tenant, dep.ID), store.IfVersion(version)), nil
	}
	it, err := Table.Item(op, tenant, dep)
	if err != nil {
		return store.Op{}, err
	}
	return store.Put(it, store.IfVersion(version)), nil
}

// StuckWork returns the caller's tasks in progress not updated for
// after (oldest first), and others' open tasks that depend on the
// caller's open tasks (blocked ones first), each list at most
// MaxStuckListed long. It reads the caller's open tasks (at most
// maxOwnOpenRead per status, newest-updated first; in_progress oldest
// first) and at most maxWaiterReads dependents.
func (s *Service) StuckWork(ctx context.Context, tenant, caller string, after time.Duration) (vp.StuckWork, error) {
	const op = "check_messages"
	caller = vp.NormalizeOrchestrator(caller)
	now := s.nowMS()
	cutoff := now - after.Milliseconds()
	var out vp.StuckWork
	own := map[string]bool{}
	var waiting []string             // dependents, in the order found
	waitsOn := map[string][]string{} // dependent -> the caller's tasks it names
	for _, st := range openStatuses {
		q := Table.Query(tenant, store.GSI1, table.Values{"assignee": caller, "status": st})
		q.Reverse = st != vp.TaskInProgress
		rows, err := records.QueryAll(ctx, s.st, q, maxOwnOpenRead)
		if err != nil {
			return vp.StuckWork{}, records.Err(op, err)
		}
		for _, it := range rows {
			t, err := records.Decode[vp.Task](op, it)
			if err != nil {
				return vp.StuckWork{}, err
			}
			own[t.ID] = true
			if st == vp.TaskInProgress && t.UpdatedAt <= cutoff {
				if len(out.StuckInProgress) < MaxStuckListed {
					out.StuckInProgress = append(out.StuckInProgress, brief(t, now))
				} else {
					out.Truncated = true
				}
			}
			for _, w := range t.WaitedOnBy {
				if waitsOn[w] == nil {
					waiting = append(waiting, w)
				}
				waitsOn[w] = append(waitsOn[w], t.ID)
			}
		}
	}
	reads := 0
	var peers []vp.StuckTask
	for _, id := range waiting {
		if own[id] {
			continue
		}
		if reads == maxWaiterReads || len(peers) == MaxStuckListed {
			out.Truncated = true
			break
		}
		reads++
		t, _, err := s.get(ctx, op, tenant, "taskId", id)
		if vp.IsKind(err, vp.KindNotFound) {
			continue
		}
		if err != nil {
			return vp.StuckWork{}, err
		}
		// A stale entry: the dependent finished, moved to the caller, or
		// no longer names the task.
		on := slices.DeleteFunc(slices.Clone(waitsOn[id]), func(d string) bool { return !slices.Contains(t.DependsOn, d) })
		if final(t.Status) || t.AssignedTo == caller || len(on) == 0 {
			continue
		}
		b := brief(t, now)
		b.WaitsOn = on
		peers = append(peers, b)
	}
	// Those that stopped (blocked) before those that cannot start yet.
	slices.SortStableFunc(peers, func(a, b vp.StuckTask) int {
		return boolRank(a.Status != vp.TaskBlocked) - boolRank(b.Status != vp.TaskBlocked)
	})
	out.PeersStuckOnYou = peers
	return out, nil
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// brief is t as a list entry of StuckWork.
func brief(t vp.Task, now int64) vp.StuckTask {
	return vp.StuckTask{TaskID: t.ID, Title: t.Title, Status: t.Status, AssignedTo: t.AssignedTo, UpdatedAt: t.UpdatedAt,
		IdleHours: math.Round(float64(now-t.UpdatedAt)/3.6e5) / 10, BlockedCause: t.BlockedCause,
		BlockedBy: truncate(t.BlockedBy, maxShownReason), MissionID: t.MissionID}
}
