package coord

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Business unit keys.
//
//	table  T#t#BU#<id>               BU     the unit
//	gsi1   T#t#BUS                   <id>   every unit, newest first
//	gsi2   T#t#BULEAD#<orch>         <id>   units led by an orchestrator
//	gsi3   T#t#BUSTATUS#<status>     <id>   units at a stage

func buKey(tenant, id string) store.Key { return store.Key{PK: tp(tenant) + "BU#" + id, SK: "BU"} }

func busPK(tenant string) string { return tp(tenant) + "BUS" }

func buLeadPK(tenant, orch string) string { return tp(tenant) + "BULEAD#" + orch }

func buStatusPK(tenant, status string) string { return tp(tenant) + "BUSTATUS#" + status }

func buItem(op, tenant string, b vp.BusinessUnit) store.Item {
	it := store.Item{Key: buKey(tenant, b.ID), Data: encode(op, b)}
	it.GSI[0] = store.Key{PK: busPK(tenant), SK: b.ID}
	it.GSI[1] = store.Key{PK: buLeadPK(tenant, b.OrchestratorID), SK: b.ID}
	it.GSI[2] = store.Key{PK: buStatusPK(tenant, b.Status), SK: b.ID}
	return it
}

// BUFields are a business unit's editable fields. For create_bu the text
// fields but domain are required and revenueProjections too; for update_bu
// nil fields (and a nil Services) are left as they are.
type BUFields struct {
	Name               *string
	Description        *string
	Purpose            *string
	Domain             *string
	OrchestratorID     *string
	Status             *string
	BusinessModel      *string
	TargetCustomers    *string
	Services           []string
	Pricing            *string
	RevenueProjections *vp.RevenueProjections
	CoreTeam           *vp.CoreTeam
	ManagementFee      *float64
}

func (f BUFields) empty() bool {
	return f.Name == nil && f.Description == nil && f.Purpose == nil && f.Domain == nil && f.OrchestratorID == nil &&
		f.Status == nil && f.BusinessModel == nil && f.TargetCustomers == nil && f.Services == nil && f.Pricing == nil &&
		f.RevenueProjections == nil && f.CoreTeam == nil && f.ManagementFee == nil
}

// CreateBU stores a new business unit. createdBy defaults to the caller,
// the lead orchestrator (orchestratorId) to createdBy, the status to idea
// and the management fee to 10 %.
func (s *Service) CreateBU(ctx context.Context, p vp.Principal, f BUFields, createdBy string) (vp.BusinessUnit, error) {
	const op = "create_bu"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.BusinessUnit{}, err
	}
	if err := vp.CheckName(op, "createdBy", createdBy, false); err != nil {
		return vp.BusinessUnit{}, err
	}
	for _, r := range []struct {
		field string
		v     *string
	}{{"name", f.Name}, {"description", f.Description}, {"purpose", f.Purpose}, {"businessModel", f.BusinessModel},
		{"targetCustomers", f.TargetCustomers}, {"pricing", f.Pricing}} {
		if r.v == nil {
			return vp.BusinessUnit{}, vp.Errorf(op, vp.KindInvalid, r.field, "is required")
		}
	}
	if f.RevenueProjections == nil {
		return vp.BusinessUnit{}, vp.E(op, vp.KindInvalid, "revenueProjections", "is required: the revenue targets of years 1-3, e.g. {\"A1\":50000,\"A2\":150000,\"A3\":400000}")
	}
	b := vp.BusinessUnit{Status: vp.DefaultBUStatus, ManagementFee: vp.DefaultManagementFee, Services: []string{}}
	if err := applyBU(op, &b, f); err != nil {
		return vp.BusinessUnit{}, err
	}
	who, err := p.ActAs(op, "createdBy", createdBy)
	if err != nil {
		return vp.BusinessUnit{}, err
	}
	if b.OrchestratorID == "" {
		b.OrchestratorID = who
	}
	now := s.nowMS()
	b.ID, b.CreationTime, b.CreatedAt, b.CreatedBy = s.ids.New("bun"), now, now, who
	if err := s.st.Write(ctx, store.Put(buItem(op, tenant, b), store.IfNotExists)); err != nil {
		return vp.BusinessUnit{}, storeErr(op, err)
	}
	return b, nil
}

