package vp

// BUStatuses are the stages of a business unit. Any stage may follow any
// other (a unit can be shelved back to idea); the spec names no transitions.
var BUStatuses = []string{"idea", "building", "live", "revenue"}

// Business unit defaults and limits.
const (
	DefaultBUStatus      = "idea"
	DefaultManagementFee = 10.0     // percent
	MaxBUTextBytes       = 16 << 10 // description, purpose, business model, target customers, pricing
	MaxBUListItems       = 200      // services, and each core-team list
	MaxBUServiceBytes    = 2 << 10
)

// RevenueProjections are the revenue targets of the first three years.
type RevenueProjections struct {
	A1 float64 `json:"A1"`
	A2 float64 `json:"A2"`
	A3 float64 `json:"A3"`
}

// CoreTeam names the components a business unit runs on.
type CoreTeam struct {
	Agents  []string `json:"agents,omitempty"`
	Skills  []string `json:"skills,omitempty"`
	Hooks   []string `json:"hooks,omitempty"`
	Plugins []string `json:"plugins,omitempty"`
}

// BusinessUnit is an organisational unit with its strategy, offer, pricing
// and revenue targets, led by one orchestrator.
type BusinessUnit struct {
	ID                 string             `json:"_id"`
	CreationTime       int64              `json:"_creationTime"`
	Name               string             `json:"name"`
	Description        string             `json:"description"`
	Purpose            string             `json:"purpose"`
	Domain             string             `json:"domain,omitempty"`
	OrchestratorID     string             `json:"orchestratorId"`
	Status             string             `json:"status"`
	BusinessModel      string             `json:"businessModel"`
	TargetCustomers    string             `json:"targetCustomers"`
	Services           []string           `json:"services"`
	Pricing            string             `json:"pricing"`
	RevenueProjections RevenueProjections `json:"revenueProjections"`
	CoreTeam           CoreTeam           `json:"coreTeam"`
	ManagementFee      float64            `json:"managementFee"`
	CreatedBy          string             `json:"createdBy"`
	CreatedAt          int64              `json:"createdAt"`
	UpdatedAt          int64              `json:"updatedAt,omitempty"`
	UpdatedBy          string             `json:"updatedBy,omitempty"`
}
