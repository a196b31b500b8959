package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createRecurringIn struct {
	Title          string `json:"title" jsonschema:"title of each task created"`
	Description    string `json:"description,omitempty" jsonschema:"description of each task created"`
	AssignedTo     string `json:"assignedTo" jsonschema:"orchestrator each task is assigned to"`
	Priority       string `json:"priority" jsonschema:"urgent, high, medium or low"`
	CronExpression string `json:"cronExpression" jsonschema:"5 fields: minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5"`
	Timezone       string `json:"timezone,omitempty" jsonschema:"IANA time zone the cron is read in, e.g. Europe/Paris; default UTC"`
	Project        string `json:"project,omitempty" jsonschema:"project of each task created"`
	CreatedBy      string `json:"createdBy,omitempty" jsonschema:"defaults to you"`
}

type recurringIDIn struct {
	RecurringTaskID string `json:"recurringTaskId" jsonschema:"the template's _id"`
}

type recurringCallerIn struct {
	RecurringTaskID    string `json:"recurringTaskId" jsonschema:"the template's _id"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty" jsonschema:"who acts: creator, assignee or system (delete: creator or system); defaults to you"`
}

type updateRecurringIn struct {
	RecurringTaskID    string  `json:"recurringTaskId" jsonschema:"the template's _id"`
	CallerOrchestrator string  `json:"callerOrchestrator,omitempty" jsonschema:"creator, assignee or system; defaults to you"`
	Title              *string `json:"title,omitempty"`
	Description        *string `json:"description,omitempty"`
	AssignedTo         *string `json:"assignedTo,omitempty"`
	Priority           *string `json:"priority,omitempty" jsonschema:"urgent, high, medium or low"`
	CronExpression     *string `json:"cronExpression,omitempty" jsonschema:"new schedule; the next run is recomputed from now"`
	Timezone           *string `json:"timezone,omitempty" jsonschema:"new IANA time zone"`
	Project            *string `json:"project,omitempty"`
}

func (s *server) addRecurringTools(m *mcp.Server) {
	c := s.opts.Recurring
	add(s, m, tool{Name: "create_recurring_task", Annotations: write,
		Limits: limits{
			"title": maxLen(vp.MaxTaskTitleBytes), "description": maxLen(vp.MaxTaskDescriptionBytes),
			"project": maxLen(vp.MaxProjectBytes), "assignedTo": maxLen(vp.MaxNameBytes),
			"cronExpression": maxLen(recurring.MaxCronBytes), "timezone": maxLen(recurring.MaxTimezoneBytes),
		},
		Description: "Define a template that creates a todo task on a cron schedule (standard 5 fields, read in timezone, default UTC). " +
			"Example: {\"title\":\"Daily standup report\",\"assignedTo\":\"carol\",\"priority\":\"medium\",\"cronExpression\":\"0 9 * * 1-5\",\"timezone\":\"Europe/Paris\"}"},
		func(ctx context.Context, p vp.Principal, in createRecurringIn) (vp.RecurringTask, error) {
			return c.CreateRecurringTask(ctx, p, recurring.CreateRecurringInput{Title: in.Title, Description: in.Description, AssignedTo: in.AssignedTo,
				Priority: in.Priority, CronExpression: in.CronExpression, Timezone: in.Timezone, Project: in.Project, CreatedBy: in.CreatedBy})
		})

	add(s, m, tool{Name: "get_recurring_task", Annotations: readOnly,
		Description: "Read one recurring task template with its next run (nextRunAt) and last fired task. Example: {\"recurringTaskId\":\"rec_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in recurringIDIn) (vp.RecurringTask, error) {
			return c.GetRecurringTask(ctx, p, in.RecurringTaskID)
		})

	add(s, m, tool{Name: "list_recurring_tasks", Annotations: readOnly,
		Description: "List recurring task templates, newest first. Paginated: {items, nextCursor?}. Example: {\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listing.Params) (listing.Page[any], error) {
			return c.ListRecurringTasks(ctx, p, in)
		})

	add(s, m, tool{Name: "update_recurring_task", Annotations: write,
		Limits: limits{
			"title": maxLen(vp.MaxTaskTitleBytes), "description": maxLen(vp.MaxTaskDescriptionBytes),
			"project": maxLen(vp.MaxProjectBytes), "assignedTo": maxLen(vp.MaxNameBytes),
			"cronExpression": maxLen(recurring.MaxCronBytes), "timezone": maxLen(recurring.MaxTimezoneBytes),
		},
		Description: "Change a recurring task template; a new cronExpression or timezone reschedules it from now. " +
			"Example: {\"recurringTaskId\":\"rec_01jd...\",\"cronExpression\":\"0 8 * * 1-5\"}"},
		func(ctx context.Context, p vp.Principal, in updateRecurringIn) (vp.RecurringTask, error) {
			return c.UpdateRecurringTask(ctx, p, recurring.UpdateRecurringInput{RecurringTaskID: in.RecurringTaskID, Caller: in.CallerOrchestrator,
				Title: in.Title, Description: in.Description, AssignedTo: in.AssignedTo, Priority: in.Priority,
				CronExpression: in.CronExpression, Timezone: in.Timezone, Project: in.Project})
		})

	add(s, m, tool{Name: "delete_recurring_task", Annotations: destructive,
		Description: "Delete a recurring task template; the tasks it already created are kept. Example: {\"recurringTaskId\":\"rec_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in recurringCallerIn) (recurring.DeleteRecurringResult, error) {
			return c.DeleteRecurringTask(ctx, p, in.RecurringTaskID, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "pause_recurring_task", Annotations: write,
		Description: "Pause a recurring task template: it creates no task until resumed. Example: {\"recurringTaskId\":\"rec_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in recurringCallerIn) (vp.RecurringTask, error) {
			return c.PauseRecurringTask(ctx, p, in.RecurringTaskID, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "resume_recurring_task", Annotations: write,
		Description: "Resume a paused template from its next slot after now (slots passed while paused are skipped). " +
			"Example: {\"recurringTaskId\":\"rec_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in recurringCallerIn) (vp.RecurringTask, error) {
			return c.ResumeRecurringTask(ctx, p, in.RecurringTaskID, in.CallerOrchestrator)
		})
}
