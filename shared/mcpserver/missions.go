package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/uimarker"
)

// MissionTools are the tools of the missions and templates over c; none when c is nil.
func MissionTools(c *mission.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addMissionTools(m, c) }}
}

func (s *server) addMissionTools(m *mcp.Server, c *mission.Service) {
	add(s, m, tool{Name: "create_mission", Title: "Create mission", Annotations: write,
		Limits:      mission.CreateMissionInput{}.Limits(),
		Description: "Create a mission for work of several tasks, led by a pilot; fill it with create_task missionId or instantiate_template_into_mission. Example: {\"name\":\"fix-issue-255\",\"project\":\"web\",\"priority\":\"high\"}"},
		c.CreateMission)

	add(s, m, tool{Name: "get_mission", Title: "Get mission", Core: true, Annotations: readOnly,
		Description: "Fetch a mission with its tasks in step order and a count per status. Example: {\"missionId\":\"msn_01jd...\"}"},
		c.GetMission)

	add(s, m, tool{Name: "list_missions", Title: "List missions", Marker: markMissions, UI: uimarker.KindMissionTimeline, Core: true, Annotations: readOnly,
		Limits:      mission.ListMissionsInput{}.Limits(),
		Description: "List missions, last updated first. Example: {\"pilot\":\"alice\",\"status\":\"active\"}"},
		c.ListMissions)

	add(s, m, tool{Name: "update_mission", Title: "Update mission", Annotations: write,
		Limits:      mission.UpdateMissionInput{}.Limits(),
		Description: "Change mission fields or stage; only the creator cancels. Example: {\"missionId\":\"msn_01jd...\",\"brief\":\"Login flow only\"}"},
		c.UpdateMission)

	add(s, m, tool{Name: "update_mission_status", Title: "Update mission status", Annotations: write,
		Description: "Move a mission to another stage; complete is final (reached too when all its tasks are done). Example: {\"missionId\":\"msn_01jd...\",\"status\":\"execute\"}"},
		c.UpdateMissionStatus)

	add(s, m, tool{Name: "update_mission_progress", Title: "Update mission progress", Annotations: idempotent,
		Description: "Set the pilot's progress estimate (not computed from tasks). Example: {\"missionId\":\"msn_01jd...\",\"progress\":50}"},
		c.UpdateMissionProgress)

	add(s, m, tool{Name: "get_mission_template", Title: "Get mission template", Annotations: readOnly, Limits: mission.TemplateRef{}.Limits(),
		Description: "Fetch a mission template (its steps, in order) before instantiating it; built in: issue-resolution-v2, repo-fix-v1, new-feature-v1. Example: {\"name\":\"repo-fix-v1\"}"},
		c.GetMissionTemplate)

	add(s, m, tool{Name: "update_mission_template", Title: "Save mission template", Annotations: idempotent,
		Limits:      mission.UpdateTemplateInput{}.Limits(),
		Description: "Create or replace a template by name (yours overrides a built-in). Example: {\"name\":\"deliver-v1\",\"steps\":[{\"title\":\"Scope\"},{\"title\":\"Build\",\"dependsOn\":[0]}]}"},
		c.UpdateMissionTemplate)

	add(s, m, tool{Name: "instantiate_template_into_mission", Title: "Instantiate template", Annotations: write,
		Limits:      mission.InstantiateInput{}.Limits(),
		Description: "Create a mission's tasks from a template, one per step, dependencies wired, all or nothing; a step for {{role}} goes to context.role, else the pilot. Example: {\"templateName\":\"new-feature-v1\",\"missionId\":\"msn_01jd...\",\"context\":{\"backend\":\"alice\"}}"},
		c.InstantiateTemplate)
}
