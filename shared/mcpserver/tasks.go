package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The task tools take the domain's argument types directly (task.*Input
// carry the JSON names and schema descriptions): validate_task_payload
// then lints exactly what these tools decode.

type taskIDIn struct {
	TaskID string `json:"taskId"`
}

func (s *server) addTaskTools(m *mcp.Server) {
	c := s.opts.Tasks
	add(s, m, tool{Name: "create_task", Core: true, Annotations: write,
		Limits: limits{
			"title": maxLen(vp.MaxTaskTitleBytes), "description": maxLen(vp.MaxTaskDescriptionBytes),
			"project": maxLen(vp.MaxProjectBytes), "tags": maxItems(vp.MaxTags), "tags[]": maxLen(vp.MaxTagBytes),
			"assignedTo": maxLen(vp.MaxNameBytes), "assignedToInstance": maxLen(vp.MaxNameBytes),
			"dependsOn": maxItems(vp.MaxDependsOn), "dependsOn[]": maxLen(vp.MaxNameBytes), "missionId": maxLen(vp.MaxNameBytes),
			"estimatedMinutes": between(0, vp.MaxMinutes), "createdBy": maxLen(vp.MaxNameBytes),
		},
		Description: "Create a task for an orchestrator (status todo unless in_progress). dependsOn tasks must be done before it starts; " +
			"missionId files it under a mission. Example: {\"title\":\"Fix login redirect (#142)\",\"assignedTo\":\"bob\",\"priority\":\"high\"}"},
		c.CreateTask)

	add(s, m, tool{Name: "get_task", Core: true, Annotations: readOnly,
		Limits:      limits{"taskId": maxLen(vp.MaxNameBytes)},
		Description: "Fetch one task with every field (work segments, dependsOn, completion note). Example: {\"taskId\":\"tsk_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in taskIDIn) (vp.Task, error) {
			return c.GetTask(ctx, p, task.TaskRef{TaskID: in.TaskID})
		})

	add(s, m, tool{Name: "list_tasks", Core: true, Annotations: readOnly,
		Limits: limits{"project": maxLen(vp.MaxProjectBytes), "limit": between(1, listing.MaxLimit)},
		Description: "List tasks, newest-updated first, by assignee, status (value, array, or open|active|all), project, missionId, creator, updatedSince. " +
			"Paginated {items, nextCursor?}; fields lite keeps title/status/priority/assignedTo/missionId. " +
			"Example: {\"assignedTo\":\"bob\",\"status\":\"open\",\"fields\":\"lite\"}"},
		c.ListTasks)

	add(s, m, tool{Name: "list_tasks_by_mission", Annotations: readOnly,
		Description: "List one mission's tasks in step order, optionally by status or creator. Paginated like list_tasks. " +
			"Example: {\"missionId\":\"msn_01jd...\",\"status\":\"open\"}"},
		c.ListTasksByMission)

	add(s, m, tool{Name: "update_task", Core: true, Annotations: write,
		Limits: limits{
			"title": maxLen(vp.MaxTaskTitleBytes), "description": maxLen(vp.MaxTaskDescriptionBytes),
			"project": maxLen(vp.MaxProjectBytes), "tags": maxItems(vp.MaxTags), "tags[]": maxLen(vp.MaxTagBytes),
			"assignedTo": maxLen(vp.MaxNameBytes), "assignedToInstance": maxLen(vp.MaxNameBytes),
			"dependsOn": maxItems(vp.MaxDependsOn), "dependsOn[]": maxLen(vp.MaxNameBytes), "missionId": maxLen(vp.MaxNameBytes),
			"estimatedMinutes": between(0, vp.MaxMinutes), "taskId": maxLen(vp.MaxNameBytes),
			"callerOrchestrator": maxLen(vp.MaxNameBytes), "cancelReason": maxLen(vp.MaxReasonBytes),
			"completionNote": maxLen(vp.MaxCompletionNoteBytes), "actualMinutes": between(0, vp.MaxMinutes),
		},
		Description: "Change any task field (creator or assignee). A status change follows the lifecycle; cancel with status cancelled + cancelReason " +
			"(creator only, never a done task). Example: {\"taskId\":\"tsk_01jd...\",\"status\":\"review\",\"completionNote\":\"PR #47 up\"}"},
		c.UpdateTask)

	add(s, m, tool{Name: "start_task", Core: true, Annotations: write,
		Limits: limits{"taskId": maxLen(vp.MaxNameBytes), "callerOrchestrator": maxLen(vp.MaxNameBytes)},
		Description: "Start work: in_progress with a new work segment (first start sets startedAt). Refused while already in progress, " +
			"for a paused task (use resume_task) or before its dependencies are done. Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.StartTask)

	add(s, m, tool{Name: "pause_task", Annotations: write,
		Description: "Step away from an in_progress task: closes the work segment (idle time is never billed), back to todo marked paused; " +
			"no one else can check it out until you resume_task. Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.PauseTask)

	add(s, m, tool{Name: "resume_task", Annotations: write,
		Description: "Reopen a task you paused: in_progress with a new work segment. Refused if it is not paused. Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.ResumeTask)

	add(s, m, tool{Name: "complete_task", Core: true, Annotations: write,
		Limits: limits{
			"taskId": maxLen(vp.MaxNameBytes), "callerOrchestrator": maxLen(vp.MaxNameBytes),
			"completionNote": maxLen(vp.MaxCompletionNoteBytes),
		},
		Description: "Mark a task done with a completion note (what was done, with proof). actualMinutes = sum of work segments; " +
			"the mission completes when this was its last open task. Example: {\"taskId\":\"tsk_01jd...\",\"completionNote\":\"Fixed in PR #47, tests pass\"}"},
		c.CompleteTask)

	add(s, m, tool{Name: "block_task", Annotations: write,
		Limits: limits{"taskId": maxLen(vp.MaxNameBytes), "reason": maxLen(vp.MaxReasonBytes)},
		Description: "Mark a task blocked, saying who or what you wait on; start_task unblocks it. " +
			"Example: {\"taskId\":\"tsk_01jd...\",\"reason\":\"waiting on design approval from bob since 2026-07-01\"}"},
		c.BlockTask)

	add(s, m, tool{Name: "add_task_dependency", Annotations: idempotent,
		Description: "Make a task wait for another: it cannot start until dependsOn is done. A cycle is refused. " +
			"Example: {\"taskId\":\"tsk_01jd...pricing\",\"dependsOn\":\"tsk_01jd...hero\"}"},
		c.AddTaskDependency)

	add(s, m, tool{Name: "checkout_task", Core: true, Annotations: write,
		Limits: limits{
			"taskId": maxLen(vp.MaxNameBytes), "callerOrchestrator": maxLen(vp.MaxNameBytes),
			"callerInstance": maxLen(vp.MaxNameBytes),
		},
		Description: "Atomically claim a todo task (safe with many instances racing): exactly one caller gets {claimed:true} and owns it in_progress; " +
			"others get {claimed:false, reason}. Example: {\"taskId\":\"tsk_01jd...\",\"callerInstance\":\"bob-laptop\"}"},
		c.CheckoutTask)

	add(s, m, tool{Name: "delete_task", Annotations: destructive,
		Description: "Permanently delete a task (creator or system). Prefer update_task status cancelled, which keeps the history. " +
			"Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.DeleteTask)

	add(s, m, tool{Name: "bulk_complete_tasks", Annotations: destructive,
		Description: "Close many open tasks at once, e.g. cron-spam. Dry run by default (preview with a per-id report); dryRun:false commits all or nothing. " +
			"filter needs autoGeneratedOnly, assignedTo or taskIds; at most 500; you must own every task unless system. " +
			"Example: {\"filter\":{\"autoGeneratedOnly\":true,\"assignedTo\":\"pi\"}}"},
		c.BulkCompleteTasks)

	add(s, m, tool{Name: "validate_task_payload", Annotations: readOnly,
		Description: "Lint the arguments of a task write tool before calling it: every failure with a fix and a corrected payload. Writes nothing. " +
			"Example: {\"tool\":\"create_task\",\"arguments\":{\"title\":\"Fix login\",\"priority\":1}}"},
		c.ValidateTaskPayload)
}
