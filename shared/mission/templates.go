package mission

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Mission templates: one item per (tenant, name). The built-in
// templates are seeded into a tenant the first time it reads or uses one
// of them (IfNotExists), so a tenant's own update_mission_template of the
// same name, before or after, is what the tenant sees.

// Templates declares the template items.
var Templates = table.Declare(table.Schema[vp.MissionTemplate]{
	Entity:  "mission template",
	Primary: table.Key{PK: "MTPL#{name}", SK: "MTPL", Pattern: "mission template by name", Note: "built-ins seeded IfNotExists on first read/use"},
	Fields:  func(t vp.MissionTemplate) table.Values { return table.Values{"name": t.Name} },
})

func templateKey(tenant, name string) store.Key {
	return Templates.KeyOf(tenant, table.Values{"name": name})
}

//go:embed templates/builtin.json
var builtinTemplatesJSON []byte

// builtinTemplates are issue-resolution-v2 (14 steps T0–T13, which the
// GitHub capability drives), repo-fix-v1 and new-feature-v1 (10 steps
// each; new-feature-v1 assigns six of them to roles the context maps). They are parsed on first use, not at start: every function links
// this package, few read a template.
var builtinTemplates = sync.OnceValue(func() map[string]vp.MissionTemplate {
	var list []vp.MissionTemplate
	if err := json.Unmarshal(builtinTemplatesJSON, &list); err != nil {
		panic("mission: built-in mission templates: " + err.Error())
	}
	out := map[string]vp.MissionTemplate{}
	for _, t := range list {
		if err := checkTemplate("builtin", t.Name, t.Description, t.Steps).First(); err != nil {
			panic("mission: built-in mission template " + t.Name + ": " + err.Error())
		}
		t.CreatedBy = vp.SystemCaller
		out[t.Name] = t
	}
	return out
})

// BuiltinTemplateNames lists the templates every tenant starts with.
func BuiltinTemplateNames() []string { return slices.Sorted(maps.Keys(builtinTemplates())) }

// TemplateLimits bound update_mission_template's arguments. The name is
// bounded by vp.CheckName (checkTemplateName).
type TemplateLimits struct {
	Name, Description, Steps, StepTitle, StepDescription, StepTags vp.Limit
}

// Limits are update_mission_template's limits; a step's fields are a
// task's.
func (UpdateTemplateInput) Limits() TemplateLimits {
	return TemplateLimits{
		Name:            vp.MaxBytes("name", vp.MaxTemplateNameBytes),
		Description:     vp.MaxBytes("description", vp.MaxMissionTextBytes),
		Steps:           vp.MaxItems("steps", vp.MaxTemplateSteps, 0),
		StepTitle:       vp.MaxBytes("steps[].title", vp.MaxTaskTitleBytes),
		StepDescription: vp.MaxBytes("steps[].description", vp.MaxTaskDescriptionBytes),
		StepTags:        vp.MaxItems("steps[].tags", vp.MaxTags, vp.MaxTagBytes),
	}
}

// Limits are get_mission_template's limits.
func (TemplateRef) Limits() vp.Limit { return UpdateTemplateInput{}.Limits().Name }

func checkTemplate(op, name, description string, steps []vp.TemplateStep) vp.Errs {
	lim := UpdateTemplateInput{}.Limits()
	var errs vp.Errs
	errs.Add(checkTemplateName(op, "name", name))
	errs.Add(lim.Description.Text(op, description, false))
	switch {
	case len(steps) == 0:
		errs.Add(vp.E(op, vp.KindInvalid, "steps", "is required: at least one {\"title\":...,\"description\":...}"))
	case len(steps) > lim.Steps.Items:
		errs.Add(vp.Errorf(op, vp.KindTooLarge, lim.Steps.Field, "has %d steps; the limit is %d (a template becomes one transaction)", len(steps), lim.Steps.Items))
	}
	size := 0
	for i, st := range steps {
		f := fmt.Sprintf("steps[%d].", i)
		errs.Add(lim.StepTitle.As(f+"title").Text(op, st.Title, true))
		errs.Add(lim.StepDescription.As(f+"description").Text(op, st.Description, false))
		if err := lim.StepTags.As("tags").Tags(op, st.Tags); err != nil {
			errs.Add(vp.Errorf(op, vp.KindOf(err), f+"tags", "%v", err))
		}
		errs.Add(vp.CheckName(op, f+"assignedTo", st.AssignedTo, false))
		for j, d := range st.DependsOn {
			if d < 0 || d >= i || slices.Index(st.DependsOn, d) != j {
				errs.Add(vp.Errorf(op, vp.KindInvalid, f+"dependsOn", "%d is not an earlier step: a step may depend only on steps before it (0 to %d), each once", d, i-1))
				break
			}
		}
		size += len(st.Title) + len(st.Description)
	}
	if size > vp.MaxTemplateStepsBytes {
		errs.Add(vp.Errorf(op, vp.KindTooLarge, "steps", "carry %d bytes of text; the limit is %d", size, vp.MaxTemplateStepsBytes))
	}
	return errs
}

