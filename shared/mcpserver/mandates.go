package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createMandateIn struct {
	RequestedBy        string             `json:"requestedBy,omitempty"`
	FulfilledBy        string             `json:"fulfilledBy"`
	Service            string             `json:"service"`
	Budget             float64            `json:"budget" jsonschema:"in tokens, above 0"`
	SpendingLimits     *vp.SpendingLimits `json:"spendingLimits,omitempty" jsonschema:"AP2 limits"`
	ApprovedCategories []string           `json:"approvedCategories,omitempty" jsonschema:"spending categories, e.g. seo"`
}

type mandateIDIn struct {
	MandateID string `json:"mandateId"`
}

type acceptMandateIn struct {
	MandateID          string `json:"mandateId"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

type updateMandateIn struct {
	MandateID          string             `json:"mandateId"`
	CallerOrchestrator string             `json:"callerOrchestrator,omitempty"`
	Status             string             `json:"status,omitempty" jsonschema:"in_progress|delivered"`
	Service            *string            `json:"service,omitempty"`
	FulfilledBy        *string            `json:"fulfilledBy,omitempty" jsonschema:"only while requested"`
	Budget             *float64           `json:"budget,omitempty"`
	SpendingLimits     *vp.SpendingLimits `json:"spendingLimits,omitempty" jsonschema:"replaced whole"`
	ApprovedCategories []string           `json:"approvedCategories,omitempty" jsonschema:"replaced whole; [] clears"`
}

type settleMandateIn struct {
	MandateID          string  `json:"mandateId"`
	FinalCost          float64 `json:"finalCost" jsonschema:"in tokens, at most the budget"`
	CallerOrchestrator string  `json:"callerOrchestrator,omitempty"`
}

type validateSpendingIn struct {
	MandateID      string  `json:"mandateId"`
	ProposedAmount float64 `json:"proposedAmount" jsonschema:"in tokens"`
	Category       string  `json:"category,omitempty"`
}

type listMandatesIn struct {
	listing.Params
	RequestedBy string `json:"requestedBy,omitempty"`
	FulfilledBy string `json:"fulfilledBy,omitempty"`
	Status      string `json:"status,omitempty" jsonschema:"requested|accepted|in_progress|delivered|settled"`
}

// MandateTools are the tools of the mandates over c; none when c is nil.
func MandateTools(c *mandate.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addMandateTools(m, c) }}
}

func (s *server) addMandateTools(m *mcp.Server, c *mandate.Service) {
	add(s, m, tool{Name: "create_mandate", Title: "Create mandate", Annotations: write,
		Limits:      mandate.CreateMandateInput{}.Limits(),
		Description: "Ask another orchestrator for a service within a token budget: requested, accepted, in_progress, delivered, settled. Example: {\"fulfilledBy\":\"alice\",\"service\":\"Landing page\",\"budget\":100000}"},
		func(ctx context.Context, p vp.Principal, in createMandateIn) (vp.Mandate, error) {
			return c.CreateMandate(ctx, p, mandate.CreateMandateInput{RequestedBy: in.RequestedBy, FulfilledBy: in.FulfilledBy, Service: in.Service,
				Budget: in.Budget, SpendingLimits: in.SpendingLimits, ApprovedCategories: in.ApprovedCategories})
		})

	add(s, m, tool{Name: "accept_mandate", Title: "Accept mandate", Annotations: write,
		Description: "Accept a requested mandate as its fulfiller (one accept wins). Example: {\"mandateId\":\"mnd_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in acceptMandateIn) (vp.Mandate, error) {
			return c.AcceptMandate(ctx, p, in.MandateID, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "update_mandate", Title: "Update mandate", Annotations: write,
		Limits: mandate.UpdateMandateInput{}.Limits(),
		Description: "The fulfiller sets status in_progress, then delivered; the requester changes the other fields. " +
			"Example: {\"mandateId\":\"mnd_01jd...\",\"status\":\"in_progress\"}"},
		func(ctx context.Context, p vp.Principal, in updateMandateIn) (vp.Mandate, error) {
			return c.UpdateMandate(ctx, p, mandate.UpdateMandateInput{MandateID: in.MandateID, Caller: in.CallerOrchestrator, Status: in.Status,
				Service: in.Service, FulfilledBy: in.FulfilledBy, Budget: in.Budget, SpendingLimits: in.SpendingLimits, ApprovedCategories: in.ApprovedCategories})
		})

	add(s, m, tool{Name: "settle_mandate", Title: "Settle mandate", Annotations: write,
		Description: "Close a delivered mandate with its final cost (requester only). Example: {\"mandateId\":\"mnd_01jd...\",\"finalCost\":85000}"},
		func(ctx context.Context, p vp.Principal, in settleMandateIn) (vp.Mandate, error) {
			return c.SettleMandate(ctx, p, in.MandateID, in.FinalCost, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "validate_mandate_spending", Title: "Check mandate spending", Annotations: readOnly,
		Description: "Check a spend against the budget, spending limits and approvedCategories; records nothing. " +
			"Example: {\"mandateId\":\"mnd_01jd...\",\"proposedAmount\":25000}"},
		func(ctx context.Context, p vp.Principal, in validateSpendingIn) (mandate.SpendingVerdict, error) {
			return c.ValidateMandateSpending(ctx, p, in.MandateID, in.ProposedAmount, in.Category)
		})

	add(s, m, tool{Name: "list_mandates", Title: "List mandates", Annotations: readOnly,
		Description: "List mandates, newest first. Example: {\"requestedBy\":\"bob\",\"status\":\"settled\"}"},
		func(ctx context.Context, p vp.Principal, in listMandatesIn) (listing.Page[any], error) {
			return c.ListMandates(ctx, p, mandate.ListMandatesInput{RequestedBy: in.RequestedBy, FulfilledBy: in.FulfilledBy, Status: in.Status, Params: in.Params})
		})

	add(s, m, tool{Name: "get_mandate", Title: "Get mandate", Annotations: readOnly,
		Description: "Read a mandate. Example: {\"mandateId\":\"mnd_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in mandateIDIn) (vp.Mandate, error) {
			return c.GetMandate(ctx, p, in.MandateID)
		})
}
