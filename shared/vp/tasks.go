package vp

// Task statuses. A task moves todo → in_progress → review → done, may be
// blocked on the way, may be cancelled (by its creator, with a reason)
// from any status but done, and may fail (fail_task: its creator or
// assignee gives up on it, with a reason) from any open status. done,
// cancelled and failed are final. "Paused" is not a status: a paused task
// is todo with Paused set (see pause_task).
const (
	TaskTodo       = "todo"
	TaskInProgress = "in_progress"
	TaskReview     = "review"
	TaskBlocked    = "blocked"
	TaskDone       = "done"
	TaskCancelled  = "cancelled"
	TaskFailed     = "failed"
)

// TaskStatuses lists every task status.
var TaskStatuses = []string{TaskTodo, TaskInProgress, TaskReview, TaskBlocked, TaskDone, TaskCancelled, TaskFailed}

// BlockedCauses are the kinds of wait block_task may name (blockedCause):
// on another task, on a review, on an answer to a question, on something
// outside the team, or anything else. The free-text reason says the rest.
var BlockedCauses = []string{"dependency", "review", "question", "external", "other"}

// Priorities are the priority levels of tasks and missions.
var Priorities = []string{"urgent", "high", "medium", "low"}

// Limits on task fields. They keep one task item small enough that a
// transaction of 100 tasks stays under the store's 4 MB bound.
const (
	MaxTaskTitleBytes       = 512
	MaxTaskDescriptionBytes = 16 << 10
	MaxCompletionNoteBytes  = 8 << 10
	MaxReasonBytes          = 2 << 10 // blockedBy, cancelReason, failReason
	MaxProjectBytes         = 512
	MaxTags                 = 32
	MaxTagBytes             = 64
	MaxDependsOn            = 50
	MaxWorkSegments         = 100
	MaxWaitedOnBy           = 50
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
	BlockedCause          string        `json:"blockedCause,omitempty"` // one of BlockedCauses, with BlockedBy
	CancelReason          string        `json:"cancelReason,omitempty"`
	FailReason            string        `json:"failReason,omitempty"`
	FailedAt              *int64        `json:"failedAt,omitempty"`
	CreatedBy             string        `json:"createdBy"`
	UpdatedAt             int64         `json:"updatedAt"`
	WorkSegments          []WorkSegment `json:"workSegments,omitempty"`
	// WaitedOnBy lists tasks that depend on this one (the newest
	// MaxWaitedOnBy), written when they name it: what check_messages reads
	// to tell an agent who waits on its work. An entry may be stale (the
	// dependent finished or dropped the dependency); readers check it.
	WaitedOnBy []string `json:"waitedOnBy,omitempty"`
}

// OpenSegment returns the index of the open work segment, or -1.
func (t Task) OpenSegment() int {
	if n := len(t.WorkSegments); n > 0 && t.WorkSegments[n-1].End == nil {
		return n - 1
	}
	return -1
}
