package vp

// Limits of a briefing note.
const (
	MaxBriefingContentBytes = 64 << 10 // the note's body
	MaxBriefingListItems    = 100      // participants, decisions, linked memories
	MaxBriefingItemBytes    = 2 << 10  // one decision
)

// BriefingNote is a structured hand-off between sessions or orchestrators:
// who was there, what was said, what was decided. It has no lifecycle; only
// its creator (or system) may change it.
type BriefingNote struct {
	ID              string   `json:"_id"`
	CreationTime    int64    `json:"_creationTime"`
	Title           string   `json:"title"`
	Topic           string   `json:"topic"`
	Participants    []string `json:"participants"`
	Content         string   `json:"content"`
	Decisions       []string `json:"decisions,omitempty"`
	LinkedMemoryIDs []string `json:"linkedMemoryIds,omitempty"`
	CreatedBy       string   `json:"createdBy"`
	CreatedAt       int64    `json:"createdAt"`
	UpdatedAt       int64    `json:"updatedAt,omitempty"`
	UpdatedBy       string   `json:"updatedBy,omitempty"`
}
