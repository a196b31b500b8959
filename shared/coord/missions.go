package coord

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Mission keys (KEYS.md). A mission's partition holds the mission ("MISSION")
// and one link row per task ("TASK#<taskId>"), so the mission and its
// membership are one strongly consistent query. Index sort keys are
// "<updatedAt 13 digits>#<id>".

const missionLinkPrefix = "TASK#"

func missionKey(tenant, id string) store.Key {
	return store.Key{PK: tp(tenant) + "MISSION#" + id, SK: "MISSION"}
}

func missionLinkKey(tenant, missionID, taskID string) store.Key {
	return store.Key{PK: tp(tenant) + "MISSION#" + missionID, SK: missionLinkPrefix + taskID}
}

func missionProjectPK(tenant, project string) string { return tp(tenant) + "MPROJ#" + project }
func missionPilotPK(tenant, pilot string) string     { return tp(tenant) + "MPILOT#" + pilot }
func missionStatusPK(tenant, status string) string   { return tp(tenant) + "MSTAT#" + status }

func missionItem(op, tenant string, m vp.Mission) store.Item {
	sk := ms13(m.UpdatedAt) + "#" + m.ID
	it := store.Item{Key: missionKey(tenant, m.ID), Data: encode(op, m)}
	it.GSI[0] = store.Key{PK: missionProjectPK(tenant, m.Project), SK: sk}
	it.GSI[1] = store.Key{PK: missionPilotPK(tenant, m.Pilot), SK: sk}
	it.GSI[2] = store.Key{PK: missionStatusPK(tenant, m.Status), SK: sk}
	return it
}

func missionLinkPut(tenant, missionID, taskID string) store.Op {
	return store.Put(store.Item{Key: missionLinkKey(tenant, missionID, taskID), Data: []byte(`{"taskId":"` + taskID + `"}`)}, store.Always)
}

// maxMissionTasks bounds how many tasks a mission view or completion check
// reads.
const maxMissionTasks = 2000

var missionOpenStages = []string{vp.MissionBrainstorm, vp.MissionPlan, vp.MissionExecute, vp.MissionValidate}

var missionStatusAliases = map[string][]string{
	"open":   missionOpenStages,
	"active": {vp.MissionPlan, vp.MissionExecute},
}

// missionNext is the mission lifecycle: the pilot moves a mission between
// the open stages in any order (plans get revised); complete and cancelled
// are final. Cancelling is update_mission's, creator only, with a reason.
var missionNext = map[string][]string{
	vp.MissionBrainstorm: {vp.MissionPlan, vp.MissionExecute, vp.MissionValidate, vp.MissionComplete, vp.MissionCancelled},
	vp.MissionPlan:       {vp.MissionBrainstorm, vp.MissionExecute, vp.MissionValidate, vp.MissionComplete, vp.MissionCancelled},
	vp.MissionExecute:    {vp.MissionBrainstorm, vp.MissionPlan, vp.MissionValidate, vp.MissionComplete, vp.MissionCancelled},
	vp.MissionValidate:   {vp.MissionBrainstorm, vp.MissionPlan, vp.MissionExecute, vp.MissionComplete, vp.MissionCancelled},
	vp.MissionComplete:   {},
	vp.MissionCancelled:  {},
}

// MissionTransitions returns a copy of the mission lifecycle table.
func MissionTransitions() map[string][]string {
	out := make(map[string][]string, len(missionNext))
	for k, v := range missionNext {
		out[k] = slices.Clone(v)
	}
	return out
}

func missionOpen(status string) bool { return slices.Contains(missionOpenStages, status) }

// moveMission applies a status change. Staying in an open stage is a no-op.
func moveMission(op, field string, m *vp.Mission, to string, now int64) error {
	if to == m.Status && missionOpen(to) {
		return nil
	}
	next := missionNext[m.Status]
	if !slices.Contains(next, to) {
		if len(next) == 0 {
			return vp.Errorf(op, vp.KindConflict, field, "mission %s is %s, which is final: it cannot become %s", m.ID, m.Status, to)
		}
		return vp.Errorf(op, vp.KindConflict, field, "mission %s is %s and cannot become %s; from %s it can become %s", m.ID, m.Status, to, m.Status, strings.Join(next, ", "))
	}
	m.Status = to
	if to == vp.MissionComplete {
		m.CompletedAt = &now
	}
	return nil
}

