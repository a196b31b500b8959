package mission

import (
	"context"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Another capability may create a mission with the tasks of a template
// inside its own transaction (a GitHub issue becomes its record and its
// mission at once, or neither): PlanFromTemplate returns the writes, the
// caller commits them with its own, then calls Planned.Committed.

// FromTemplate describes a mission to create with the tasks of a template.
type FromTemplate struct {
	Name, Description, Project, Priority, Pilot, Brief string
	// CreatedBy is the creator of the mission and its tasks.
	CreatedBy string
	Template  string
	// Context fills {{key}} in the steps; TitlePrefix is put before each title.
	Context     map[string]string
	TitlePrefix string
}

// Planned is a mission ready to commit.
type Planned struct {
	Mission vp.Mission
	TaskIDs []string
	// Ops create the mission, its tasks, their links and their index job:
	// 2 + 2 × steps operations.
	Ops   []store.Op
	tasks []vp.Task
	ix    search.Pending
}

// PlanFromTemplate returns the writes that create a mission (status plan)
// and the tasks of a template in it. The template is read (and a built-in
// one seeded) now; the tasks are checked as create_task checks them.
func (s *Service) PlanFromTemplate(ctx context.Context, op, tenant string, in FromTemplate) (Planned, error) {
	lim := missionLimits()
	var errs vp.Errs
	errs.Add(lim.Name.Text(op, in.Name, true))
	errs.Add(lim.Description.Text(op, in.Description, false))
	errs.Add(lim.Project.Text(op, in.Project, true))
	errs.Add(vp.CheckPriority(op, in.Priority, true))
	errs.Add(vp.CheckName(op, "pilot", in.Pilot, true))
	errs.Add(lim.Brief.Text(op, in.Brief, false))
	if err := errs.First(); err != nil {
		return Planned{}, err
	}
	tpl, err := s.loadTemplate(ctx, op, tenant, "templateName", in.Template)
	if err != nil {
		return Planned{}, err
	}
	now := s.nowMS()
	pilot := vp.NormalizeOrchestrator(in.Pilot)
	m := vp.Mission{
		ID: s.ids.New("msn"), CreationTime: now, Name: in.Name, Description: in.Description, Project: in.Project,
		Status: vp.MissionPlan, Priority: in.Priority, Pilot: pilot, Agents: []string{pilot}, Brief: in.Brief,
		TemplateID: tpl.Name, CreatedBy: vp.NormalizeOrchestrator(in.CreatedBy), UpdatedAt: now,
	}
	w, err := put(op, tenant, m, store.IfNotExists)
	if err != nil {
		return Planned{}, err
	}
	ids, tasks := s.newTaskIDs(len(tpl.Steps)), make([]vp.Task, len(tpl.Steps))
	ops, err := s.stepTasks(op, tenant, m, tpl, filler(in.Context), in.TitlePrefix, m.CreatedBy, ids, tasks, now)
	if err != nil {
		return Planned{}, err
	}
	ix, err := s.tasks.Creating(ctx, tenant, tasks...)
	if err != nil {
		return Planned{}, err
	}
	ops = append(append([]store.Op{w}, ops...), ix.Ops()...)
	return Planned{Mission: m, TaskIDs: ids, Ops: ops, tasks: tasks, ix: ix}, nil
}

// Committed runs what follows the commit of p's writes: the tasks' index
// job.
func (s *Service) Committed(ctx context.Context, op, tenant string, p Planned) {
	s.tasks.Created(ctx, op, tenant, p.ix, p.tasks...)
}
