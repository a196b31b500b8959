package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/businessunit"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createBUIn struct {
	Name               string                `json:"name" jsonschema:"the unit's name, e.g. VantagePeers"`
	Description        string                `json:"description" jsonschema:"what it does"`
	Purpose            string                `json:"purpose" jsonschema:"why it exists"`
	Domain             string                `json:"domain,omitempty" jsonschema:"website domain"`
	OrchestratorID     string                `json:"orchestratorId,omitempty" jsonschema:"lead orchestrator; defaults to you"`
	Status             string                `json:"status,omitempty" jsonschema:"idea (default), building, live or revenue"`
	BusinessModel      string                `json:"businessModel" jsonschema:"how it makes money"`
	TargetCustomers    string                `json:"targetCustomers" jsonschema:"whom it serves"`
	Services           []string              `json:"services" jsonschema:"what it offers"`
	Pricing            string                `json:"pricing" jsonschema:"pricing strategy"`
	RevenueProjections vp.RevenueProjections `json:"revenueProjections" jsonschema:"revenue targets for years 1-3: {A1, A2, A3}"`
	CoreTeam           *vp.CoreTeam          `json:"coreTeam,omitempty" jsonschema:"the agents, skills, hooks and plugins it runs on"`
	ManagementFee      *float64              `json:"managementFee,omitempty" jsonschema:"commission percentage, 0-100, default 10"`
	CreatedBy          string                `json:"createdBy,omitempty" jsonschema:"creator; defaults to you"`
}

type updateBUIn struct {
	BUID               string                 `json:"buId" jsonschema:"the unit to change"`
	CallerOrchestrator string                 `json:"callerOrchestrator,omitempty" jsonschema:"who is updating: the creator, the lead or system; defaults to you"`
	Name               *string                `json:"name,omitempty"`
	Description        *string                `json:"description,omitempty"`
	Purpose            *string                `json:"purpose,omitempty"`
	Domain             *string                `json:"domain,omitempty" jsonschema:"website domain; empty clears it"`
	OrchestratorID     *string                `json:"orchestratorId,omitempty" jsonschema:"hand the lead to another orchestrator"`
	Status             *string                `json:"status,omitempty" jsonschema:"idea, building, live or revenue"`
	BusinessModel      *string                `json:"businessModel,omitempty"`
	TargetCustomers    *string                `json:"targetCustomers,omitempty"`
	Services           []string               `json:"services,omitempty" jsonschema:"replaces the services"`
	Pricing            *string                `json:"pricing,omitempty"`
	RevenueProjections *vp.RevenueProjections `json:"revenueProjections,omitempty" jsonschema:"replaces the revenue targets"`
	CoreTeam           *vp.CoreTeam           `json:"coreTeam,omitempty" jsonschema:"replaces the core team"`
	ManagementFee      *float64               `json:"managementFee,omitempty" jsonschema:"commission percentage, 0-100"`
}

type buIDIn struct {
	BUID string `json:"buId" jsonschema:"the _id create_bu returned"`
}

type deleteBUIn struct {
	BUID               string `json:"buId" jsonschema:"the unit to delete"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty" jsonschema:"who is deleting: the creator, the lead or system; defaults to you"`
}

type listBUsIn struct {
	listing.Params
	OrchestratorID string `json:"orchestratorId,omitempty" jsonschema:"only units led by this orchestrator"`
	Status         string `json:"status,omitempty" jsonschema:"only units at this stage: idea, building, live or revenue"`
}