func checkProgress(op string, v *float64) (*int, error) {
	if v == nil {
		return nil, nil
	}
	if math.IsNaN(*v) || *v < 0 || *v > 100 || *v != math.Trunc(*v) {
		return nil, vp.Errorf(op, vp.KindInvalid, "progress", "must be a whole number from 0 to 100 (e.g. 25, 50, 75), got %v", *v)
	}
	n := int(*v)
	return &n, nil
}

func checkAgents(op string, agents []string) error {
	if len(agents) > vp.MaxMissionAgents {
		return vp.Errorf(op, vp.KindTooLarge, "agents", "has %d entries; the limit is %d", len(agents), vp.MaxMissionAgents)
	}
	for _, a := range agents {
		if err := vp.CheckName(op, "agents", a, true); err != nil {
			return err
		}
	}
	return nil
}

func normalizeAll(names []string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n = vp.NormalizeOrchestrator(n); !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}

// CreateMissionInput is create_mission's arguments.
type CreateMissionInput struct {
	Name        string   `json:"name"`
	Description string   `json:"description,omitempty"`
	Project     string   `json:"project"`
	Status      string   `json:"status,omitempty" jsonschema:"brainstorm|plan (default)|execute|validate"`
	Priority    string   `json:"priority" jsonschema:"urgent|high|medium|low"`
	Pilot       string   `json:"pilot,omitempty" jsonschema:"lead orchestrator; defaults to createdBy"`
	Agents      []string `json:"agents,omitempty" jsonschema:"participants; defaults to [pilot]"`
	Brief       string   `json:"brief,omitempty"`
	StartDate   *int64   `json:"startDate,omitempty" jsonschema:"Unix ms"`
	TargetDate  *int64   `json:"targetDate,omitempty" jsonschema:"Unix ms"`
	Progress    *float64 `json:"progress,omitempty" jsonschema:"0-100"`
	TemplateID  string   `json:"templateId,omitempty" jsonschema:"template this mission follows (informative)"`
	CreatedBy   string   `json:"createdBy,omitempty" jsonschema:"defaults to you"`
}

func (in CreateMissionInput) check(op string, p vp.Principal) vp.Errs {
	var errs vp.Errs
	errs.Add(vp.CheckText(op, "name", in.Name, vp.MaxMissionNameBytes, true))
	errs.Add(vp.CheckText(op, "description", in.Description, vp.MaxMissionTextBytes, false))
	errs.Add(vp.CheckText(op, "project", in.Project, vp.MaxProjectBytes, true))
	errs.Add(vp.CheckEnum(op, "status", in.Status, missionOpenStages, false))
	errs.Add(vp.CheckPriority(op, in.Priority, true))
	errs.Add(vp.CheckName(op, "pilot", in.Pilot, false))
	errs.Add(checkAgents(op, in.Agents))
	errs.Add(vp.CheckText(op, "brief", in.Brief, vp.MaxMissionTextBytes, false))
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
	if err := s.st.Write(ctx, store.Put(missionItem(op, tenant, m), store.IfNotExists)); err != nil {
		return vp.Mission{}, storeErr(op, err)
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
	rows, err := s.queryAll(ctx, store.Query{PK: missionKey(tenant, id).PK}, maxMissionTasks+1)
	if err != nil {
		return vp.Mission{}, nil, storeErr(op, err)
	}
	var m vp.Mission
	found := false
	var tasks []vp.Task
	for _, it := range rows {
		if it.Key.SK == "MISSION" {
			if m, err = decode[vp.Mission](op, it); err != nil {
				return vp.Mission{}, nil, err
			}
			found = true
			continue
		}
		tid := strings.TrimPrefix(it.Key.SK, missionLinkPrefix)
		t, _, err := get[vp.Task](ctx, s, op, "taskId", tid, taskKey(tenant, tid))
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
	statuses, err := vp.ParseStatuses(op, in.Status, vp.MissionStatuses, missionStatusAliases)
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
		idx, pks = store.GSI1, []string{missionProjectPK(tenant, in.Project)}
	case pilot != "":
		idx, pks = store.GSI2, []string{missionPilotPK(tenant, pilot)}
	default:
		for _, st := range statuses {
			pks = append(pks, missionStatusPK(tenant, st))
		}
	}
	q := store.Query{Index: idx, PK: pks[0], Reverse: true}
	if since >= 0 {
		q.SKFrom = ms13(since)
	}
	binding := strings.Join([]string{op, in.Project, pilot, strings.Join(statuses, ","), fmt.Sprint(since)}, "\x00")
	return listing.List(ctx, store.Partitions(s.st, pks), s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: binding, Params: in.Params, Query: q,
		LiteKeys: []string{"name", "status", "pilot", "priority", "project"},
	}, func(it store.Item) (vp.Mission, bool, error) {
		m, err := decode[vp.Mission](op, it)
		keep := slices.Contains(statuses, m.Status) && (in.Project == "" || m.Project == in.Project) &&
			(pilot == "" || m.Pilot == pilot) && m.UpdatedAt >= since
		return m, err == nil && keep, err
	})
}

