package vp

// Mandate statuses, in lifecycle order: requested → accepted → in_progress →
// delivered → settled.
const (
	MandateRequested  = "requested"
	MandateAccepted   = "accepted"
	MandateInProgress = "in_progress"
	MandateDelivered  = "delivered"
	MandateSettled    = "settled"
)

// MandateStatuses lists every mandate status in lifecycle order.
var MandateStatuses = []string{MandateRequested, MandateAccepted, MandateInProgress, MandateDelivered, MandateSettled}

// Mandate is a formal service request from one orchestrator to another with
// an agreed budget (in tokens) and optional AP2 spending limits.
type Mandate struct {
	ID                 string          `json:"_id"`
	CreationTime       int64           `json:"_creationTime"`
	RequestedBy        string          `json:"requestedBy"`
	FulfilledBy        string          `json:"fulfilledBy"`
	Service            string          `json:"service"`
	Budget             float64         `json:"budget"`
	SpendingLimits     *SpendingLimits `json:"spendingLimits,omitempty"`
	ApprovedCategories []string        `json:"approvedCategories,omitempty"`
	Status             string          `json:"status"`
	AcceptedBy         string          `json:"acceptedBy,omitempty"`
	AcceptedAt         int64           `json:"acceptedAt,omitempty"`
	StartedAt          int64           `json:"startedAt,omitempty"`
	DeliveredAt        int64           `json:"deliveredAt,omitempty"`
	FinalCost          *float64        `json:"finalCost,omitempty"`
	SettledBy          string          `json:"settledBy,omitempty"`
	SettledAt          int64           `json:"settledAt,omitempty"`
	UpdatedAt          int64           `json:"updatedAt"`
}

// SpendingLimits are a mandate's AP2 limits: the most one transaction may
// spend, and the most spent over a period of PeriodDays days.
type SpendingLimits struct {
	MaxPerTransaction float64 `json:"maxPerTransaction"`
	MaxPerPeriod      float64 `json:"maxPerPeriod" jsonschema:"over periodDays"`
	PeriodDays        float64 `json:"periodDays" jsonschema:"whole days"`
}
