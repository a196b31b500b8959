package task

import (
	"context"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type DependencyInput struct {
	TaskID             string `json:"taskId"`
	DependsOn          string `json:"dependsOn"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

func (in DependencyInput) check(op string, p vp.Principal) vp.Errs {
	errs := TaskRef{in.TaskID, in.CallerOrchestrator}.check(op, p)
	errs.Add(vp.CheckName(op, "dependsOn", in.DependsOn, true))
	if in.DependsOn != "" && in.DependsOn == in.TaskID {
		errs.Add(vp.Errorf(op, vp.KindInvalid, "dependsOn", "task %s cannot depend on itself", in.TaskID))
	}
	return errs
}

// AddTaskDependency makes taskId wait for dependsOn, refusing an edge that
// would close a cycle.
func (s *Service) AddTaskDependency(ctx context.Context, p vp.Principal, in DependencyInput) (vp.Task, error) {
	const op = "add_task_dependency"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Task{}, err
	}
	if err := in.check(op, p).First(); err != nil {
		return vp.Task{}, err
	}
	caller, _ := p.ActAs(op, "callerOrchestrator", in.CallerOrchestrator)
	t, _, err := s.changeTask(ctx, op, tenant, in.TaskID, func(t *vp.Task, now int64) ([]store.Op, error) {
		if err := authorize(op, "change", *t, caller); err != nil {
			return nil, err
		}
		if slices.Contains(t.DependsOn, in.DependsOn) {
			return nil, nil // already there
		}
		if len(t.DependsOn) >= vp.MaxDependsOn {
			return nil, vp.Errorf(op, vp.KindTooLarge, "dependsOn", "task %s already has %d prerequisites, the limit", t.ID, vp.MaxDependsOn)
		}
		checks, err := s.dependencyChecks(ctx, op, tenant, t.ID, []string{in.DependsOn})
		if err != nil {
			return nil, err
		}
		t.DependsOn = append(t.DependsOn, in.DependsOn)
		return checks, nil
	})
	return t, err
}

// dependencyChecks verifies that task id may depend on deps: each exists,
// and none leads back to id. It walks the graph by primary-key reads and
// returns a Check (IfVersion) for every task read, so that the write only
// commits if the graph it checked is still the graph; a direct
// prerequisite not yet waited on by id is rewritten instead (waitOp), on
// the same version.
func (s *Service) dependencyChecks(ctx context.Context, op, tenant, id string, deps []string) ([]store.Op, error) {
	type node struct {
		id, via string
	}
	visited := map[string]string{} // id -> the task it was reached from
	var checks []store.Op
	queue := make([]node, 0, len(deps))
	for _, d := range deps {
		if d == id {
			return nil, vp.Errorf(op, vp.KindInvalid, "dependsOn", "task %s cannot depend on itself", id)
		}
		queue = append(queue, node{d, ""})
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if _, seen := visited[n.id]; seen {
			continue
		}
		visited[n.id] = n.via
		if len(visited) > maxDependencyWalk {
			return nil, vp.Errorf(op, vp.KindTooLarge, "dependsOn", "the prerequisites reach more than %d tasks; a dependency chain that long cannot be checked for cycles in one transaction — link to a nearer task", maxDependencyWalk)
		}
		t, it, err := s.get(ctx, op, tenant, "dependsOn", n.id)
		if vp.IsKind(err, vp.KindNotFound) {
			if n.via == "" {
				return nil, vp.Errorf(op, vp.KindNotFound, "dependsOn", "no task %q in this tenant", n.id)
			}
			continue // a dangling edge further down cannot close a cycle
		}
		if err != nil {
			return nil, err
		}
		check := store.Check(Key(tenant, n.id), store.IfVersion(it.Version))
		if n.via == "" {
			if check, err = waitOp(op, tenant, id, t, it.Version); err != nil {
				return nil, err
			}
		}
		checks = append(checks, check)
		for _, next := range t.DependsOn {
			if next == id {
				path := []string{id, n.id}
				for v := n.via; v != ""; v = visited[v] {
					path = append(path, v)
				}
				slices.Reverse(path[1:])
				return nil, vp.Errorf(op, vp.KindConflict, "dependsOn", "would create a cycle: %s already depends on %s (%s); refused",
					path[len(path)-1], id, strings.Join(append(path[1:], id), " → "))
			}
			queue = append(queue, node{next, n.id})
		}
	}
	return checks, nil
}