func checkTemplateName(op, field, name string) error {
	if err := vp.CheckName(op, field, name, true); err != nil {
		return err
	}
	if strings.TrimSpace(name) != name {
		return vp.Errorf(op, vp.KindInvalid, field, "%q has leading or trailing spaces", name)
	}
	return nil
}

// loadTemplate reads a tenant's template, seeding a built-in one on first use.
func (s *Service) loadTemplate(ctx context.Context, op, tenant, field, name string) (vp.MissionTemplate, error) {
	var t vp.MissionTemplate
	err := table.Conflicts{Op: op, Exhausted: func() error {
		return vp.Errorf(op, vp.KindConflict, field, "template %q kept changing; retry", name)
	}}.Retry(ctx, func() error {
		var err error
		t, _, err = Templates.Get(ctx, s.st, op, field, name, templateKey(tenant, name))
		if !vp.IsKind(err, vp.KindNotFound) {
			return err
		}
		b, ok := builtinTemplates()[name]
		if !ok {
			return vp.Errorf(op, vp.KindNotFound, field, "no mission template %q in this tenant (built-in: %s)", name, strings.Join(BuiltinTemplateNames(), ", ")).WithRemedy("mission.template.create")
		}
		now := s.nowMS()
		b.ID, b.CreationTime, b.UpdatedAt = s.ids.New("tpl"), now, now
		b.Steps = slices.Clone(b.Steps)
		it, err := Templates.Item(op, tenant, b)
		if err != nil {
			return err
		}
		// A lost write: seeded (or written by the tenant) meanwhile; read it.
		if err := s.st.Write(ctx, store.Put(it, store.IfNotExists)); err != nil {
			return err
		}
		t = b
		return nil
	})
	if err != nil {
		return vp.MissionTemplate{}, err
	}
	return t, nil
}

// TemplateRef names a mission template.
type TemplateRef struct {
	Name string `json:"name"`
}

// GetMissionTemplate returns a template with its steps.
func (s *Service) GetMissionTemplate(ctx context.Context, p vp.Principal, in TemplateRef) (vp.MissionTemplate, error) {
	const op = "get_mission_template"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.MissionTemplate{}, err
	}
	if err := checkTemplateName(op, "name", in.Name); err != nil {
		return vp.MissionTemplate{}, err
	}
	return s.loadTemplate(ctx, op, tenant, "name", in.Name)
}

// UpdateTemplateInput is update_mission_template's arguments.
type UpdateTemplateInput struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Steps       []vp.TemplateStep `json:"steps" jsonschema:"in order; dependsOn holds earlier step indexes"`
	IsDefault   *bool             `json:"isDefault,omitempty"`
	CreatedBy   string            `json:"createdBy,omitempty"`
}

// UpdateMissionTemplate creates or replaces (upserts) a template by name.
// Missions already instantiated keep their tasks.
func (s *Service) UpdateMissionTemplate(ctx context.Context, p vp.Principal, in UpdateTemplateInput) (vp.MissionTemplate, error) {
	const op = "update_mission_template"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.MissionTemplate{}, err
	}
	errs := checkTemplate(op, in.Name, in.Description, in.Steps)
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		errs.Add(err)
	} else {
		_, err := p.ActAs(op, "createdBy", in.CreatedBy)
		errs.Add(err)
	}
	if err := errs.First(); err != nil {
		return vp.MissionTemplate{}, err
	}
	creator, _ := p.ActAs(op, "createdBy", in.CreatedBy)
	var t vp.MissionTemplate
	err = table.Conflicts{Op: op, Exhausted: func() error {
		return vp.Errorf(op, vp.KindConflict, "name", "template %q kept changing; retry", in.Name)
	}}.Retry(ctx, func() error {
		now := s.nowMS()
		t = vp.MissionTemplate{ID: s.ids.New("tpl"), CreationTime: now, Name: in.Name, Description: in.Description,
			Steps: in.Steps, CreatedBy: creator, UpdatedAt: now}
		cond := store.IfNotExists
		cur, it, err := Templates.Get(ctx, s.st, op, "name", in.Name, templateKey(tenant, in.Name))
		switch {
		case err == nil:
			t.ID, t.CreationTime, t.IsDefault = cur.ID, cur.CreationTime, cur.IsDefault
			cond = store.IfVersion(it.Version)
		case !vp.IsKind(err, vp.KindNotFound):
			return err
		}
		if in.IsDefault != nil {
			t.IsDefault = *in.IsDefault
		}
		item, err := Templates.Item(op, tenant, t)
		if err != nil {
			return err
		}
		return s.st.Write(ctx, store.Put(item, cond))
	})
	if err != nil {
		return vp.MissionTemplate{}, err
	}
	return t, nil
}