// changeMission is the read-modify-write loop of mission changes.
func (s *Service) changeMission(ctx context.Context, op, tenant, id string, change func(m *vp.Mission, now int64) error) (vp.Mission, error) {
	if err := vp.CheckName(op, "missionId", id, true); err != nil {
		return vp.Mission{}, err
	}
	for attempt := 0; attempt < maxTaskRetries; attempt++ {
		m, it, err := get[vp.Mission](ctx, s, op, "missionId", id, missionKey(tenant, id))
		if err != nil {
			return vp.Mission{}, err
		}
		m.Agents = slices.Clone(m.Agents)
		now := s.nowMS()
		if err := change(&m, now); err != nil {
			return vp.Mission{}, err
		}
		m.UpdatedAt = max(now, m.UpdatedAt)
		err = s.st.Write(ctx, store.Put(missionItem(op, tenant, m), store.IfVersion(it.Version)))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return vp.Mission{}, storeErr(op, err)
		}
		return m, nil
	}
	return vp.Mission{}, vp.Errorf(op, vp.KindConflict, "missionId", "mission %s kept changing under this call; read it again and retry", id)
}

// UpdateMissionInput is update_mission's arguments; absent fields stay.
type UpdateMissionInput struct {
	MissionID          string   `json:"missionId"`
	Name               *string  `json:"name,omitempty"`
	Description        *string  `json:"description,omitempty"`
	Project            *string  `json:"project,omitempty"`
	Status             *string  `json:"status,omitempty" jsonschema:"brainstorm|plan|execute|validate|complete|cancelled"`
	CancelReason       *string  `json:"cancelReason,omitempty" jsonschema:"required with status cancelled (creator only)"`
	Priority           *string  `json:"priority,omitempty"`
	Pilot              *string  `json:"pilot,omitempty"`
	Agents             []string `json:"agents,omitempty"`
	Brief              *string  `json:"brief,omitempty"`
	StartDate          *int64   `json:"startDate,omitempty"`
	TargetDate         *int64   `json:"targetDate,omitempty"`
	Progress           *float64 `json:"progress,omitempty" jsonschema:"0-100"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty" jsonschema:"defaults to you"`
}

