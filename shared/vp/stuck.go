package vp

// StuckTask is a task as check_messages lists it: enough to act on
// (open it with get_task), not the whole record.
type StuckTask struct {
	TaskID     string `json:"taskId"`
	Title      string `json:"title"`
	Status     string `json:"status"`
	AssignedTo string `json:"assignedTo"`
	MissionID  string `json:"missionId,omitempty"`
	UpdatedAt  int64  `json:"updatedAt"`
	// IdleHours is the time since its last update, to a tenth of an hour.
	IdleHours    float64 `json:"idleHours"`
	BlockedCause string  `json:"blockedCause,omitempty"`
	BlockedBy    string  `json:"blockedBy,omitempty"` // the reason, cut to 200 bytes
	// WaitsOn names the caller's open tasks this one depends on.
	WaitsOn []string `json:"waitsOn,omitempty"`
}

// StuckWork is the stuck work of an agent: its tasks in progress without
// an update for hours, and others' open tasks that depend on its open
// ones. Truncated: a list was cut at its bound.
type StuckWork struct {
	StuckInProgress []StuckTask `json:"stuckInProgress,omitempty"`
	PeersStuckOnYou []StuckTask `json:"peersStuckOnYou,omitempty"`
	Truncated       bool        `json:"stuckTruncated,omitempty"`
}