// InstantiateInput is instantiate_template_into_mission's arguments.
type InstantiateInput struct {
	TemplateName       string            `json:"templateName"`
	MissionID          string            `json:"missionId"`
	Context            map[string]string `json:"context,omitempty" jsonschema:"values replace {{key}} in step titles, descriptions and assignees (roles)"`
	TitlePrefix        string            `json:"titlePrefix,omitempty" jsonschema:"prepended to every title"`
	CallerOrchestrator string            `json:"callerOrchestrator,omitempty" jsonschema:"creator of the tasks"`
}

// InstantiateLimits bound instantiate_template_into_mission's arguments.
type InstantiateLimits struct{ TemplateName, TitlePrefix, ContextValue vp.Limit }

// Limits are instantiate_template_into_mission's limits.
func (InstantiateInput) Limits() InstantiateLimits {
	return InstantiateLimits{
		TemplateName: vp.MaxBytes("templateName", vp.MaxTemplateNameBytes),
		TitlePrefix:  vp.MaxBytes("titlePrefix", vp.MaxTitlePrefixBytes),
		ContextValue: vp.MaxBytes("context.*", vp.MaxContextValueBytes),
	}
}

// InstantiateResult lists the tasks created, in step order.
type InstantiateResult struct {
	MissionID string   `json:"missionId"`
	TaskIDs   []string `json:"taskIds"`
	Count     int      `json:"count"`
}

// InstantiateTemplate creates one task per template step in an existing
// open mission, with dependsOn resolved to the new task ids, all in ONE
// transaction with the mission's links: either every task exists or none
// does. Tasks go to the step's assignee or the mission's pilot, with the
// mission's priority and project.
func (s *Service) InstantiateTemplate(ctx context.Context, p vp.Principal, in InstantiateInput) (InstantiateResult, error) {
	const op = "instantiate_template_into_mission"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return InstantiateResult{}, err
	}
	var errs vp.Errs
	errs.Add(checkTemplateName(op, "templateName", in.TemplateName))
	errs.Add(vp.CheckName(op, "missionId", in.MissionID, true))
	lim := in.Limits()
	errs.Add(lim.TitlePrefix.Text(op, in.TitlePrefix, false))
	if len(in.Context) > vp.MaxTemplateContext {
		errs.Add(vp.Errorf(op, vp.KindTooLarge, "context", "has %d keys; the limit is %d", len(in.Context), vp.MaxTemplateContext))
	}
	for k, v := range in.Context {
		errs.Add(vp.CheckName(op, "context", k, true))
		errs.Add(lim.ContextValue.As("context").Text(op, v, false))
	}
	errs.Add(checkCaller(op, p, in.CallerOrchestrator))
	if err := errs.First(); err != nil {
		return InstantiateResult{}, err
	}
	caller, _ := p.ActAs(op, "callerOrchestrator", in.CallerOrchestrator)
	tpl, err := s.loadTemplate(ctx, op, tenant, "templateName", in.TemplateName)
	if err != nil {
		return InstantiateResult{}, err
	}
	fill := filler(in.Context)
	ids, tasks := s.newTaskIDs(len(tpl.Steps)), make([]vp.Task, len(tpl.Steps))
	var res InstantiateResult
	err = table.Conflicts{Op: op, Exhausted: func() error {
		return vp.Errorf(op, vp.KindConflict, "missionId", "mission %s kept changing; retry", in.MissionID)
	}}.Retry(ctx, func() error {
		m, mit, err := s.get(ctx, op, tenant, in.MissionID)
		if err != nil {
			return err
		}
		if !isOpen(m.Status) {
			return vp.Errorf(op, vp.KindConflict, "missionId", "mission %s is %s: templates can only be instantiated into an open mission (%s)", m.ID, m.Status, strings.Join(openStages, ", "))
		}
		now := s.nowMS()
		// The mission is rewritten on the version read (see joinMission).
		w, err := put(op, tenant, m, store.IfVersion(mit.Version))
		if err != nil {
			return err
		}
		ops, err := s.stepTasks(op, tenant, m, tpl, fill, in.TitlePrefix, caller, ids, tasks, now)
		if err != nil {
			return err
		}
		ops = append([]store.Op{w}, ops...)
		// 1 + 2×49 steps + the index job: 100 ops, store.MaxTransactOps.
		ix, err := s.tasks.Creating(ctx, tenant, tasks...)
		if err != nil {
			return err
		}
		// A lost write: the mission changed meanwhile; check it again.
		if err := s.st.Write(ctx, append(ops, ix.Ops()...)...); err != nil {
			return err
		}
		s.tasks.Created(ctx, op, tenant, ix, tasks...)
		res = InstantiateResult{MissionID: m.ID, TaskIDs: ids, Count: len(ids)}
		return nil
	})
	if err != nil {
		return InstantiateResult{}, err
	}
	return res, nil
}

