package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createRecurringIn struct {
	Title          string `json:"title"`
	Description    string `json:"description,omitempty"`
	AssignedTo     string `json:"assignedTo"`
	Priority       string `json:"priority" jsonschema:"urgent|high|medium|low"`
	CronExpression string `json:"cronExpression" jsonschema:"minute hour day-of-month month day-of-week"`
	Timezone       string `json:"timezone,omitempty" jsonschema:"IANA, default UTC"`
	Project        string `json:"project,omitempty"`
	CreatedBy      string `json:"createdBy,omitempty"`
}

type recurringIDIn struct {
	RecurringTaskID string `json:"recurringTaskId"`
}

type recurringCallerIn struct {
	RecurringTaskID    string `json:"recurringTaskId"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

type updateRecurringIn struct {
	RecurringTaskID    string  `json:"recurringTaskId"`
	CallerOrchestrator string  `json:"callerOrchestrator,omitempty"`
	Title              *string `json:"title,omitempty"`
	Description        *string `json:"description,omitempty"`
	AssignedTo         *string `json:"assignedTo,omitempty"`
	Priority           *string `json:"priority,omitempty" jsonschema:"urgent|high|medium|low"`
	CronExpression     *string `json:"cronExpression,omitempty"`
	Timezone           *string `json:"timezone,omitempty"`
	Project            *string `json:"project,omitempty"`
}

// RecurringTools are the tools of the recurring tasks over c; none when c is nil.
func RecurringTools(c *recurring.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addRecurringTools(m, c) }}
}

func (s *server) addRecurringTools(m *mcp.Server, c *recurring.Service) {
	add(s, m, tool{Name: "create_recurring_task", Title: "Create recurring task", Annotations: write,
		Limits:      recurring.CreateRecurringInput{}.Limits(),
		Description: "Define a template that creates a todo task on a cron schedule. Example: {\"title\":\"Standup report\",\"assignedTo\":\"carol\",\"cronExpression\":\"0 9 * * 1-5\",\"timezone\":\"Europe/Paris\"}"},
		func(ctx context.Context, p vp.Principal, in createRecurringIn) (vp.RecurringTask, error) {
			return c.CreateRecurringTask(ctx, p, recurring.CreateRecurringInput{Title: in.Title, Description: in.Description, AssignedTo: in.AssignedTo,
				Priority: in.Priority, CronExpression: in.CronExpression, Timezone: in.Timezone, Project: in.Project, CreatedBy: in.CreatedBy})
		})

	add(s, m, tool{Name: "get_recurring_task", Title: "Get recurring task", Annotations: readOnly,
		Description: "Read a recurring task template with nextRunAt and its last task. Example: {\"recurringTaskId\":\"rec_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in recurringIDIn) (vp.RecurringTask, error) {
			return c.GetRecurringTask(ctx, p, in.RecurringTaskID)
		})

	add(s, m, tool{Name: "list_recurring_tasks", Title: "List recurring tasks", Annotations: readOnly,
		Description: "List recurring task templates, newest first. Example: {\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listing.Params) (listing.Page[any], error) {
			return c.ListRecurringTasks(ctx, p, in)
		})

	add(s, m, tool{Name: "update_recurring_task", Title: "Update recurring task", Annotations: write,
		Limits:      recurring.UpdateRecurringInput{}.Limits(),
		Description: "Change a recurring task template (creator, assignee or system); a new schedule counts from now. Example: {\"recurringTaskId\":\"rec_01jd...\",\"cronExpression\":\"0 8 * * 1-5\"}"},
		func(ctx context.Context, p vp.Principal, in updateRecurringIn) (vp.RecurringTask, error) {
			return c.UpdateRecurringTask(ctx, p, recurring.UpdateRecurringInput{RecurringTaskID: in.RecurringTaskID, Caller: in.CallerOrchestrator,
				Title: in.Title, Description: in.Description, AssignedTo: in.AssignedTo, Priority: in.Priority,
				CronExpression: in.CronExpression, Timezone: in.Timezone, Project: in.Project})
		})

	add(s, m, tool{Name: "delete_recurring_task", Title: "Delete recurring task", Annotations: destructive,
		Description: "Delete a recurring task template (creator or system); its tasks stay. Example: {\"recurringTaskId\":\"rec_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in recurringCallerIn) (recurring.DeleteRecurringResult, error) {
			return c.DeleteRecurringTask(ctx, p, in.RecurringTaskID, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "pause_recurring_task", Title: "Pause recurring task", Annotations: write,
		Description: "Pause a recurring task template until resumed. Example: {\"recurringTaskId\":\"rec_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in recurringCallerIn) (vp.RecurringTask, error) {
			return c.PauseRecurringTask(ctx, p, in.RecurringTaskID, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "resume_recurring_task", Title: "Resume recurring task", Annotations: write,
		Description: "Resume a paused template from its next slot after now (missed slots skipped). Example: {\"recurringTaskId\":\"rec_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in recurringCallerIn) (vp.RecurringTask, error) {
			return c.ResumeRecurringTask(ctx, p, in.RecurringTaskID, in.CallerOrchestrator)
		})
}
