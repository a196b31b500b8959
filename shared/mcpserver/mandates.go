package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createMandateIn struct {
	RequestedBy        string             `json:"requestedBy,omitempty" jsonschema:"who asks for the service; defaults to you"`
	FulfilledBy        string             `json:"fulfilledBy" jsonschema:"the orchestrator asked to do the work"`
	Service            string             `json:"service" jsonschema:"what is requested (at most 512 bytes)"`
	Budget             float64            `json:"budget" jsonschema:"agreed budget in tokens, greater than 0"`
	SpendingLimits     *vp.SpendingLimits `json:"spendingLimits,omitempty" jsonschema:"AP2 limits: maxPerTransaction, maxPerPeriod over periodDays"`
	ApprovedCategories []string           `json:"approvedCategories,omitempty" jsonschema:"spending categories allowed, e.g. seo, content"`
}

type mandateIDIn struct {
	MandateID string `json:"mandateId" jsonschema:"the mandate's _id"`
}

type acceptMandateIn struct {
	MandateID          string `json:"mandateId" jsonschema:"the mandate to accept"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty" jsonschema:"who accepts: the fulfiller or system; defaults to you"`
}

type updateMandateIn struct {
	MandateID          string             `json:"mandateId" jsonschema:"the mandate to update"`
	CallerOrchestrator string             `json:"callerOrchestrator,omitempty" jsonschema:"who updates; defaults to you"`
	Status             string             `json:"status,omitempty" jsonschema:"in_progress or delivered (the fulfiller's); accept and settle have their own tools"`
	Service            *string            `json:"service,omitempty" jsonschema:"new service text (requester)"`
	FulfilledBy        *string            `json:"fulfilledBy,omitempty" jsonschema:"new fulfiller, only while requested (requester)"`
	Budget             *float64           `json:"budget,omitempty" jsonschema:"new budget (requester)"`
	SpendingLimits     *vp.SpendingLimits `json:"spendingLimits,omitempty" jsonschema:"new AP2 limits, replaced whole (requester)"`
	ApprovedCategories []string           `json:"approvedCategories,omitempty" jsonschema:"new approved categories, replaced whole; [] clears (requester)"`
}

type settleMandateIn struct {
	MandateID          string  `json:"mandateId" jsonschema:"the delivered mandate to settle"`
	FinalCost          float64 `json:"finalCost" jsonschema:"actual cost in tokens, at most the budget"`
	CallerOrchestrator string  `json:"callerOrchestrator,omitempty" jsonschema:"who settles: the requester or system; defaults to you"`
}

type validateSpendingIn struct {
	MandateID      string  `json:"mandateId" jsonschema:"the mandate to spend on"`
	ProposedAmount float64 `json:"proposedAmount" jsonschema:"the amount you intend to spend, in tokens"`
	Category       string  `json:"category,omitempty" jsonschema:"spending category, checked against approvedCategories"`
}

type listMandatesIn struct {
	listing.Params
	RequestedBy string `json:"requestedBy,omitempty" jsonschema:"only mandates requested by this orchestrator"`
	FulfilledBy string `json:"fulfilledBy,omitempty" jsonschema:"only mandates fulfilled by this orchestrator"`
	Status      string `json:"status,omitempty" jsonschema:"requested, accepted, in_progress, delivered or settled"`
}

