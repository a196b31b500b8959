package mission

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// CreateMissionInput is create_mission's arguments.
type CreateMissionInput struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Project     string   `json:"project"`
	Status      string   `json:"status,omitempty" jsonschema:"brainstorm|plan (default)|execute|validate"`
	Priority    string   `json:"priority" jsonschema:"urgent|high|medium|low"`
	Pilot       string   `json:"pilot,omitempty" jsonschema:"the lead; defaults to createdBy"`
	Agents      []string `json:"agents,omitempty" jsonschema:"participants; defaults to [pilot]"`
	Brief       string   `json:"brief,omitempty"`
	StartDate   *int64   `json:"startDate,omitempty" jsonschema:"Unix ms"`
	TargetDate  *int64   `json:"targetDate,omitempty" jsonschema:"Unix ms"`
	Progress    *float64 `json:"progress,omitempty" jsonschema:"0-100"`
	TemplateID  string   `json:"templateId,omitempty" jsonschema:"informative"`
	CreatedBy   string   `json:"createdBy,omitempty"`
}

// Limits bound a mission's fields, declared once for create_mission,
// update_mission and missions planned from a template. Names are bounded by
// vp.CheckName.
type Limits struct {
	Name, Description, Project, Agents, Brief vp.Limit
}

func missionLimits() Limits {
	return Limits{
		Name:        vp.MaxBytes("name", vp.MaxMissionNameBytes),
		Description: vp.MaxBytes("description", vp.MaxMissionTextBytes),
		Project:     vp.MaxBytes("project", vp.MaxProjectBytes),
		Agents:      vp.MaxItems("agents", vp.MaxMissionAgents, vp.MaxNameBytes),
		Brief:       vp.MaxBytes("brief", vp.MaxMissionTextBytes),
	}
}

// Limits are create_mission's limits.
func (CreateMissionInput) Limits() Limits { return missionLimits() }

func (in CreateMissionInput) check(op string, p vp.Principal) vp.Errs {
	lim := in.Limits()
	var errs vp.Errs
	errs.Add(lim.Name.Text(op, in.Name, true))
	errs.Add(lim.Description.Text(op, in.Description, false))
	errs.Add(lim.Project.Text(op, in.Project, true))
	errs.Add(vp.CheckEnum(op, "status", in.Status, openStages, false))
	errs.Add(vp.CheckPriority(op, in.Priority, true))
	errs.Add(vp.CheckName(op, "pilot", in.Pilot, false))
	errs.Add(checkAgents(op, in.Agents))
	errs.Add(lim.Brief.Text(op, in.Brief, false))
	errs.Add(vp.CheckMillis(op, "startDate", in.StartDate))
	errs.Add(vp.CheckMillis(op, "targetDate", in.TargetDate))
	_, err := checkProgress(op, in.Progress)
	errs.Add(err)
	errs.Add(vp.CheckName(op, "templateId", in.TemplateID, false))
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		errs.Add(err)
	} else {
		_, err := p.ActAs(op, "createdBy", in.CreatedBy)
		errs.Add(err)
	}
	return errs
}

// CreateMission creates a mission (status plan unless told otherwise).
func (s *Service) CreateMission(ctx context.Context, p vp.Principal, in CreateMissionInput) (vp.Mission, error) {
	const op = "create_mission"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Mission{}, err
	}
	if err := in.check(op, p).First(); err != nil {
		return vp.Mission{}, err
	}
	creator, _ := p.ActAs(op, "createdBy", in.CreatedBy)
	progress, _ := checkProgress(op, in.Progress)
	now := s.nowMS()
	m := vp.Mission{
		ID: s.ids.New("msn"), CreationTime: now, Name: in.Name, Description: in.Description, Project: in.Project,
		Status: in.Status, Priority: in.Priority, Pilot: vp.NormalizeOrchestrator(in.Pilot), Agents: normalizeAll(in.Agents),
		Brief: in.Brief, StartDate: in.StartDate, TargetDate: in.TargetDate, Progress: progress, TemplateID: in.TemplateID,
		CreatedBy: creator, UpdatedAt: now,
	}
	if m.Status == "" {
		m.Status = vp.MissionPlan
	}
	if m.Pilot == "" {
		m.Pilot = creator
	}
	if len(m.Agents) == 0 {
		m.Agents = []string{m.Pilot}
	}
	w, err := put(op, tenant, m, store.IfNotExists)
	if err != nil {
		return vp.Mission{}, err
	}
	if err := s.st.Write(ctx, w); err != nil {
		return vp.Mission{}, records.Err(op, err)
	}
	return m, nil
}

// MissionRef names a mission.
type MissionRef struct {
	MissionID string `json:"missionId"`
}

// MissionView is a mission with its tasks, in creation (step) order.
type MissionView struct {
	vp.Mission
	Tasks []vp.Task `json:"tasks"`
	// TaskCounts counts the mission's tasks by status.
	TaskCounts map[string]int `json:"taskCounts"`
	// TasksTruncated: the mission has more tasks than the view carries;
	// page through them with list_tasks_by_mission.
	TasksTruncated bool `json:"tasksTruncated,omitempty"`
}

