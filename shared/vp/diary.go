package vp

// DiaryDateLayout is the form of a diary date: an ISO 8601 calendar date.
const DiaryDateLayout = "2006-01-02"

// Limits of a diary entry.
const (
	MaxDiaryContentBytes = 64 << 10 // the narrative of one day
	MaxDiaryListItems    = 100      // highlights, blockers
	MaxDiaryItemBytes    = 2 << 10  // one highlight or blocker
)

// DiaryEntry is an orchestrator's journal for one day. (orchestrator, date)
// is unique: writing the same day again overwrites the entry in place,
// keeping its _id and createdAt.
type DiaryEntry struct {
	ID           string   `json:"_id"`
	CreationTime int64    `json:"_creationTime"`
	Date         string   `json:"date"`
	Orchestrator string   `json:"orchestrator"`
	InstanceID   string   `json:"instanceId,omitempty"`
	Content      string   `json:"content"`
	Highlights   []string `json:"highlights,omitempty"`
	Blockers     []string `json:"blockers,omitempty"`
	CreatedAt    int64    `json:"createdAt"`
	UpdatedAt    int64    `json:"updatedAt"`
}