func (s *server) addMandateTools(m *mcp.Server) {
	c := s.opts.Mandates
	add(s, m, tool{Name: "create_mandate", Annotations: write,
		Limits: limits{
			"service": maxLen(vp.MaxShortTextBytes), "fulfilledBy": maxLen(vp.MaxNameBytes),
			"approvedCategories": maxItems(mandate.MaxApprovedCategories), "approvedCategories[]": maxLen(vp.MaxShortTextBytes),
			"budget": between(0, mandate.MaxMandateAmount), "spendingLimits.periodDays": between(1, mandate.MaxMandatePeriodDays),
			"requestedBy": maxLen(vp.MaxNameBytes),
		},
		Description: "Request a service from another orchestrator with a token budget and optional AP2 spending limits; the mandate starts " +
			"'requested' and moves requested→accepted→in_progress→delivered→settled. " +
			"Example: {\"fulfilledBy\":\"alice\",\"service\":\"Build landing page\",\"budget\":100000}"},
		func(ctx context.Context, p vp.Principal, in createMandateIn) (vp.Mandate, error) {
			return c.CreateMandate(ctx, p, mandate.CreateMandateInput{RequestedBy: in.RequestedBy, FulfilledBy: in.FulfilledBy, Service: in.Service,
				Budget: in.Budget, SpendingLimits: in.SpendingLimits, ApprovedCategories: in.ApprovedCategories})
		})

	add(s, m, tool{Name: "accept_mandate", Annotations: write,
		Description: "Accept a requested mandate as its fulfiller (only one accept ever wins). " +
			"Example: {\"mandateId\":\"mnd_01jd...\",\"callerOrchestrator\":\"alice\"}"},
		func(ctx context.Context, p vp.Principal, in acceptMandateIn) (vp.Mandate, error) {
			return c.AcceptMandate(ctx, p, in.MandateID, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "update_mandate", Annotations: write,
		Limits: limits{
			"service": maxLen(vp.MaxShortTextBytes), "fulfilledBy": maxLen(vp.MaxNameBytes),
			"approvedCategories": maxItems(mandate.MaxApprovedCategories), "approvedCategories[]": maxLen(vp.MaxShortTextBytes),
			"budget": between(0, mandate.MaxMandateAmount), "spendingLimits.periodDays": between(1, mandate.MaxMandatePeriodDays),
		},
		Description: "Move a mandate along (fulfiller: status in_progress, then delivered) or change its terms (requester: service, budget, " +
			"limits, categories). Example: {\"mandateId\":\"mnd_01jd...\",\"status\":\"in_progress\"}"},
		func(ctx context.Context, p vp.Principal, in updateMandateIn) (vp.Mandate, error) {
			return c.UpdateMandate(ctx, p, mandate.UpdateMandateInput{MandateID: in.MandateID, Caller: in.CallerOrchestrator, Status: in.Status,
				Service: in.Service, FulfilledBy: in.FulfilledBy, Budget: in.Budget, SpendingLimits: in.SpendingLimits, ApprovedCategories: in.ApprovedCategories})
		})

	add(s, m, tool{Name: "settle_mandate", Annotations: write,
		Description: "Close a delivered mandate, recording its actual cost (at most the budget). Requester only. " +
			"Example: {\"mandateId\":\"mnd_01jd...\",\"finalCost\":85000,\"callerOrchestrator\":\"bob\"}"},
		func(ctx context.Context, p vp.Principal, in settleMandateIn) (vp.Mandate, error) {
			return c.SettleMandate(ctx, p, in.MandateID, in.FinalCost, in.CallerOrchestrator)
		})

	add(s, m, tool{Name: "validate_mandate_spending", Annotations: readOnly,
		Description: "Check a spend before making it: refused, with the numbers, when it exceeds the budget, maxPerTransaction or " +
			"maxPerPeriod, or its category is not approved. Records nothing. Example: {\"mandateId\":\"mnd_01jd...\",\"proposedAmount\":25000}"},
		func(ctx context.Context, p vp.Principal, in validateSpendingIn) (mandate.SpendingVerdict, error) {
			return c.ValidateMandateSpending(ctx, p, in.MandateID, in.ProposedAmount, in.Category)
		})

	add(s, m, tool{Name: "list_mandates", Annotations: readOnly,
		Description: "List mandates, newest first, by requester, fulfiller and/or status. Paginated: {items, nextCursor?}. " +
			"Example: {\"requestedBy\":\"bob\",\"status\":\"in_progress\"}"},
		func(ctx context.Context, p vp.Principal, in listMandatesIn) (listing.Page[any], error) {
			return c.ListMandates(ctx, p, mandate.ListMandatesInput{RequestedBy: in.RequestedBy, FulfilledBy: in.FulfilledBy, Status: in.Status, Params: in.Params})
		})

	add(s, m, tool{Name: "get_mandate", Annotations: readOnly,
		Description: "Read one mandate: parties, budget, limits, status and final cost. Example: {\"mandateId\":\"mnd_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in mandateIDIn) (vp.Mandate, error) {
			return c.GetMandate(ctx, p, in.MandateID)
		})
}
