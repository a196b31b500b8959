package vp

// Task statuses. A task moves todo → in_progress → review → done, may be
// blocked on the way, and may be cancelled (by its creator, with a reason)
// from any status but done. "Paused" is not a status: a paused task is todo
// with Paused set (see pause_task).
const (
	TaskTodo       = "todo"
	TaskInProgress = "in_progress"
	TaskReview     = "review"
	TaskBlocked    = "blocked"
	TaskDone       = "done"
	TaskCancelled  = "cancelled"
)

// TaskStatuses lists every task status.
var TaskStatuses = []string{TaskTodo, TaskInProgress, TaskReview, TaskBlocked, TaskDone, TaskCancelled}

// Priorities are the priority levels of tasks and missions.
var Priorities = []string{"urgent", "high", "medium", "low"}

// Limits on task fields. They keep one task item small enough that a
// transaction of 100 tasks stays under the store's 4 MB bound.
const (
	MaxTaskTitleBytes       = 512
	MaxTaskDescriptionBytes = 16 << 10
	MaxCompletionNoteBytes  = 8 << 10
	MaxReasonBytes          = 2 << 10 // blockedBy, cancelReason
	MaxProjectBytes         = 512
	MaxTags                 = 32
	MaxTagBytes             = 64
	MaxDependsOn            = 50
	MaxWorkSegments         = 100
)

// WorkSegment is one stretch of work on a task: opened when the task goes
// in_progress, closed when it leaves that status. End is nil while open.
type WorkSegment struct {
	Start int64  `json:"start"`
	End   *int64 `json:"end,omitempty"`
}

// Task is one unit of work assigned to an orchestrator.
type Task struct {
	ID                 string   `json:"_id"`
	CreationTime       int64    `json:"_creationTime"`
	Title              string   `json:"title"`
	Description        string   `json:"description,omitempty"`
	Project            string   `json:"project,omitempty"`
	Tags               []string `json:"tags,omitempty"`
	AssignedTo         string   `json:"assignedTo"`
	AssignedToInstance string   `json:"assignedToInstance,omitempty"`
	Priority           string   `json:"priority"`
	Status             string   `json:"status"`
	// Paused marks a todo task whose owner stepped away (pause_task): only
	// resume_task restarts it and checkout_task refuses it.
	Paused           bool     `json:"paused,omitempty"`
	DependsOn        []string `json:"dependsOn,omitempty"`
	MissionID        string   `json:"missionId,omitempty"`
	EstimatedMinutes *float64 `json:"estimatedMinutes,omitempty"`
	ActualMinutes    *float64 `json:"actualMinutes,omitempty"`
	// ActualMinutesInferred: actualMinutes is startedAt→completedAt because
	// the task has no recorded work segments, not a measured sum.
	ActualMinutesInferred bool          `json:"actualMinutesInferred,omitempty"`
	StartedAt             *int64        `json:"startedAt,omitempty"`
	CompletedAt           *int64        `json:"completedAt,omitempty"`
	DueDate               *int64        `json:"dueDate,omitempty"`
	CompletionNote        string        `json:"completionNote,omitempty"`
	BlockedBy             string        `json:"blockedBy,omitempty"`
	CancelReason          string        `json:"cancelReason,omitempty"`
	CreatedBy             string        `json:"createdBy"`
	UpdatedAt             int64         `json:"updatedAt"`
	WorkSegments          []WorkSegment `json:"workSegments,omitempty"`
}

// OpenSegment returns the index of the open work segment, or -1.
func (t Task) OpenSegment() int {
	if n := len(t.WorkSegments); n > 0 && t.WorkSegments[n-1].End == nil {
		return n - 1
	}
	return -1
}