// UpdateMission applies a partial update; cancelling needs the creator (or
// system) and a reason.
func (s *Service) UpdateMission(ctx context.Context, p vp.Principal, in UpdateMissionInput) (vp.Mission, error) {
	const op = "update_mission"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Mission{}, err
	}
	str := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	var errs vp.Errs
	errs.Add(vp.CheckName(op, "missionId", in.MissionID, true))
	if in.Name != nil {
		errs.Add(vp.CheckText(op, "name", *in.Name, vp.MaxMissionNameBytes, true))
	}
	errs.Add(vp.CheckText(op, "description", str(in.Description), vp.MaxMissionTextBytes, false))
	if in.Project != nil {
		errs.Add(vp.CheckText(op, "project", *in.Project, vp.MaxProjectBytes, true))
	}
	if in.Status != nil {
		errs.Add(vp.CheckEnum(op, "status", *in.Status, vp.MissionStatuses, true))
	}
	cancelling := in.Status != nil && *in.Status == vp.MissionCancelled
	if cancelling {
		errs.Add(vp.CheckText(op, "cancelReason", str(in.CancelReason), vp.MaxReasonBytes, true))
	} else if in.CancelReason != nil {
		errs.Add(vp.E(op, vp.KindInvalid, "cancelReason", "goes with status \"cancelled\": pass both to cancel the mission"))
	}
	if in.Priority != nil {
		errs.Add(vp.CheckPriority(op, *in.Priority, true))
	}
	if in.Pilot != nil {
		errs.Add(vp.CheckName(op, "pilot", *in.Pilot, true))
	}
	errs.Add(checkAgents(op, in.Agents))
	errs.Add(vp.CheckText(op, "brief", str(in.Brief), vp.MaxMissionTextBytes, false))
	errs.Add(vp.CheckMillis(op, "startDate", in.StartDate))
	errs.Add(vp.CheckMillis(op, "targetDate", in.TargetDate))
	progress, err := checkProgress(op, in.Progress)
	errs.Add(err)
	errs.Add(checkCaller(op, p, in.CallerOrchestrator))
	if err := errs.First(); err != nil {
		return vp.Mission{}, err
	}
	caller, _ := p.ActAs(op, "callerOrchestrator", in.CallerOrchestrator)
	return s.changeMission(ctx, op, tenant, in.MissionID, func(m *vp.Mission, now int64) error {
		if in.Status != nil {
			if cancelling && caller != vp.SystemCaller && caller != m.CreatedBy {
				return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the mission's creator (%s) or system may cancel mission %s; %s may not", m.CreatedBy, m.ID, caller)
			}
			if err := moveMission(op, "status", m, *in.Status, now); err != nil {
				return err
			}
			if cancelling {
				m.CancelReason = *in.CancelReason
			}
		}
		set := func(dst *string, v *string) {
			if v != nil {
				*dst = *v
			}
		}
		set(&m.Name, in.Name)
		set(&m.Description, in.Description)
		set(&m.Project, in.Project)
		set(&m.Priority, in.Priority)
		set(&m.Brief, in.Brief)
		if in.Pilot != nil {
			m.Pilot = vp.NormalizeOrchestrator(*in.Pilot)
		}
		if in.Agents != nil {
			m.Agents = normalizeAll(in.Agents)
		}
		if in.StartDate != nil {
			m.StartDate = in.StartDate
		}
		if in.TargetDate != nil {
			m.TargetDate = in.TargetDate
		}
		if progress != nil {
			m.Progress = progress
		}
		return nil
	})
}

// MissionStatusInput is update_mission_status' arguments.
type MissionStatusInput struct {
	MissionID string `json:"missionId"`
	Status    string `json:"status" jsonschema:"brainstorm|plan|execute|validate|complete"`
}

// UpdateMissionStatus moves a mission to another stage. Cancelling is not
// a stage change: it is update_mission's, with a reason.
func (s *Service) UpdateMissionStatus(ctx context.Context, p vp.Principal, in MissionStatusInput) (vp.Mission, error) {
	const op = "update_mission_status"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Mission{}, err
	}
	if in.Status == vp.MissionCancelled {
		return vp.Mission{}, vp.E(op, vp.KindInvalid, "status", "cancelling needs a reason and the creator: use update_mission {\"missionId\":...,\"status\":\"cancelled\",\"cancelReason\":\"...\"}")
	}
	if err := vp.CheckEnum(op, "status", in.Status, append(slices.Clone(missionOpenStages), vp.MissionComplete), true); err != nil {
		return vp.Mission{}, err
	}
	return s.changeMission(ctx, op, tenant, in.MissionID, func(m *vp.Mission, now int64) error {
		return moveMission(op, "status", m, in.Status, now)
	})
}

