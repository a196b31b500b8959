package vp

// Mission statuses. The pilot moves a mission between the open stages
// (brainstorm, plan, execute, validate) in any order; complete and cancelled
// are final. A mission also completes by itself when all its non-cancelled
// tasks are done.
const (
	MissionBrainstorm = "brainstorm"
	MissionPlan       = "plan"
	MissionExecute    = "execute"
	MissionValidate   = "validate"
	MissionComplete   = "complete"
	MissionCancelled  = "cancelled"
)

// MissionStatuses lists every mission status.
var MissionStatuses = []string{MissionBrainstorm, MissionPlan, MissionExecute, MissionValidate, MissionComplete, MissionCancelled}

// Limits on missions and templates.
const (
	MaxMissionNameBytes  = 512
	MaxMissionTextBytes  = 16 << 10 // description, brief
	MaxMissionAgents     = 50
	MaxTemplateNameBytes = 64
	// MaxTemplateSteps: a template is instantiated in one transaction of at
	// most 100 operations — one task and one mission link per step, plus a
	// check on the mission.
	MaxTemplateSteps      = 49
	MaxTemplateContext    = 50
	MaxContextValueBytes  = 4 << 10
	MaxTitlePrefixBytes   = 128
	MaxTemplateStepsBytes = 128 << 10
)

// Mission groups tasks under a pilot and a lifecycle stage.
type Mission struct {
	ID           string   `json:"_id"`
	CreationTime int64    `json:"_creationTime"`
	Name         string   `json:"name"`
	Description  string   `json:"description,omitempty"`
	Project      string   `json:"project"`
	Status       string   `json:"status"`
	Priority     string   `json:"priority"`
	Pilot        string   `json:"pilot"`
	Agents       []string `json:"agents"`
	Brief        string   `json:"brief,omitempty"`
	StartDate    *int64   `json:"startDate,omitempty"`
	TargetDate   *int64   `json:"targetDate,omitempty"`
	// Progress is the pilot's own estimate, 0-100; never computed.
	Progress     *int   `json:"progress,omitempty"`
	TemplateID   string `json:"templateId,omitempty"`
	CreatedBy    string `json:"createdBy"`
	CancelReason string `json:"cancelReason,omitempty"`
	CompletedAt  *int64 `json:"completedAt,omitempty"`
	// AutoCompleted: the mission completed because its last open task did.
	AutoCompleted bool  `json:"autoCompleted,omitempty"`
	UpdatedAt     int64 `json:"updatedAt"`
}

// TemplateStep is one task of a mission template. DependsOn names earlier
// steps by their 0-based index.
type TemplateStep struct {
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Tags        []string `json:"tags,omitempty"`
	AssignedTo  string   `json:"assignedTo,omitempty"`
	DependsOn   []int    `json:"dependsOn,omitempty"`
}

// MissionTemplate is a named, ordered list of steps that
// instantiate_template_into_mission turns into tasks.
type MissionTemplate struct {
	ID           string         `json:"_id"`
	CreationTime int64          `json:"_creationTime"`
	Name         string         `json:"name"`
	Description  string         `json:"description"`
	Steps        []TemplateStep `json:"steps"`
	IsDefault    bool           `json:"isDefault"`
	CreatedBy    string         `json:"createdBy"`
	UpdatedAt    int64          `json:"updatedAt"`
}