// UpdateBU changes a business unit's fields. Its creator, its lead
// orchestrator or system may update it.
func (s *Service) UpdateBU(ctx context.Context, p vp.Principal, id, caller string, f BUFields) (vp.BusinessUnit, error) {
	const op = "update_bu"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.BusinessUnit{}, err
	}
	if err := vp.CheckName(op, "buId", id, true); err != nil {
		return vp.BusinessUnit{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return vp.BusinessUnit{}, err
	}
	if f.empty() {
		return vp.BusinessUnit{}, vp.E(op, vp.KindInvalid, "", "nothing to update: pass at least one field to change")
	}
	if err := applyBU(op, &vp.BusinessUnit{}, f); err != nil {
		return vp.BusinessUnit{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return vp.BusinessUnit{}, err
	}
	for attempt := 0; attempt < 8; attempt++ {
		if err := pause(ctx, attempt); err != nil {
			return vp.BusinessUnit{}, vp.Wrap(op, vp.KindInternal, err)
		}
		b, cur, err := s.ownedBU(ctx, op, tenant, who, id)
		if err != nil {
			return vp.BusinessUnit{}, err
		}
		_ = applyBU(op, &b, f) // validated above
		b.UpdatedAt, b.UpdatedBy = max(s.nowMS(), b.CreatedAt), who
		err = s.st.Write(ctx, store.Put(buItem(op, tenant, b), store.IfVersion(cur.Version)))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return vp.BusinessUnit{}, storeErr(op, err)
		}
		return b, nil
	}
	return vp.BusinessUnit{}, vp.E(op, vp.KindConflict, "buId", "the business unit is being changed by others at the same time; retry")
}

// BUDeleteResult reports a deletion.
type BUDeleteResult struct {
	Deleted bool `json:"deleted"`
}

// DeleteBU removes a business unit (creator, lead orchestrator or system).
func (s *Service) DeleteBU(ctx context.Context, p vp.Principal, id, caller string) (BUDeleteResult, error) {
	const op = "delete_bu"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return BUDeleteResult{}, err
	}
	if err := vp.CheckName(op, "buId", id, true); err != nil {
		return BUDeleteResult{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return BUDeleteResult{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return BUDeleteResult{}, err
	}
	for attempt := 0; attempt < 8; attempt++ {
		if err := pause(ctx, attempt); err != nil {
			return BUDeleteResult{}, vp.Wrap(op, vp.KindInternal, err)
		}
		_, cur, err := s.ownedBU(ctx, op, tenant, who, id)
		if err != nil {
			return BUDeleteResult{}, err
		}
		// IfVersion: a concurrent update (say, a new lead) is re-checked.
		err = s.st.Write(ctx, store.Delete(cur.Key, store.IfVersion(cur.Version)))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return BUDeleteResult{}, storeErr(op, err)
		}
		return BUDeleteResult{Deleted: true}, nil
	}
	return BUDeleteResult{}, vp.E(op, vp.KindConflict, "buId", "the business unit is being changed by others at the same time; retry")
}

func (s *Service) ownedBU(ctx context.Context, op, tenant, who, id string) (vp.BusinessUnit, store.Item, error) {
	b, cur, err := get[vp.BusinessUnit](ctx, s, op, "buId", id, buKey(tenant, id))
	if err != nil {
		return b, cur, err
	}
	if who != b.CreatedBy && who != b.OrchestratorID && who != vp.SystemCaller {
		return b, cur, vp.Errorf(op, vp.KindForbidden, "callerOrchestrator",
			"only the business unit's creator (%q), its lead orchestrator (%q) or system may change it; %q may not", b.CreatedBy, b.OrchestratorID, who)
	}
	return b, cur, nil
}

// GetBU returns one business unit of the tenant.
func (s *Service) GetBU(ctx context.Context, p vp.Principal, id string) (vp.BusinessUnit, error) {
	const op = "get_bu"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.BusinessUnit{}, err
	}
	if err := vp.CheckName(op, "buId", id, true); err != nil {
		return vp.BusinessUnit{}, err
	}
	b, _, err := get[vp.BusinessUnit](ctx, s, op, "buId", id, buKey(tenant, id))
	return b, err
}

// ListBUsInput filters business units.
type ListBUsInput struct {
	OrchestratorID string
	Status         string
	Params         listing.Params
}

