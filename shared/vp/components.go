package vp

// ComponentTypes are the kinds of component the registry holds.
var ComponentTypes = []string{"agent", "skill", "hook", "plugin"}

// Limits of a component.
const (
	MaxComponentNameBytes    = 200
	MaxComponentContentBytes = 256 << 10 // the file itself; its JSON form must also fit one stored item
	// MaxComponentHistory is how many previous revisions of a component are
	// kept (each in its own item); older ones are dropped as new ones come.
	MaxComponentHistory = 50
)

// Component is one registered agent, skill, hook or plugin with the full
// content of its file: an inventory entry and a byte-exact backup. (name,
// type) is unique in a tenant. Every update bumps Revision and keeps the
// previous revision as a history item.
type Component struct {
	ID           string `json:"_id"`
	CreationTime int64  `json:"_creationTime"`
	Name         string `json:"name"`
	Type         string `json:"type"`
	Team         string `json:"team,omitempty"`
	Project      string `json:"project,omitempty"`
	Version      string `json:"version,omitempty"`
	Content      string `json:"content"`
	// ContentHash is the SHA-256 of Content, hex: compare it with a local
	// file's before restoring or re-registering.
	ContentHash string `json:"contentHash"`
	Revision    int    `json:"revision"`
	CreatedBy   string `json:"createdBy"`
	CreatedAt   int64  `json:"createdAt"`
	UpdatedAt   int64  `json:"updatedAt,omitempty"`
	UpdatedBy   string `json:"updatedBy,omitempty"`
}