// MissionProgressInput is update_mission_progress' arguments.
type MissionProgressInput struct {
	MissionID string  `json:"missionId"`
	Progress  float64 `json:"progress" jsonschema:"whole number 0-100"`
}

// UpdateMissionProgress sets the pilot's progress estimate (0-100).
func (s *Service) UpdateMissionProgress(ctx context.Context, p vp.Principal, in MissionProgressInput) (vp.Mission, error) {
	const op = "update_mission_progress"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Mission{}, err
	}
	progress, err := checkProgress(op, &in.Progress)
	if err != nil {
		return vp.Mission{}, err
	}
	return s.changeMission(ctx, op, tenant, in.MissionID, func(m *vp.Mission, now int64) error {
		if m.Status == vp.MissionCancelled {
			return vp.Errorf(op, vp.KindConflict, "missionId", "mission %s is cancelled; its progress no longer changes", m.ID)
		}
		m.Progress = progress
		return nil
	})
}

// joinMission returns the operations that add task taskID to mission
// missionID inside the task's transaction: the link row, and a rewrite of
// the mission item on the version read. The rewrite changes nothing but
// the version, which is what makes a concurrent auto-completion (written
// on the version it read) and a join exclude each other.
func (s *Service) joinMission(ctx context.Context, op, tenant, missionID, taskID string) ([]store.Op, error) {
	m, it, err := get[vp.Mission](ctx, s, op, "missionId", missionID, missionKey(tenant, missionID))
	if err != nil {
		return nil, err
	}
	if !missionOpen(m.Status) {
		return nil, vp.Errorf(op, vp.KindConflict, "missionId", "mission %s is %s: tasks can only be added to an open mission (%s)", m.ID, m.Status, strings.Join(missionOpenStages, ", "))
	}
	return []store.Op{store.Put(missionItem(op, tenant, m), store.IfVersion(it.Version)), missionLinkPut(tenant, missionID, taskID)}, nil
}

// afterTaskWrite runs the consequences of a committed task change: a
// mission whose last open task just closed (or left) completes by itself.
// old is nil for a new task, t nil for a deleted one. Failures are logged:
// the task change itself is committed.
func (s *Service) afterTaskWrite(ctx context.Context, op, tenant string, old, t *vp.Task) {
	closed := func(x *vp.Task) bool {
		return x != nil && (x.Status == vp.TaskDone || x.Status == vp.TaskCancelled)
	}
	var check []string
	if old != nil && old.MissionID != "" && (t == nil || t.MissionID != old.MissionID || (closed(t) && !closed(old))) {
		check = append(check, old.MissionID)
	}
	if t != nil && t.MissionID != "" && closed(t) && !slices.Contains(check, t.MissionID) && (old == nil || old.MissionID != t.MissionID || !closed(old)) {
		check = append(check, t.MissionID)
	}
	for _, mid := range check {
		if err := s.autoCompleteMission(ctx, op, tenant, mid); err != nil {
			s.log.ErrorContext(ctx, "mission auto-completion failed", "op", op, "tenant", tenant, "missionId", mid, "err", err)
		}
	}
}

// autoCompleteMission completes an open mission whose non-cancelled tasks
// are all done (and at least one is). The write is conditional on the
// mission version read, which every join of a new task changes.
func (s *Service) autoCompleteMission(ctx context.Context, op, tenant, id string) error {
	for attempt := 0; attempt < maxTaskRetries; attempt++ {
		_, it, err := get[vp.Mission](ctx, s, op, "missionId", id, missionKey(tenant, id))
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
		if !missionOpen(m.Status) {
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
		err = s.st.Write(ctx, store.Put(missionItem(op, tenant, m), store.IfVersion(it.Version)))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		return storeErr(op, err)
	}
	return vp.Errorf(op, vp.KindConflict, "missionId", "mission %s kept changing during its completion check", id)
}
