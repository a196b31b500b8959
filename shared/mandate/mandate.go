// Package mandate holds mandates: a requester asks a fulfiller for a
// service under a budget and AP2 spending limits, and the mandate moves
// requested → accepted → in_progress → delivered → settled, each step taken
// by the party it belongs to, each a single conditional write.
package mandate

import (
	"context"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// A mandate is one item, indexed four ways: all mandates, by status, and by
// each party. The party indexes sort by lifecycle rank then id, so that a
// status filter on a party is a prefix query and an unfiltered party
// listing (read in reverse) shows the mandates waiting on someone first:
// requested, accepted, in_progress, delivered, then settled, newest first
// within each.
var mandates = table.Declare(table.Schema[vp.Mandate]{
	Entity:  "mandate",
	Primary: table.Key{PK: "MANDATE#{mandateId}", SK: "MANDATE", Pattern: "mandate by id", Note: "accept/update/settle: one IfVersion write"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "MANDATES", SK: "{mandateId}", Pattern: "mandates, newest first"},
		{Index: store.GSI2, PK: "MANDATEST#{status}", SK: "{mandateId}", Pattern: "mandates by status"},
		{Index: store.GSI3, PK: "MANDATEREQ#{requestedBy}", SK: "{rank}#{mandateId}", Pattern: "mandates by requester (× status)", Note: "status = sort-key prefix"},
		{Index: store.GSI4, PK: "MANDATEFUL#{fulfilledBy}", SK: "{rank}#{mandateId}", Pattern: "mandates by fulfiller (× status)", Note: "status = sort-key prefix"},
	},
	Fields: func(m vp.Mandate) table.Values {
		return table.Values{"mandateId": m.ID, "status": m.Status, "requestedBy": m.RequestedBy, "fulfilledBy": m.FulfilledBy,
			"rank": strconv.Itoa(mandateRank[m.Status])}
	},
})

// Tables documents the keys of this package (shared/store/KEYS.md).
func Tables() []table.Doc { return []table.Doc{mandates.Doc()} }

func mandateKey(tenant, id string) store.Key {
	return mandates.KeyOf(tenant, table.Values{"mandateId": id})
}

func mandateRankPrefix(status string) string {
	return mandates.SK(store.GSI3, table.Values{"rank": strconv.Itoa(mandateRank[status])})
}

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	Logger  *slog.Logger
}

// Service is the mandate domain.
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

// mandateRank orders statuses in the party indexes: higher sorts later, and
// those indexes are read in reverse.
var mandateRank = map[string]int{
	vp.MandateSettled: 0, vp.MandateDelivered: 1, vp.MandateInProgress: 2, vp.MandateAccepted: 3, vp.MandateRequested: 4,
}

// Remedies: the actions that move a mandate on, named where an error tells
// the caller to take one; the MCP layer names the tool in their place.
const (
	RemedyAccept = "mandate.accept"
	RemedyUpdate = "mandate.update"
	RemedySettle = "mandate.settle"
)

// mandateNext is the lifecycle: each status has exactly one next status, and
// the action that performs the transition.
var mandateNext = map[string]struct{ status, remedy string }{
	vp.MandateRequested:  {vp.MandateAccepted, RemedyAccept},
	vp.MandateAccepted:   {vp.MandateInProgress, RemedyUpdate},
	vp.MandateInProgress: {vp.MandateDelivered, RemedyUpdate},
	vp.MandateDelivered:  {vp.MandateSettled, RemedySettle},
}

// Limits on mandate inputs.
const (
	MaxMandateAmount        = 1e15 // budgets, costs and limits
	MaxApprovedCategories   = 50
	MaxMandatePeriodDays    = 3660
	maxMandateUpdateRetries = 8
)

// checkMandateTransition refuses moving m to status to unless it is the lifecycle's
// next step, naming the current status and the allowed next one.
func checkMandateTransition(op string, m vp.Mandate, to string) error {
	next, ok := mandateNext[m.Status]
	if !ok {
		return vp.Errorf(op, vp.KindConflict, "status", "mandate %s is %s: it is closed and allows no further transition (to %s refused)", m.ID, m.Status, to)
	}
	if to != next.status {
		return vp.Errorf(op, vp.KindConflict, "status", "mandate %s is %s: it cannot move to %s; the only allowed next state is %s (with %s)",
			m.ID, m.Status, to, next.status, next.remedy).WithRemedy(next.remedy)
	}
	return nil
}