// ListBUs lists business units newest first, optionally by lead
// orchestrator and/or status.
func (s *Service) ListBUs(ctx context.Context, p vp.Principal, in ListBUsInput) (listing.Page[any], error) {
	const op = "list_bus"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckName(op, "orchestratorId", in.OrchestratorID, false); err != nil {
		return listing.Page[any]{}, err
	}
	if in.Status != "" {
		if err := checkBUStatus(op, in.Status); err != nil {
			return listing.Page[any]{}, err
		}
	}
	lead := vp.NormalizeOrchestrator(in.OrchestratorID)
	q := store.Query{Index: store.GSI1, PK: busPK(tenant), Reverse: true}
	switch {
	case lead != "":
		q.Index, q.PK = store.GSI2, buLeadPK(tenant, lead)
	case in.Status != "":
		q.Index, q.PK = store.GSI3, buStatusPK(tenant, in.Status)
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + lead + "\x00" + in.Status, Params: in.Params, Query: q,
		LiteKeys: []string{"name", "status", "orchestratorId"},
	}, func(it store.Item) (vp.BusinessUnit, bool, error) {
		b, err := decode[vp.BusinessUnit](op, it)
		if err != nil {
			return b, false, err
		}
		return b, in.Status == "" || b.Status == in.Status, nil
	})
}

func checkBUStatus(op, status string) error {
	if !slices.Contains(vp.BUStatuses, status) {
		return vp.Errorf(op, vp.KindInvalid, "status", "%q is not a business unit status; use one of %s", status, strings.Join(vp.BUStatuses, ", "))
	}
	return nil
}

// applyBU validates f and applies it to b.
func applyBU(op string, b *vp.BusinessUnit, f BUFields) error {
	for _, t := range []struct {
		field string
		v     *string
		dst   *string
		max   int
	}{
		{"name", f.Name, &b.Name, vp.MaxShortTextBytes},
		{"description", f.Description, &b.Description, vp.MaxBUTextBytes},
		{"purpose", f.Purpose, &b.Purpose, vp.MaxBUTextBytes},
		{"businessModel", f.BusinessModel, &b.BusinessModel, vp.MaxBUTextBytes},
		{"targetCustomers", f.TargetCustomers, &b.TargetCustomers, vp.MaxBUTextBytes},
		{"pricing", f.Pricing, &b.Pricing, vp.MaxBUTextBytes},
	} {
		if t.v == nil {
			continue
		}
		if err := vp.CheckText(op, t.field, *t.v, t.max, true); err != nil {
			return err
		}
		*t.dst = *t.v
	}
	if f.Domain != nil {
		if err := vp.CheckKeyText(op, "domain", *f.Domain, vp.MaxShortTextBytes, false); err != nil {
			return err
		}
		b.Domain = strings.TrimSpace(*f.Domain)
	}
	if f.OrchestratorID != nil {
		if err := vp.CheckName(op, "orchestratorId", *f.OrchestratorID, false); err != nil {
			return err
		}
		if lead := vp.NormalizeOrchestrator(*f.OrchestratorID); lead != "" {
			b.OrchestratorID = lead
		}
	}
	if f.Status != nil {
		if *f.Status != "" || b.Status == "" { // "" keeps the default on create
			if err := checkBUStatus(op, *f.Status); err != nil {
				return err
			}
			b.Status = *f.Status
		}
	}
	if f.Services != nil {
		if err := checkTextList(op, "services", f.Services, vp.MaxBUListItems, vp.MaxBUServiceBytes); err != nil {
			return err
		}
		b.Services = f.Services
	}
	if r := f.RevenueProjections; r != nil {
		for _, v := range []struct {
			field string
			n     float64
		}{{"revenueProjections.A1", r.A1}, {"revenueProjections.A2", r.A2}, {"revenueProjections.A3", r.A3}} {
			if v.n < 0 || math.IsNaN(v.n) || math.IsInf(v.n, 0) {
				return vp.Errorf(op, vp.KindInvalid, v.field, "must be a revenue amount of 0 or more, got %v", v.n)
			}
		}
		b.RevenueProjections = *r
	}
	if t := f.CoreTeam; t != nil {
		for _, l := range []struct {
			field string
			v     []string
		}{{"coreTeam.agents", t.Agents}, {"coreTeam.skills", t.Skills}, {"coreTeam.hooks", t.Hooks}, {"coreTeam.plugins", t.Plugins}} {
			if err := checkTextList(op, l.field, l.v, vp.MaxBUListItems, vp.MaxComponentNameBytes); err != nil {
				return err
			}
		}
		b.CoreTeam = *t
	}
	if fee := f.ManagementFee; fee != nil {
		if *fee < 0 || *fee > 100 || math.IsNaN(*fee) {
			return vp.Errorf(op, vp.KindInvalid, "managementFee", "is a percentage between 0 and 100, got %v", *fee)
		}
		b.ManagementFee = *fee
	}
	return nil
}
