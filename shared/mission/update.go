package mission

import (
	"context"
	"slices"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// changeMission is the read-modify-write loop of mission changes.
func (s *Service) changeMission(ctx context.Context, op, tenant, id string, change func(m *vp.Mission, now int64) error) (vp.Mission, error) {
	if err := vp.CheckName(op, "missionId", id, true); err != nil {
		return vp.Mission{}, err
	}
	var m vp.Mission
	err := table.Retry(ctx, op, "missionId", "mission "+id, func() error {
		var it store.Item
		var err error
		if m, it, err = s.get(ctx, op, tenant, id); err != nil {
			return err
		}
		m.Agents = slices.Clone(m.Agents)
		now := s.nowMS()
		if err := change(&m, now); err != nil {
			return err
		}
		m.UpdatedAt = max(now, m.UpdatedAt)
		w, err := put(op, tenant, m, store.IfVersion(it.Version))
		if err != nil {
			return err
		}
		return s.st.Write(ctx, w)
	})
	if err != nil {
		return vp.Mission{}, err
	}
	return m, nil
}

// UpdateMissionInput is update_mission's arguments; absent fields stay.
type UpdateMissionInput struct {
	MissionID          string   `json:"missionId"`
	Name               *string  `json:"name,omitempty"`
	Description        *string  `json:"description,omitempty"`
	Project            *string  `json:"project,omitempty"`
	Status             *string  `json:"status,omitempty" jsonschema:"brainstorm|plan|execute|validate|complete|cancelled"`
	CancelReason       *string  `json:"cancelReason,omitempty" jsonschema:"required with status cancelled"`
	Priority           *string  `json:"priority,omitempty"`
	Pilot              *string  `json:"pilot,omitempty"`
	Agents             []string `json:"agents,omitempty"`
	Brief              *string  `json:"brief,omitempty"`
	StartDate          *int64   `json:"startDate,omitempty"`
	TargetDate         *int64   `json:"targetDate,omitempty"`
	Progress           *float64 `json:"progress,omitempty" jsonschema:"0-100"`
	CallerOrchestrator string   `json:"callerOrchestrator,omitempty"`
}

// UpdateLimits bound update_mission's arguments: a mission's fields and
// the reason of a cancellation.
type UpdateLimits struct {
	Limits
	CancelReason vp.Limit
}

// Limits are update_mission's limits.
func (UpdateMissionInput) Limits() UpdateLimits {
	return UpdateLimits{Limits: missionLimits(), CancelReason: vp.MaxBytes("cancelReason", vp.MaxReasonBytes)}
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
	lim := in.Limits()
	var errs vp.Errs
	errs.Add(vp.CheckName(op, "missionId", in.MissionID, true))
	if in.Name != nil {
		errs.Add(lim.Name.Text(op, *in.Name, true))
	}
	errs.Add(lim.Description.Text(op, str(in.Description), false))
	if in.Project != nil {
		errs.Add(lim.Project.Text(op, *in.Project, true))
	}
	if in.Status != nil {
		errs.Add(vp.CheckEnum(op, "status", *in.Status, vp.MissionStatuses, true))
	}
	cancelling := in.Status != nil && *in.Status == vp.MissionCancelled
	if cancelling {
		errs.Add(lim.CancelReason.Text(op, str(in.CancelReason), true))
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
	errs.Add(lim.Brief.Text(op, str(in.Brief), false))
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
			if err := move(op, "status", m, *in.Status, now); err != nil {
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
		return vp.Mission{}, vp.E(op, vp.KindInvalid, "status", "cancelling needs a reason and the creator").WithRemedy("mission.cancel")
	}
	if err := vp.CheckEnum(op, "status", in.Status, append(slices.Clone(openStages), vp.MissionComplete), true); err != nil {
		return vp.Mission{}, err
	}
	return s.changeMission(ctx, op, tenant, in.MissionID, func(m *vp.Mission, now int64) error {
		return move(op, "status", m, in.Status, now)
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
