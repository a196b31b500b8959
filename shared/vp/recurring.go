package vp

// RecurringTask is a template that creates a new todo task on a cron
// schedule. CronExpression is a standard 5-field expression read in
// Timezone (an IANA name, UTC by default). NextRunAt is the next scheduled
// time (Unix ms); it is absent while the template is paused.
type RecurringTask struct {
	ID             string `json:"_id"`
	CreationTime   int64  `json:"_creationTime"`
	Title          string `json:"title"`
	Description    string `json:"description,omitempty"`
	AssignedTo     string `json:"assignedTo"`
	Priority       string `json:"priority"`
	CronExpression string `json:"cronExpression"`
	Timezone       string `json:"timezone"`
	Project        string `json:"project,omitempty"`
	CreatedBy      string `json:"createdBy"`
	Paused         bool   `json:"paused"`
	NextRunAt      int64  `json:"nextRunAt,omitempty"`
	// LastTriggered is when the scheduler last created a task, LastSlot the
	// scheduled time that task stood for, LastTaskID the task.
	LastTriggered int64  `json:"lastTriggered,omitempty"`
	LastSlot      int64  `json:"lastSlot,omitempty"`
	LastTaskID    string `json:"lastTaskId,omitempty"`
	// FiredCount counts the tasks created; MissedSlots the scheduled times
	// skipped because the scheduler was not running (see FireDue).
	FiredCount  int64 `json:"firedCount"`
	MissedSlots int64 `json:"missedSlots,omitempty"`
	UpdatedAt   int64 `json:"updatedAt"`
}