func (s *server) addBusinessUnitTools(m *mcp.Server) {
	c := s.opts.BusinessUnits
	add(s, m, tool{Name: "create_bu", Annotations: write,
		Limits: limits{
			"name": maxLen(vp.MaxShortTextBytes), "description": maxLen(vp.MaxBUTextBytes), "purpose": maxLen(vp.MaxBUTextBytes),
			"businessModel": maxLen(vp.MaxBUTextBytes), "targetCustomers": maxLen(vp.MaxBUTextBytes),
			"pricing": maxLen(vp.MaxBUTextBytes), "domain": maxLen(vp.MaxShortTextBytes),
			"orchestratorId": maxLen(vp.MaxNameBytes), "services": maxItems(vp.MaxBUListItems),
			"services[]": maxLen(vp.MaxBUServiceBytes), "coreTeam.agents": maxItems(vp.MaxBUListItems),
			"coreTeam.skills": maxItems(vp.MaxBUListItems), "coreTeam.hooks": maxItems(vp.MaxBUListItems),
			"coreTeam.plugins": maxItems(vp.MaxBUListItems),
		},
		Description: "Create a business unit with its strategy: offer, customers, pricing, revenue targets and core team. " +
			"Example: {\"name\":\"VantagePeers\",\"description\":\"Agent coordination backend\",\"purpose\":\"Let agents work as a team\"," +
			"\"businessModel\":\"SaaS\",\"targetCustomers\":\"AI studios\",\"services\":[\"hosting\"],\"pricing\":\"49 EUR/seat/month\"," +
			"\"revenueProjections\":{\"A1\":50000,\"A2\":150000,\"A3\":400000}}"},
		func(ctx context.Context, p vp.Principal, in createBUIn) (vp.BusinessUnit, error) {
			return c.CreateBU(ctx, p, businessunit.Fields{Name: &in.Name, Description: &in.Description, Purpose: &in.Purpose, Domain: &in.Domain,
				OrchestratorID: &in.OrchestratorID, Status: &in.Status, BusinessModel: &in.BusinessModel, TargetCustomers: &in.TargetCustomers,
				Services: orEmptyList(in.Services), Pricing: &in.Pricing, RevenueProjections: &in.RevenueProjections, CoreTeam: in.CoreTeam,
				ManagementFee: in.ManagementFee}, in.CreatedBy)
		})

	add(s, m, tool{Name: "update_bu", Annotations: idempotent,
		Limits: limits{
			"name": maxLen(vp.MaxShortTextBytes), "description": maxLen(vp.MaxBUTextBytes), "purpose": maxLen(vp.MaxBUTextBytes),
			"businessModel": maxLen(vp.MaxBUTextBytes), "targetCustomers": maxLen(vp.MaxBUTextBytes),
			"pricing": maxLen(vp.MaxBUTextBytes), "domain": maxLen(vp.MaxShortTextBytes),
			"orchestratorId": maxLen(vp.MaxNameBytes), "services": maxItems(vp.MaxBUListItems),
			"services[]": maxLen(vp.MaxBUServiceBytes), "coreTeam.agents": maxItems(vp.MaxBUListItems),
			"coreTeam.skills": maxItems(vp.MaxBUListItems), "coreTeam.hooks": maxItems(vp.MaxBUListItems),
			"coreTeam.plugins": maxItems(vp.MaxBUListItems),
		},
		Description: "Change fields of a business unit (its creator, its lead or system): move its status along, revise pricing or targets, " +
			"hand the lead over; omitted fields keep their value. Example: {\"buId\":\"bun_01jd...\",\"status\":\"live\"}"},
		func(ctx context.Context, p vp.Principal, in updateBUIn) (vp.BusinessUnit, error) {
			return c.UpdateBU(ctx, p, in.BUID, in.CallerOrchestrator, businessunit.Fields{Name: in.Name, Description: in.Description,
				Purpose: in.Purpose, Domain: in.Domain, OrchestratorID: in.OrchestratorID, Status: in.Status, BusinessModel: in.BusinessModel,
				TargetCustomers: in.TargetCustomers, Services: in.Services, Pricing: in.Pricing, RevenueProjections: in.RevenueProjections,
				CoreTeam: in.CoreTeam, ManagementFee: in.ManagementFee})
		})

	add(s, m, tool{Name: "get_bu", Annotations: readOnly,
		Description: "Read one business unit with all its fields. Example: {\"buId\":\"bun_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in buIDIn) (vp.BusinessUnit, error) {
			return c.GetBU(ctx, p, in.BUID)
		})

	add(s, m, tool{Name: "list_bus", Annotations: readOnly,
		Description: "Browse business units, newest first, optionally by lead orchestrator and status. Paginated: {items, nextCursor?}. " +
			"Example: {\"status\":\"live\",\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listBUsIn) (listing.Page[any], error) {
			return c.ListBUs(ctx, p, businessunit.ListInput{OrchestratorID: in.OrchestratorID, Status: in.Status, Params: in.Params})
		})

	add(s, m, tool{Name: "delete_bu", Annotations: destructive,
		Description: "Delete a business unit (its creator, its lead or system). Cannot be undone. Example: {\"buId\":\"bun_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in deleteBUIn) (businessunit.DeleteResult, error) {
			return c.DeleteBU(ctx, p, in.BUID, in.CallerOrchestrator)
		})
}

func orEmptyList(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}