// filler replaces {{key}} with context[key].
func filler(context map[string]string) func(string) string {
	pairs := make([]string, 0, 2*len(context))
	for _, k := range slices.Sorted(maps.Keys(context)) {
		pairs = append(pairs, "{{"+k+"}}", context[k])
	}
	return strings.NewReplacer(pairs...).Replace
}

func (s *Service) newTaskIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = s.ids.New("tsk")
	}
	return ids
}

// stepTasks builds one task per template step in mission m (into tasks,
// with the ids given) and returns their puts and link rows.
func (s *Service) stepTasks(op, tenant string, m vp.Mission, tpl vp.MissionTemplate, fill func(string) string,
	prefix, caller string, ids []string, tasks []vp.Task, now int64) ([]store.Op, error) {
	ops := make([]store.Op, 0, 2*len(tpl.Steps))
	// Who waits on each step (vp.Task.WaitedOnBy), as create_task records
	// it on a prerequisite: check_messages tells a step's assignee which
	// later steps of others wait on it.
	waiters := make([][]string, len(tpl.Steps))
	for i, st := range tpl.Steps {
		for _, d := range st.DependsOn {
			waiters[d] = append(waiters[d], ids[i])
		}
	}
	for i, st := range tpl.Steps {
		draft := vp.Task{
			ID: ids[i], Title: fill(st.Title), Description: fill(st.Description), Tags: slices.Clone(st.Tags),
			AssignedTo: fill(st.AssignedTo), Priority: m.Priority, Project: m.Project, MissionID: m.ID, CreatedBy: caller,
			WaitedOnBy: waiters[i],
		}
		if prefix != "" {
			draft.Title = prefix + " " + draft.Title
		}
		// A step's assignee may be a role, "{{backend}}", that the context
		// maps to an agent; a role left unmapped falls to the pilot.
		if draft.AssignedTo == "" || strings.Contains(draft.AssignedTo, "{{") {
			draft.AssignedTo = m.Pilot
		}
		for _, d := range st.DependsOn {
			draft.DependsOn = append(draft.DependsOn, ids[d])
		}
		t, it, err := s.tasks.Build(op, tenant, draft, now)
		if err != nil {
			return nil, stepError(op, i, st, prefix != "", err)
		}
		tasks[i] = t
		ops = append(ops, store.Put(it, store.IfNotExists), linkPut(tenant, m.ID, ids[i]))
	}
	return ops, nil
}

// stepError explains which step would make an invalid task, blaming the
// argument that made it so.
func stepError(op string, i int, st vp.TemplateStep, prefixed bool, err error) error {
	var e *vp.Error
	field, msg := "templateName", err.Error()
	if errors.As(err, &e) {
		msg = e.Field + ": " + e.Msg
		switch {
		case e.Field == "title" && prefixed:
			field = "titlePrefix"
		case e.Field == "title" || e.Field == "description":
			field = "context"
		}
	}
	return vp.Errorf(op, vp.KindOf(err), field, "step %d (%q) would make an invalid task (%s); nothing was created", i, st.Title, msg)
}