func checkMandateStatus(op, field, v string) error {
	if slices.Contains(vp.MandateStatuses, v) {
		return nil
	}
	return vp.Errorf(op, vp.KindInvalid, field, "%q is not a mandate status; use one of %s", v, strings.Join(vp.MandateStatuses, ", "))
}

func fmtMandateAmount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Limits bound a mandate's fields, declared once for create_mandate and
// update_mandate. Parties are bounded by vp.CheckName; every amount, the
// budget among them, by checkMandateAmount.
type Limits struct{ Service, ApprovedCategories, Budget, PeriodDays vp.Limit }

func mandateLimits() Limits {
	return Limits{
		Service:            vp.MaxBytes("service", vp.MaxShortTextBytes),
		ApprovedCategories: vp.MaxItems("approvedCategories", MaxApprovedCategories, vp.MaxShortTextBytes),
		Budget:             vp.Between("budget", 0, MaxMandateAmount),
		PeriodDays:         vp.Between("spendingLimits.periodDays", 1, MaxMandatePeriodDays),
	}
}

// Limits are create_mandate's limits.
func (CreateMandateInput) Limits() Limits { return mandateLimits() }

// Limits are update_mandate's limits.
func (UpdateMandateInput) Limits() Limits { return mandateLimits() }

// checkMandateAmount validates a money-like number: finite, within bounds, and
// strictly positive unless zeroOK.
func checkMandateAmount(op, field string, v float64, zeroOK bool) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return vp.E(op, vp.KindInvalid, field, "must be a finite number")
	case v < 0 || (v == 0 && !zeroOK):
		if zeroOK {
			return vp.Errorf(op, vp.KindInvalid, field, "is %s; it must be 0 or more", fmtMandateAmount(v))
		}
		return vp.Errorf(op, vp.KindInvalid, field, "is %s; it must be greater than 0", fmtMandateAmount(v))
	case v > MaxMandateAmount:
		return vp.Errorf(op, vp.KindTooLarge, field, "is %s; the limit is %s", fmtMandateAmount(v), fmtMandateAmount(MaxMandateAmount))
	}
	return nil
}

func checkMandateLimits(op string, l *vp.SpendingLimits) error {
	if l == nil {
		return nil
	}
	if err := checkMandateAmount(op, "spendingLimits.maxPerTransaction", l.MaxPerTransaction, false); err != nil {
		return err
	}
	if err := checkMandateAmount(op, "spendingLimits.maxPerPeriod", l.MaxPerPeriod, false); err != nil {
		return err
	}
	if d := mandateLimits().PeriodDays; l.PeriodDays != math.Trunc(l.PeriodDays) || l.PeriodDays < d.Min || l.PeriodDays > d.Max {
		return vp.Errorf(op, vp.KindInvalid, d.Field, "is %s; it must be a whole number of days from %s to %s", fmtMandateAmount(l.PeriodDays), fmtMandateAmount(d.Min), fmtMandateAmount(d.Max))
	}
	if l.MaxPerTransaction > l.MaxPerPeriod {
		return vp.Errorf(op, vp.KindInvalid, "spendingLimits.maxPerTransaction", "is %s, more than maxPerPeriod %s; one transaction cannot exceed the period's limit",
			fmtMandateAmount(l.MaxPerTransaction), fmtMandateAmount(l.MaxPerPeriod))
	}
	return nil
}

func checkMandateCategories(op string, cats []string) error {
	return mandateLimits().ApprovedCategories.List(op, cats)
}

// CreateMandateInput is a new mandate. RequestedBy defaults to the caller.
type CreateMandateInput struct {
	RequestedBy        string
	FulfilledBy        string
	Service            string
	Budget             float64
	SpendingLimits     *vp.SpendingLimits
	ApprovedCategories []string
}

