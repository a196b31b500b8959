package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/businessunit"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type createBUIn struct {
	Name               string                `json:"name"`
	Description        string                `json:"description"`
	Purpose            string                `json:"purpose"`
	Domain             string                `json:"domain,omitempty" jsonschema:"website"`
	OrchestratorID     string                `json:"orchestratorId,omitempty" jsonschema:"default you"`
	Status             string                `json:"status,omitempty" jsonschema:"idea (default)|building|live|revenue"`
	BusinessModel      string                `json:"businessModel"`
	TargetCustomers    string                `json:"targetCustomers"`
	Services           []string              `json:"services"`
	Pricing            string                `json:"pricing"`
	RevenueProjections vp.RevenueProjections `json:"revenueProjections" jsonschema:"years 1-3"`
	CoreTeam           *vp.CoreTeam          `json:"coreTeam,omitempty"`
	ManagementFee      *float64              `json:"managementFee,omitempty" jsonschema:"commission %, default 10"`
	CreatedBy          string                `json:"createdBy,omitempty"`
}

type updateBUIn struct {
	BUID               string                 `json:"buId"`
	CallerOrchestrator string                 `json:"callerOrchestrator,omitempty"`
	Name               *string                `json:"name,omitempty"`
	Description        *string                `json:"description,omitempty"`
	Purpose            *string                `json:"purpose,omitempty"`
	Domain             *string                `json:"domain,omitempty" jsonschema:"website; empty clears it"`
	OrchestratorID     *string                `json:"orchestratorId,omitempty" jsonschema:"the new lead"`
	Status             *string                `json:"status,omitempty" jsonschema:"idea|building|live|revenue"`
	BusinessModel      *string                `json:"businessModel,omitempty"`
	TargetCustomers    *string                `json:"targetCustomers,omitempty"`
	Services           []string               `json:"services,omitempty"`
	Pricing            *string                `json:"pricing,omitempty"`
	RevenueProjections *vp.RevenueProjections `json:"revenueProjections,omitempty"`
	CoreTeam           *vp.CoreTeam           `json:"coreTeam,omitempty"`
	ManagementFee      *float64               `json:"managementFee,omitempty" jsonschema:"commission %"`
}

type buIDIn struct {
	BUID string `json:"buId"`
}

type deleteBUIn struct {
	BUID               string `json:"buId"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

type listBUsIn struct {
	listing.Params
	OrchestratorID string `json:"orchestratorId,omitempty" jsonschema:"the lead"`
	Status         string `json:"status,omitempty" jsonschema:"idea|building|live|revenue"`
}

// BusinessUnitTools are the tools of the business units over c; none when c is nil.
func BusinessUnitTools(c *businessunit.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addBusinessUnitTools(m, c) }}
}

func (s *server) addBusinessUnitTools(m *mcp.Server, c *businessunit.Service) {
	add(s, m, tool{Name: "create_bu", Title: "Create business unit", Annotations: write,
		Limits:      businessunit.Fields{}.Limits(),
		Description: "Record a business unit (a product or service line) and its strategy. Example: {\"name\":\"VP\",\"purpose\":\"Teamwork\",\"businessModel\":\"SaaS\",\"services\":[\"hosting\"]}"},
		func(ctx context.Context, p vp.Principal, in createBUIn) (vp.BusinessUnit, error) {
			return c.CreateBU(ctx, p, businessunit.Fields{Name: &in.Name, Description: &in.Description, Purpose: &in.Purpose, Domain: &in.Domain,
				OrchestratorID: &in.OrchestratorID, Status: &in.Status, BusinessModel: &in.BusinessModel, TargetCustomers: &in.TargetCustomers,
				Services: orEmptyList(in.Services), Pricing: &in.Pricing, RevenueProjections: &in.RevenueProjections, CoreTeam: in.CoreTeam,
				ManagementFee: in.ManagementFee}, in.CreatedBy)
		})

	add(s, m, tool{Name: "update_bu", Title: "Update business unit", Annotations: idempotent,
		Limits:      businessunit.Fields{}.Limits(),
		Description: "Change a business unit (creator, lead or system); omitted fields kept, given lists and objects replaced. Example: {\"buId\":\"bun_01jd...\",\"status\":\"live\"}"},
		func(ctx context.Context, p vp.Principal, in updateBUIn) (vp.BusinessUnit, error) {
			return c.UpdateBU(ctx, p, in.BUID, in.CallerOrchestrator, businessunit.Fields{Name: in.Name, Description: in.Description,
				Purpose: in.Purpose, Domain: in.Domain, OrchestratorID: in.OrchestratorID, Status: in.Status, BusinessModel: in.BusinessModel,
				TargetCustomers: in.TargetCustomers, Services: in.Services, Pricing: in.Pricing, RevenueProjections: in.RevenueProjections,
				CoreTeam: in.CoreTeam, ManagementFee: in.ManagementFee})
		})

	add(s, m, tool{Name: "get_bu", Title: "Get business unit", Annotations: readOnly,
		Description: "Read a business unit. Example: {\"buId\":\"bun_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in buIDIn) (vp.BusinessUnit, error) {
			return c.GetBU(ctx, p, in.BUID)
		})

	add(s, m, tool{Name: "list_bus", Title: "List business units", Annotations: readOnly,
		Description: "List business units, newest first. Example: {\"status\":\"live\"}"},
		func(ctx context.Context, p vp.Principal, in listBUsIn) (listing.Page[any], error) {
			return c.ListBUs(ctx, p, businessunit.ListInput{OrchestratorID: in.OrchestratorID, Status: in.Status, Params: in.Params})
		})

	add(s, m, tool{Name: "delete_bu", Title: "Delete business unit", Annotations: destructive,
		Description: "Delete a business unit for good (creator, lead or system). Example: {\"buId\":\"bun_01jd...\"}"},
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