const maxMissionViewTasks = 200

// GetMission returns the mission with its tasks and their statuses.
func (s *Service) GetMission(ctx context.Context, p vp.Principal, in MissionRef) (MissionView, error) {
	const op = "get_mission"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return MissionView{}, err
	}
	if err := vp.CheckName(op, "missionId", in.MissionID, true); err != nil {
		return MissionView{}, err
	}
	m, tasks, err := s.missionWithTasks(ctx, op, tenant, in.MissionID)
	if err != nil {
		return MissionView{}, err
	}
	view := MissionView{Mission: m, Tasks: []vp.Task{}, TaskCounts: map[string]int{}}
	for _, t := range tasks {
		view.TaskCounts[t.Status]++
		if len(view.Tasks) < maxMissionViewTasks {
			view.Tasks = append(view.Tasks, t)
		} else {
			view.TasksTruncated = true
		}
	}
	return view, nil
}

// missionWithTasks reads a mission's partition (one consistent query) and
// each linked task by primary key.
func (s *Service) missionWithTasks(ctx context.Context, op, tenant, id string) (vp.Mission, []vp.Task, error) {
	rows, err := records.QueryAll(ctx, s.st, store.Query{PK: Key(tenant, id).PK}, maxMissionTasks+1)
	if err != nil {
		return vp.Mission{}, nil, records.Err(op, err)
	}
	var m vp.Mission
	found := false
	var tasks []vp.Task
	for _, it := range rows {
		if it.Key.SK == "MISSION" {
			if m, err = records.Decode[vp.Mission](op, it); err != nil {
				return vp.Mission{}, nil, err
			}
			found = true
			continue
		}
		tid := strings.TrimPrefix(it.Key.SK, linkPrefix)
		t, _, err := task.Table.Get(ctx, s.st, op, "taskId", tid, task.Key(tenant, tid))
		if vp.IsKind(err, vp.KindNotFound) {
			continue
		}
		if err != nil {
			return vp.Mission{}, nil, err
		}
		tasks = append(tasks, t)
	}
	if !found {
		return vp.Mission{}, nil, vp.Errorf(op, vp.KindNotFound, "missionId", "no mission %q in this tenant", id)
	}
	return m, tasks, nil
}

// ListMissionsInput is list_missions' filters.
type ListMissionsInput struct {
	listing.Params
	Project      string `json:"project,omitempty"`
	Pilot        string `json:"pilot,omitempty"`
	Status       any    `json:"status,omitempty" jsonschema:"a status, an array of them, or open|active|all"`
	UpdatedSince *int64 `json:"updatedSince,omitempty" jsonschema:"Unix ms"`
}

// ListMissions lists missions newest-updated first. project reads gsi1,
// pilot gsi2, otherwise the status partitions of gsi3 (merged when several).
func (s *Service) ListMissions(ctx context.Context, p vp.Principal, in ListMissionsInput) (listing.Page[any], error) {
	const op = "list_missions"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	var errs vp.Errs
	errs.Add(vp.CheckText(op, "project", in.Project, vp.MaxProjectBytes, false))
	errs.Add(vp.CheckName(op, "pilot", in.Pilot, false))
	errs.Add(vp.CheckMillis(op, "updatedSince", in.UpdatedSince))
	statuses, err := vp.ParseStatuses(op, in.Status, vp.MissionStatuses, statusAliases)
	errs.Add(err)
	errs.Add(listing.CheckFields(op, in.Fields))
	if err := errs.First(); err != nil {
		return listing.Page[any]{}, err
	}
	pilot := vp.NormalizeOrchestrator(in.Pilot)
	since := int64(-1)
	if in.UpdatedSince != nil {
		since = *in.UpdatedSince
	}
	var pks []string
	idx := store.GSI3
	switch {
	case in.Project != "":
		idx, pks = store.GSI1, []string{Table.PK(tenant, store.GSI1, table.Values{"project": in.Project})}
	case pilot != "":
		idx, pks = store.GSI2, []string{Table.PK(tenant, store.GSI2, table.Values{"pilot": pilot})}
	default:
		for _, st := range statuses {
			pks = append(pks, Table.PK(tenant, store.GSI3, table.Values{"status": st}))
		}
	}
	q := store.Query{Index: idx, PK: pks[0], Reverse: true}
	if since >= 0 {
		q.SKFrom = table.Millis(since)
	}
	binding := strings.Join([]string{op, in.Project, pilot, strings.Join(statuses, ","), fmt.Sprint(since)}, "\x00")
	return listing.List(ctx, store.Partitions(s.st, pks), s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: binding, Params: in.Params, Query: q,
		LiteKeys: []string{"name", "status", "pilot", "priority", "project"},
	}, func(it store.Item) (vp.Mission, bool, error) {
		m, err := records.Decode[vp.Mission](op, it)
		keep := slices.Contains(statuses, m.Status) && (in.Project == "" || m.Project == in.Project) &&
			(pilot == "" || m.Pilot == pilot) && m.UpdatedAt >= since
		return m, err == nil && keep, err
	})
}