// CreateMandate stores a mandate in status requested.
func (s *Service) CreateMandate(ctx context.Context, p vp.Principal, in CreateMandateInput) (vp.Mandate, error) {
	const op = "create_mandate"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Mandate{}, err
	}
	if err := vp.CheckName(op, "requestedBy", in.RequestedBy, false); err != nil {
		return vp.Mandate{}, err
	}
	if err := vp.CheckName(op, "fulfilledBy", in.FulfilledBy, true); err != nil {
		return vp.Mandate{}, err
	}
	if err := in.Limits().Service.Text(op, in.Service, true); err != nil {
		return vp.Mandate{}, err
	}
	if err := checkMandateAmount(op, "budget", in.Budget, false); err != nil {
		return vp.Mandate{}, err
	}
	if err := checkMandateLimits(op, in.SpendingLimits); err != nil {
		return vp.Mandate{}, err
	}
	if err := checkMandateCategories(op, in.ApprovedCategories); err != nil {
		return vp.Mandate{}, err
	}
	requester, err := p.ActAs(op, "requestedBy", in.RequestedBy)
	if err != nil {
		return vp.Mandate{}, err
	}
	now := s.nowMS()
	m := vp.Mandate{
		ID: s.ids.New("mnd"), CreationTime: now, RequestedBy: requester, FulfilledBy: vp.NormalizeOrchestrator(in.FulfilledBy),
		Service: in.Service, Budget: in.Budget, SpendingLimits: in.SpendingLimits, ApprovedCategories: in.ApprovedCategories,
		Status: vp.MandateRequested, UpdatedAt: now,
	}
	it, err := mandates.Item(op, tenant, m)
	if err != nil {
		return vp.Mandate{}, err
	}
	if err := s.st.Write(ctx, store.Put(it, store.IfNotExists)); err != nil {
		return vp.Mandate{}, records.Err(op, err)
	}
	return m, nil
}

// GetMandate returns one mandate of the tenant.
func (s *Service) GetMandate(ctx context.Context, p vp.Principal, id string) (vp.Mandate, error) {
	const op = "get_mandate"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Mandate{}, err
	}
	if err := vp.CheckName(op, "mandateId", id, true); err != nil {
		return vp.Mandate{}, err
	}
	m, _, err := mandates.Get(ctx, s.st, op, "mandateId", id, mandateKey(tenant, id))
	return m, err
}

// changeMandate applies change to the current mandate and writes it with a
// single conditional write on the version read. change sees fresh state on
// every attempt, so its checks (status, parties) hold at the moment of the
// write: two callers racing the same transition cannot both win.
func (s *Service) changeMandate(ctx context.Context, op string, p vp.Principal, id string, change func(*vp.Mandate) error) (vp.Mandate, error) {
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Mandate{}, err
	}
	if err := vp.CheckName(op, "mandateId", id, true); err != nil {
		return vp.Mandate{}, err
	}
	var m vp.Mandate
	err = table.Conflicts{Op: op, Max: maxMandateUpdateRetries, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "mandateId", "the mandate is being changed by others; read it again and retry")
	}}.Retry(ctx, func() error {
		var it store.Item
		var err error
		m, it, err = mandates.Get(ctx, s.st, op, "mandateId", id, mandateKey(tenant, id))
		if err != nil {
			return err
		}
		if err := change(&m); err != nil {
			return err
		}
		m.UpdatedAt = s.nowMS()
		next, err := mandates.Item(op, tenant, m)
		if err != nil {
			return err
		}
		return s.st.Write(ctx, store.Put(next, store.IfVersion(it.Version)))
	})
	if err != nil {
		return vp.Mandate{}, err
	}
	return m, nil
}

// mandateParty reports whether who is one of the allowed parties or system.
func mandateParty(who string, parties ...string) bool {
	return who == vp.SystemCaller || slices.Contains(parties, who)
}

