package mcpserver

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func (s *server) addMissionTools(m *mcp.Server) {
	c := s.opts.Missions
	add(s, m, tool{Name: "create_mission", Annotations: write,
		Limits: limits{
			"name": maxLen(vp.MaxMissionNameBytes), "description": maxLen(vp.MaxMissionTextBytes),
			"brief": maxLen(vp.MaxMissionTextBytes), "project": maxLen(vp.MaxProjectBytes), "pilot": maxLen(vp.MaxNameBytes),
			"agents": maxItems(vp.MaxMissionAgents), "agents[]": maxLen(vp.MaxNameBytes), "templateId": maxLen(vp.MaxNameBytes),
		},
		Description: "Create a mission (a group of tasks with a pilot), in plan unless told otherwise; fill it with create_task missionId or " +
			"instantiate_template_into_mission. Example: {\"name\":\"fix-issue-255\",\"project\":\"studio/ws1\",\"priority\":\"high\",\"pilot\":\"proxima\"}"},
		c.CreateMission)

	add(s, m, tool{Name: "get_mission", Core: true, Annotations: readOnly,
		Limits:      limits{"missionId": maxLen(vp.MaxNameBytes)},
		Description: "Fetch a mission with its tasks (step order) and a count per task status. Example: {\"missionId\":\"msn_01jd...\"}"},
		c.GetMission)

	add(s, m, tool{Name: "list_missions", Core: true, Annotations: readOnly,
		Limits: limits{"pilot": maxLen(vp.MaxNameBytes), "project": maxLen(vp.MaxProjectBytes), "limit": between(1, listing.MaxLimit)},
		Description: "List missions, newest-updated first, by project, pilot, status (value, array, or open|active|all) or updatedSince. " +
			"Paginated {items, nextCursor?}. Example: {\"pilot\":\"pi\",\"status\":\"active\",\"fields\":\"lite\"}"},
		c.ListMissions)

	add(s, m, tool{Name: "update_mission", Annotations: write,
		Limits: limits{
			"name": maxLen(vp.MaxMissionNameBytes), "description": maxLen(vp.MaxMissionTextBytes),
			"brief": maxLen(vp.MaxMissionTextBytes), "project": maxLen(vp.MaxProjectBytes), "pilot": maxLen(vp.MaxNameBytes),
			"agents": maxItems(vp.MaxMissionAgents), "agents[]": maxLen(vp.MaxNameBytes),
			"cancelReason": maxLen(vp.MaxReasonBytes),
		},
		Description: "Change mission fields or stage; cancel with status cancelled + cancelReason (creator only). " +
			"Example: {\"missionId\":\"msn_01jd...\",\"brief\":\"Scope cut to the login flow\"}"},
		c.UpdateMission)

	add(s, m, tool{Name: "update_mission_status", Annotations: write,
		Description: "Move a mission between brainstorm, plan, execute, validate and complete (complete is final; a mission also completes " +
			"by itself when all its tasks are done). Example: {\"missionId\":\"msn_01jd...\",\"status\":\"execute\"}"},
		c.UpdateMissionStatus)

	add(s, m, tool{Name: "update_mission_progress", Annotations: idempotent,
		Description: "Set the pilot's progress estimate, a whole number 0-100 (not computed from tasks). Example: {\"missionId\":\"msn_01jd...\",\"progress\":50}"},
		c.UpdateMissionProgress)

	add(s, m, tool{Name: "get_mission_template", Annotations: readOnly,
		Description: "Fetch a mission template with its steps. Built in: issue-resolution-v2 (IRP, T0-T13), repo-fix-v1, new-feature-v1. " +
			"Example: {\"name\":\"issue-resolution-v2\"}"},
		c.GetMissionTemplate)

	add(s, m, tool{Name: "update_mission_template", Annotations: idempotent,
		Limits: limits{
			"name": maxLen(vp.MaxNameBytes), "description": maxLen(vp.MaxMissionTextBytes),
			"steps": maxItems(vp.MaxTemplateSteps), "steps[].title": maxLen(vp.MaxTaskTitleBytes),
			"steps[].description": maxLen(vp.MaxTaskDescriptionBytes), "steps[].tags": maxItems(vp.MaxTags),
			"steps[].tags[]": maxLen(vp.MaxTagBytes), "steps[].assignedTo": maxLen(vp.MaxNameBytes),
		},
		Description: "Create or replace a template by name (your tenant's version overrides a built-in). " +
			"Example: {\"name\":\"deliver-v1\",\"steps\":[{\"title\":\"Scope\",\"description\":\"Define acceptance criteria\"},{\"title\":\"Build\",\"description\":\"Implement\",\"dependsOn\":[0]}]}"},
		c.UpdateMissionTemplate)

	add(s, m, tool{Name: "instantiate_template_into_mission", Annotations: write,
		Limits: limits{"titlePrefix": maxLen(vp.MaxTitlePrefixBytes), "templateName": maxLen(vp.MaxNameBytes)},
		Description: "Create one task per template step in a mission, dependencies wired, all or nothing; {{key}} placeholders take context values. " +
			"Example: {\"templateName\":\"issue-resolution-v2\",\"missionId\":\"msn_01jd...\",\"titlePrefix\":\"[#142]\",\"context\":{\"issueNumber\":\"142\",\"repo\":\"vantage-memory\"}}"},
		c.InstantiateTemplate)
}
