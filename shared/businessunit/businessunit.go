// Package businessunit holds business units: the ventures a team runs,
// with their model, revenue projections, core team and lead orchestrator.
package businessunit

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// units declares where business units live.
var units = table.Declare(table.Schema[vp.BusinessUnit]{
	Entity:  "business unit",
	Primary: table.Key{PK: "BU#{id}", SK: "BU", Pattern: "business unit by id"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "BUS", SK: "{id}", Pattern: "business units, newest first"},
		{Index: store.GSI2, PK: "BULEAD#{orch}", SK: "{id}", Pattern: "business units by lead"},
		{Index: store.GSI3, PK: "BUSTATUS#{status}", SK: "{id}", Pattern: "business units by status"},
	},
	Fields: func(b vp.BusinessUnit) table.Values {
		return table.Values{"id": b.ID, "orch": b.OrchestratorID, "status": b.Status}
	},
})

// Tables describes the business unit keys for shared/store/KEYS.md.
func Tables() []table.Doc { return []table.Doc{units.Doc()} }

func unitKey(tenant, id string) store.Key { return units.KeyOf(tenant, table.Values{"id": id}) }

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
}

// Service writes and reads business units.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now)}
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// Fields are a business unit's editable fields. For create_bu the text
// fields but domain are required and revenueProjections too; for update_bu
// nil fields (and a nil Services) are left as they are.
type Fields struct {
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

func (f Fields) empty() bool {
	return f.Name == nil && f.Description == nil && f.Purpose == nil && f.Domain == nil && f.OrchestratorID == nil &&
		f.Status == nil && f.BusinessModel == nil && f.TargetCustomers == nil && f.Services == nil && f.Pricing == nil &&
		f.RevenueProjections == nil && f.CoreTeam == nil && f.ManagementFee == nil
}

// CreateBU stores a new business unit. createdBy defaults to the caller,
// the lead orchestrator (orchestratorId) to createdBy, the status to idea
// and the management fee to 10 %.
func (s *Service) CreateBU(ctx context.Context, p vp.Principal, f Fields, createdBy string) (vp.BusinessUnit, error) {
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
	if err := apply(op, &b, f); err != nil {
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
	it, err := units.Item(op, tenant, b)
	if err != nil {
		return vp.BusinessUnit{}, err
	}
	if err := s.st.Write(ctx, store.Put(it, store.IfNotExists)); err != nil {
		return vp.BusinessUnit{}, records.Err(op, err)
	}
	return b, nil
}

// UpdateBU changes a business unit's fields. Its creator, its lead
// orchestrator or system may update it.
func (s *Service) UpdateBU(ctx context.Context, p vp.Principal, id, caller string, f Fields) (vp.BusinessUnit, error) {
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
	if err := apply(op, &vp.BusinessUnit{}, f); err != nil {
		return vp.BusinessUnit{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return vp.BusinessUnit{}, err
	}
	b, _, err := units.Update(ctx, s.st, op, tenant, "buId", id, unitKey(tenant, id), func(b *vp.BusinessUnit, _ store.Item) ([]store.Op, error) {
		if err := mayChange(op, who, *b); err != nil {
			return nil, err
		}
		_ = apply(op, b, f) // validated above
		b.UpdatedAt, b.UpdatedBy = max(s.nowMS(), b.CreatedAt), who
		return nil, nil
	})
	if vp.IsKind(err, vp.KindConflict) { // the retries ran out: say it as this tool always has
		return vp.BusinessUnit{}, vp.E(op, vp.KindConflict, "buId", "the business unit is being changed by others at the same time; retry")
	}
	if err != nil {
		return vp.BusinessUnit{}, err
	}
	return b, nil
}

// DeleteResult reports a deletion.
type DeleteResult struct {
	Deleted bool `json:"deleted"`
}

// DeleteBU removes a business unit (creator, lead orchestrator or system).
func (s *Service) DeleteBU(ctx context.Context, p vp.Principal, id, caller string) (DeleteResult, error) {
	const op = "delete_bu"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return DeleteResult{}, err
	}
	if err := vp.CheckName(op, "buId", id, true); err != nil {
		return DeleteResult{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return DeleteResult{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return DeleteResult{}, err
	}
	err = table.Retry(ctx, op, "buId", id, func() error {
		b, cur, err := units.Get(ctx, s.st, op, "buId", id, unitKey(tenant, id))
		if err != nil {
			return err
		}
		if err := mayChange(op, who, b); err != nil {
			return err
		}
		// IfVersion: a concurrent update (say, a new lead) is re-checked.
		return s.st.Write(ctx, store.Delete(cur.Key, store.IfVersion(cur.Version)))
	})
	if vp.IsKind(err, vp.KindConflict) { // the retries ran out: say it as this tool always has
		return DeleteResult{}, vp.E(op, vp.KindConflict, "buId", "the business unit is being changed by others at the same time; retry")
	}
	if err != nil {
		return DeleteResult{}, err
	}
	return DeleteResult{Deleted: true}, nil
}

// mayChange lets b's creator, its lead orchestrator or system change it.
func mayChange(op, who string, b vp.BusinessUnit) error {
	if who != b.CreatedBy && who != b.OrchestratorID && who != vp.SystemCaller {
		return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator",
			"only the business unit's creator (%q), its lead orchestrator (%q) or system may change it; %q may not", b.CreatedBy, b.OrchestratorID, who)
	}
	return nil
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
	b, _, err := units.Get(ctx, s.st, op, "buId", id, unitKey(tenant, id))
	return b, err
}

// ListInput filters business units.
type ListInput struct {
	OrchestratorID string
	Status         string
	Params         listing.Params
}

// ListBUs lists business units newest first, optionally by lead
// orchestrator and/or status.
func (s *Service) ListBUs(ctx context.Context, p vp.Principal, in ListInput) (listing.Page[any], error) {
	const op = "list_bus"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckName(op, "orchestratorId", in.OrchestratorID, false); err != nil {
		return listing.Page[any]{}, err
	}
	if in.Status != "" {
		if err := checkStatus(op, in.Status); err != nil {
			return listing.Page[any]{}, err
		}
	}
	lead := vp.NormalizeOrchestrator(in.OrchestratorID)
	q := units.Query(tenant, store.GSI1, nil)
	switch {
	case lead != "":
		q = units.Query(tenant, store.GSI2, table.Values{"orch": lead})
	case in.Status != "":
		q = units.Query(tenant, store.GSI3, table.Values{"status": in.Status})
	}
	q.Reverse = true
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + lead + "\x00" + in.Status, Params: in.Params, Query: q,
		LiteKeys: []string{"name", "status", "orchestratorId"},
	}, func(it store.Item) (vp.BusinessUnit, bool, error) {
		b, err := records.Decode[vp.BusinessUnit](op, it)
		if err != nil {
			return b, false, err
		}
		return b, in.Status == "" || b.Status == in.Status, nil
	})
}

func checkStatus(op, status string) error {
	if !slices.Contains(vp.BUStatuses, status) {
		return vp.Errorf(op, vp.KindInvalid, "status", "%q is not a business unit status; use one of %s", status, strings.Join(vp.BUStatuses, ", "))
	}
	return nil
}

// Limits bound a business unit's fields, declared once for create_bu and
// update_bu. The lead's id is bounded by vp.CheckName.
type Limits struct {
	Name, Description, Purpose, BusinessModel, TargetCustomers, Pricing, Domain, Services vp.Limit
	Agents, Skills, Hooks, Plugins, ManagementFee                                         vp.Limit
}

// Limits are create_bu's and update_bu's limits.
func (Fields) Limits() Limits {
	team := func(field string) vp.Limit { return vp.MaxItems(field, vp.MaxBUListItems, vp.MaxComponentNameBytes) }
	return Limits{
		Name:            vp.MaxBytes("name", vp.MaxShortTextBytes),
		Description:     vp.MaxBytes("description", vp.MaxBUTextBytes),
		Purpose:         vp.MaxBytes("purpose", vp.MaxBUTextBytes),
		BusinessModel:   vp.MaxBytes("businessModel", vp.MaxBUTextBytes),
		TargetCustomers: vp.MaxBytes("targetCustomers", vp.MaxBUTextBytes),
		Pricing:         vp.MaxBytes("pricing", vp.MaxBUTextBytes),
		Domain:          vp.MaxBytes("domain", vp.MaxShortTextBytes),
		Services:        vp.MaxItems("services", vp.MaxBUListItems, vp.MaxBUServiceBytes),
		Agents:          team("coreTeam.agents"),
		Skills:          team("coreTeam.skills"),
		Hooks:           team("coreTeam.hooks"),
		Plugins:         team("coreTeam.plugins"),
		ManagementFee:   vp.Between("managementFee", 0, 100),
	}
}

// apply validates f and applies it to b.
func apply(op string, b *vp.BusinessUnit, f Fields) error {
	lim := f.Limits()
	for _, t := range []struct {
		lim vp.Limit
		v   *string
		dst *string
	}{
		{lim.Name, f.Name, &b.Name},
		{lim.Description, f.Description, &b.Description},
		{lim.Purpose, f.Purpose, &b.Purpose},
		{lim.BusinessModel, f.BusinessModel, &b.BusinessModel},
		{lim.TargetCustomers, f.TargetCustomers, &b.TargetCustomers},
		{lim.Pricing, f.Pricing, &b.Pricing},
	} {
		if t.v == nil {
			continue
		}
		if err := t.lim.Text(op, *t.v, true); err != nil {
			return err
		}
		*t.dst = *t.v
	}
	if f.Domain != nil {
		if err := lim.Domain.KeyText(op, *f.Domain, false); err != nil {
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
			if err := checkStatus(op, *f.Status); err != nil {
				return err
			}
			b.Status = *f.Status
		}
	}
	if f.Services != nil {
		if err := lim.Services.List(op, f.Services); err != nil {
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
			lim vp.Limit
			v   []string
		}{{lim.Agents, t.Agents}, {lim.Skills, t.Skills}, {lim.Hooks, t.Hooks}, {lim.Plugins, t.Plugins}} {
			if err := l.lim.List(op, l.v); err != nil {
				return err
			}
		}
		b.CoreTeam = *t
	}
	if fee := f.ManagementFee; fee != nil {
		if l := lim.ManagementFee; *fee < l.Min || *fee > l.Max || math.IsNaN(*fee) {
			return vp.Errorf(op, vp.KindInvalid, l.Field, "is a percentage between %v and %v, got %v", l.Min, l.Max, *fee)
		}
		b.ManagementFee = *fee
	}
	return nil
}