// AcceptMandate moves a requested mandate to accepted. Only its fulfiller
// (or system) may accept, and under any concurrency exactly one accept wins:
// the others see the mandate already accepted and are refused.
func (s *Service) AcceptMandate(ctx context.Context, p vp.Principal, id, caller string) (vp.Mandate, error) {
	const op = "accept_mandate"
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return vp.Mandate{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return vp.Mandate{}, err
	}
	return s.changeMandate(ctx, op, p, id, func(m *vp.Mandate) error {
		if !mandateParty(who, m.FulfilledBy) {
			return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the fulfiller (%q) or system may accept mandate %s; %q may not", m.FulfilledBy, m.ID, who)
		}
		if err := checkMandateTransition(op, *m, vp.MandateAccepted); err != nil {
			return err
		}
		m.Status, m.AcceptedBy, m.AcceptedAt = vp.MandateAccepted, who, s.nowMS()
		return nil
	})
}

// UpdateMandateInput changes a mandate. Nil (or empty) fields are left as
// they are. Status moves the work along (in_progress, delivered) and is the
// fulfiller's to set; the terms (service, fulfilledBy, budget, limits,
// categories) are the requester's to change.
type UpdateMandateInput struct {
	MandateID          string
	Caller             string
	Status             string
	Service            *string
	FulfilledBy        *string
	Budget             *float64
	SpendingLimits     *vp.SpendingLimits
	ApprovedCategories []string // nil: unchanged; empty: cleared
}

