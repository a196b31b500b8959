package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/uimarker"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The task tools take the domain's argument types directly (task.*Input
// carry the JSON names and schema descriptions): validate_task_payload
// then lints exactly what these tools decode.

type taskIDIn struct {
	TaskID string `json:"taskId"`
}

// TaskTools are the tools of the tasks over c; none when c is nil.
func TaskTools(c *task.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addTaskTools(m, c) }}
}

func (s *server) addTaskTools(m *mcp.Server, c *task.Service) {
	add(s, m, tool{Name: "create_task", Title: "Create task", Core: true, ResultOf: "get_task", Annotations: write,
		Limits:      task.CreateTaskInput{}.Limits(),
		Description: "Create a task for a peer (assignedTo) or yourself; it cannot start before its dependsOn tasks are done. Example: {\"title\":\"Fix login (#142)\",\"assignedTo\":\"bob\",\"priority\":\"high\"}"},
		c.CreateTask)

	add(s, m, tool{Name: "get_task", Title: "Get task", Core: true, Annotations: readOnly,
		Description: "Fetch a task with every field. Example: {\"taskId\":\"tsk_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in taskIDIn) (vp.Task, error) {
			return c.GetTask(ctx, p, task.TaskRef{TaskID: in.TaskID})
		})

	add(s, m, tool{Name: "list_tasks", Title: "List tasks", Marker: markTasks, UI: uimarker.KindTasksTable, Core: true, Annotations: readOnly,
		Limits:      task.ListTasksInput{}.Limits(),
		Description: "List tasks, last updated first; at session start, your open ones. Example: {\"assignedTo\":\"bob\",\"status\":\"open\",\"fields\":\"lite\"}"},
		c.ListTasks)

	add(s, m, tool{Name: "list_tasks_by_mission", Title: "List mission tasks", Annotations: readOnly,
		Description: "List a mission's tasks in step order. Example: {\"missionId\":\"msn_01jd...\"}"},
		c.ListTasksByMission)

	add(s, m, tool{Name: "update_task", Title: "Update task", Core: true, ResultOf: "get_task", Annotations: write,
		Limits: task.UpdateTaskInput{}.Limits(),
		Description: "Change task fields (creator or assignee); status follows the lifecycle; only the creator cancels, never a done task. " +
			"Example: {\"taskId\":\"tsk_01jd...\",\"status\":\"review\"}"},
		c.UpdateTask)

	add(s, m, tool{Name: "start_task", Title: "Start task", Core: true, ResultOf: "get_task", Annotations: write,
		Description: "Start work: in_progress with a new work segment. Refused if in progress, paused (use resume_task) " +
			"or before its dependencies are done. Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.StartTask)

	add(s, m, tool{Name: "pause_task", Title: "Pause task", Annotations: write,
		Description: "Step away from an in_progress task: its work segment closes, back to todo, paused and yours until resume_task. Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.PauseTask)

	add(s, m, tool{Name: "resume_task", Title: "Resume task", Annotations: write,
		Description: "Reopen a task you paused, with a new work segment. Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.ResumeTask)

	add(s, m, tool{Name: "complete_task", Title: "Complete task", Core: true, ResultOf: "get_task", Annotations: write,
		Limits:      task.CompleteTaskInput{}.Limits(),
		Description: "Mark a task done; actualMinutes sums its work segments; its mission completes with its last open task. Example: {\"taskId\":\"tsk_01jd...\",\"completionNote\":\"PR #47\"}"},
		c.CompleteTask)

	add(s, m, tool{Name: "block_task", Title: "Block task", Annotations: write,
		Limits:      task.BlockTaskInput{}.Limits(),
		Description: "Mark a task blocked, with a reason; start_task unblocks it. Example: {\"taskId\":\"tsk_01jd...\",\"reason\":\"awaiting bob's review\",\"blockedCause\":\"review\"}"},
		c.BlockTask)

	add(s, m, tool{Name: "fail_task", Title: "Fail task", Annotations: write,
		Limits:      task.FailTaskInput{}.Limits(),
		Description: "Give up on a task that cannot be done (creator or assignee): failed, final, with the reason; its mission will not complete by itself. Example: {\"taskId\":\"tsk_01jd...\",\"reason\":\"vendor API removed\"}"},
		c.FailTask)

	add(s, m, tool{Name: "add_task_dependency", Title: "Add task dependency", Annotations: idempotent,
		Description: "Make taskId wait until dependsOn is done; a cycle is refused. Example: {\"taskId\":\"tsk_01jd...\",\"dependsOn\":\"tsk_01je...\"}"},
		c.AddTaskDependency)

	add(s, m, tool{Name: "checkout_task", Title: "Check out task", Core: true, Annotations: write,
		Description: "Claim a todo task atomically before working on it: of racing callers one gets {claimed:true} and owns it in_progress. Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.CheckoutTask)

	add(s, m, tool{Name: "delete_task", Title: "Delete task", Annotations: destructive,
		Description: "Delete a task for good (creator or system); cancelling keeps the history. Example: {\"taskId\":\"tsk_01jd...\"}"},
		c.DeleteTask)

	add(s, m, tool{Name: "bulk_complete_tasks", Title: "Bulk complete tasks", Annotations: destructive,
		Description: "Close up to 500 open tasks (e.g. cron spam), all or nothing, by autoGeneratedOnly, assignedTo or taskIds; yours only unless system. Example: {\"filter\":{\"autoGeneratedOnly\":true}}"},
		c.BulkCompleteTasks)

	add(s, m, tool{Name: "validate_task_payload", Title: "Lint task payload", Annotations: readOnly,
		Description: "Lint a task write tool's arguments: each failure with a fix, and a corrected payload. Example: {\"tool\":\"create_task\",\"arguments\":{\"title\":\"Fix login\"}}"},
		c.ValidateTaskPayload)
}