// UpdateMandate applies an update under the lifecycle and party rules.
func (s *Service) UpdateMandate(ctx context.Context, p vp.Principal, in UpdateMandateInput) (vp.Mandate, error) {
	const op = "update_mandate"
	if err := vp.CheckName(op, "callerOrchestrator", in.Caller, false); err != nil {
		return vp.Mandate{}, err
	}
	terms := in.Service != nil || in.FulfilledBy != nil || in.Budget != nil || in.SpendingLimits != nil || in.ApprovedCategories != nil
	if in.Status == "" && !terms {
		return vp.Mandate{}, vp.E(op, vp.KindInvalid, "status", "nothing to update: pass status (in_progress or delivered) or a term (service, fulfilledBy, budget, spendingLimits, approvedCategories)")
	}
	if in.Status != "" {
		if err := checkMandateStatus(op, "status", in.Status); err != nil {
			return vp.Mandate{}, err
		}
		switch in.Status {
		case vp.MandateAccepted:
			return vp.Mandate{}, vp.E(op, vp.KindInvalid, "status", "use "+RemedyAccept+" to accept a mandate (it records who accepted)").WithRemedy(RemedyAccept)
		case vp.MandateSettled:
			return vp.Mandate{}, vp.E(op, vp.KindInvalid, "status", "use "+RemedySettle+" to settle a mandate (it records the final cost)").WithRemedy(RemedySettle)
		}
	}
	if in.Service != nil {
		if err := in.Limits().Service.Text(op, *in.Service, true); err != nil {
			return vp.Mandate{}, err
		}
	}
	if in.FulfilledBy != nil {
		if err := vp.CheckName(op, "fulfilledBy", *in.FulfilledBy, true); err != nil {
			return vp.Mandate{}, err
		}
	}
	if in.Budget != nil {
		if err := checkMandateAmount(op, "budget", *in.Budget, false); err != nil {
			return vp.Mandate{}, err
		}
	}
	if err := checkMandateLimits(op, in.SpendingLimits); err != nil {
		return vp.Mandate{}, err
	}
	if err := checkMandateCategories(op, in.ApprovedCategories); err != nil {
		return vp.Mandate{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", in.Caller)
	if err != nil {
		return vp.Mandate{}, err
	}
	return s.changeMandate(ctx, op, p, in.MandateID, func(m *vp.Mandate) error {
		if terms {
			if !mandateParty(who, m.RequestedBy) {
				return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the requester (%q) or system may change the terms of mandate %s; %q may not", m.RequestedBy, m.ID, who)
			}
			if m.Status == vp.MandateSettled {
				return vp.Errorf(op, vp.KindConflict, "status", "mandate %s is settled: it is closed and its terms can no longer change", m.ID)
			}
			if in.FulfilledBy != nil && m.Status != vp.MandateRequested {
				return vp.Errorf(op, vp.KindConflict, "fulfilledBy", "mandate %s is %s: the fulfiller can only change while it is requested", m.ID, m.Status)
			}
		}
		if in.Status != "" {
			if !mandateParty(who, m.FulfilledBy) {
				return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the fulfiller (%q) or system may move mandate %s to %s; %q may not", m.FulfilledBy, m.ID, in.Status, who)
			}
			if err := checkMandateTransition(op, *m, in.Status); err != nil {
				return err
			}
		}
		if in.Service != nil {
			m.Service = *in.Service
		}
		if in.FulfilledBy != nil {
			m.FulfilledBy = vp.NormalizeOrchestrator(*in.FulfilledBy)
		}
		if in.Budget != nil {
			m.Budget = *in.Budget
		}
		if in.SpendingLimits != nil {
			m.SpendingLimits = in.SpendingLimits
		}
		if in.ApprovedCategories != nil {
			m.ApprovedCategories = in.ApprovedCategories
			if len(in.ApprovedCategories) == 0 {
				m.ApprovedCategories = nil
			}
		}
		switch in.Status {
		case vp.MandateInProgress:
			m.Status, m.StartedAt = in.Status, s.nowMS()
		case vp.MandateDelivered:
			m.Status, m.DeliveredAt = in.Status, s.nowMS()
		}
		return nil
	})
}

// SettleMandate records the final cost of a delivered mandate and closes it.
// Only the requester (or system) settles, and the cost may not exceed the
// budget: raise the budget with an update first if the work cost more.
func (s *Service) SettleMandate(ctx context.Context, p vp.Principal, id string, finalCost float64, caller string) (vp.Mandate, error) {
	const op = "settle_mandate"
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return vp.Mandate{}, err
	}
	if err := checkMandateAmount(op, "finalCost", finalCost, true); err != nil {
		return vp.Mandate{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return vp.Mandate{}, err
	}
	return s.changeMandate(ctx, op, p, id, func(m *vp.Mandate) error {
		if !mandateParty(who, m.RequestedBy) {
			return vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the requester (%q) or system may settle mandate %s; %q may not", m.RequestedBy, m.ID, who)
		}
		if err := checkMandateTransition(op, *m, vp.MandateSettled); err != nil {
			return err
		}
		if finalCost > m.Budget {
			return vp.Errorf(op, vp.KindInvalid, "finalCost", "%s exceeds the budget of mandate %s (%s) by %s; raise the budget with %s first, or settle at most %s",
				fmtMandateAmount(finalCost), m.ID, fmtMandateAmount(m.Budget), fmtMandateAmount(finalCost-m.Budget), RemedyUpdate, fmtMandateAmount(m.Budget)).WithRemedy(RemedyUpdate)
		}
		m.Status, m.FinalCost, m.SettledBy, m.SettledAt = vp.MandateSettled, &finalCost, who, s.nowMS()
		return nil
	})
}

// SpendingVerdict is validate_mandate_spending's answer when the amount is
// within every limit (an amount over a limit is refused with an error that
// gives the numbers).
type SpendingVerdict struct {
	MandateID      string   `json:"mandateId"`
	WithinLimits   bool     `json:"withinLimits"`
	ProposedAmount float64  `json:"proposedAmount"`
	Budget         float64  `json:"budget"`
	Headroom       float64  `json:"headroom"` // budget − proposedAmount
	Category       string   `json:"category,omitempty"`
	Checked        []string `json:"checked"` // the limits that were checked
}

// ValidateMandateSpending checks a proposed spend against the mandate's
// budget and AP2 limits without recording anything. Refusals are KindInvalid
// errors on proposedAmount (or category) that state the amount, the limit
// and the excess.
//
// No tool records individual spends (only settle_mandate's final cost), so
// maxPerPeriod bounds a single proposed amount; the period total cannot be
// tracked from the catalogue's tools.
func (s *Service) ValidateMandateSpending(ctx context.Context, p vp.Principal, id string, amount float64, category string) (SpendingVerdict, error) {
	const op = "validate_mandate_spending"
	if err := checkMandateAmount(op, "proposedAmount", amount, false); err != nil {
		return SpendingVerdict{}, err
	}
	if err := vp.CheckText(op, "category", category, vp.MaxShortTextBytes, false); err != nil {
		return SpendingVerdict{}, err
	}
	m, err := s.GetMandate(ctx, p, id)
	if err != nil {
		return SpendingVerdict{}, vp.Wrap(op, vp.KindOf(err), err)
	}
	if m.Status == vp.MandateSettled {
		return SpendingVerdict{}, vp.Errorf(op, vp.KindConflict, "mandateId", "mandate %s is settled (final cost %s): nothing more may be spent on it", m.ID, fmtMandateAmount(mandateCost(m.FinalCost)))
	}
	over := func(limit string, max float64) error {
		return vp.Errorf(op, vp.KindInvalid, "proposedAmount", "%s exceeds the %s of mandate %s (%s) by %s; propose at most %s",
			fmtMandateAmount(amount), limit, m.ID, fmtMandateAmount(max), fmtMandateAmount(amount-max), fmtMandateAmount(max))
	}
	v := SpendingVerdict{MandateID: m.ID, WithinLimits: true, ProposedAmount: amount, Budget: m.Budget, Headroom: m.Budget - amount, Category: category, Checked: []string{"budget"}}
	if amount > m.Budget {
		return SpendingVerdict{}, over("budget", m.Budget)
	}
	if l := m.SpendingLimits; l != nil {
		if amount > l.MaxPerTransaction {
			return SpendingVerdict{}, over("maxPerTransaction", l.MaxPerTransaction)
		}
		if amount > l.MaxPerPeriod {
			return SpendingVerdict{}, over("maxPerPeriod ("+fmtMandateAmount(l.PeriodDays)+" days)", l.MaxPerPeriod)
		}
		v.Checked = append(v.Checked, "maxPerTransaction", "maxPerPeriod")
	}
	if category != "" && len(m.ApprovedCategories) > 0 {
		if !slices.Contains(m.ApprovedCategories, category) {
			return SpendingVerdict{}, vp.Errorf(op, vp.KindInvalid, "category", "%q is not an approved category of mandate %s; approved: %s",
				category, m.ID, strings.Join(m.ApprovedCategories, ", "))
		}
		v.Checked = append(v.Checked, "approvedCategories")
	}
	return v, nil
}

func mandateCost(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

// ListMandatesInput filters list_mandates. Each filter is an index query:
// requestedBy or fulfilledBy (with status as a key prefix), else status,
// else every mandate of the tenant.
type ListMandatesInput struct {
	RequestedBy string
	FulfilledBy string
	Status      string
	Params      listing.Params
}

// ListMandates lists mandates, newest first (by party: those waiting on
// someone first, see the key comment above).
func (s *Service) ListMandates(ctx context.Context, p vp.Principal, in ListMandatesInput) (listing.Page[any], error) {
	const op = "list_mandates"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckName(op, "requestedBy", in.RequestedBy, false); err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckName(op, "fulfilledBy", in.FulfilledBy, false); err != nil {
		return listing.Page[any]{}, err
	}
	if in.Status != "" {
		if err := checkMandateStatus(op, "status", in.Status); err != nil {
			return listing.Page[any]{}, err
		}
	}
	req, ful := vp.NormalizeOrchestrator(in.RequestedBy), vp.NormalizeOrchestrator(in.FulfilledBy)
	q := mandates.Query(tenant, store.GSI1, nil)
	switch {
	case req != "":
		q = mandates.Query(tenant, store.GSI3, table.Values{"requestedBy": req})
	case ful != "":
		q = mandates.Query(tenant, store.GSI4, table.Values{"fulfilledBy": ful})
	case in.Status != "":
		q = mandates.Query(tenant, store.GSI2, table.Values{"status": in.Status})
	}
	q.Reverse = true
	if (req != "" || ful != "") && in.Status != "" {
		q.SKPrefix = mandateRankPrefix(in.Status)
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + req + "\x00" + ful + "\x00" + in.Status, Params: in.Params, Query: q,
		LiteKeys: []string{"service", "status", "requestedBy", "fulfilledBy"},
	}, func(it store.Item) (vp.Mandate, bool, error) {
		m, err := records.Decode[vp.Mandate](op, it)
		if err != nil {
			return m, false, err
		}
		// Only a query on the requester index with a fulfiller filter
		// reads rows it must skip.
		return m, ful == "" || m.FulfilledBy == ful, nil
	})
}
