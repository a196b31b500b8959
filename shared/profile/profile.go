// Package profile holds orchestrator profiles and presence: one profile row
// per orchestrator and one presence row per running instance, the peers
// list, and whoami. Messages resolve "broadcast" and instance ids through
// Orchestrators and InstanceOwners.
package profile

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// An orchestrator's partition holds its profile (sort key "#") and the
// presence row of each of its instances ("I#<instance>"): two tables
// sharing the partition key, so that get_profile reads one partition.
var (
	profiles = table.Declare(table.Schema[vp.Profile]{
		Entity: "profile",
		Primary: table.Key{PK: "PROFILE#{orch}", SK: "#",
			Pattern: "profile of an orchestrator (+ its instances)", Note: "get_profile reads the partition"},
		Indexes: []table.Key{
			{Index: store.GSI1, PK: "PEERS", SK: "{updatedAt}#{orch}#",
				Pattern: "peers, most recently active first", Note: "list_peers; broadcast resolution; updatedAt: 13 digits"},
		},
		Fields: fields,
	})
	presence = table.Declare(table.Schema[vp.Profile]{
		Entity: "presence",
		Primary: table.Key{PK: "PROFILE#{orch}", SK: "I#{instance}",
			Pattern: "presence of an instance, in its orchestrator's profile partition", Note: "get_profile reads the partition"},
		Indexes: []table.Key{
			{Index: store.GSI1, PK: "PEERS", SK: "{updatedAt}#{orch}#{instance}",
				Pattern: "peers, most recently active first", Note: "list_peers; broadcast resolution; updatedAt: 13 digits"},
			{Index: store.GSI2, PK: "INSTANCE#{instance}", SK: "{orch}",
				Pattern: "orchestrators running an instance id", Note: "channel entry equal to an instance id"},
		},
		Fields: fields,
	})
)

func fields(p vp.Profile) table.Values {
	return table.Values{"orch": p.Orchestrator, "instance": p.InstanceID, "updatedAt": table.Millis(p.UpdatedAt)}
}

// tableOf is the table of a profile row (instance "") or presence row.
func tableOf(instance string) *table.Table[vp.Profile] {
	if instance == "" {
		return profiles
	}
	return presence
}

// Tables documents the keys of this package (shared/store/KEYS.md).
func Tables() []table.Doc { return []table.Doc{profiles.Doc(), presence.Doc()} }

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	Logger  *slog.Logger
}

// Service is the profiles and presence domain.
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

// Update is a partial update: nil fields are left as they are.
type Update struct {
	Orchestrator string
	InstanceID   string
	Name         *string
	Static       *vp.ProfileStatic
	Dynamic      *vp.ProfileDyn
}

// UpdateLimits bound update_profile's fields. Ids are bounded by
// vp.CheckName.
type UpdateLimits struct {
	Name, Role, Workspace, Capabilities, CurrentTask vp.Limit
}

// Limits are update_profile's limits.
func (Update) Limits() UpdateLimits {
	return UpdateLimits{
		Name:         vp.MaxBytes("name", vp.MaxShortTextBytes),
		Role:         vp.MaxBytes("static.role", vp.MaxShortTextBytes),
		Workspace:    vp.MaxBytes("static.workspace", vp.MaxShortTextBytes),
		Capabilities: vp.MaxItems("static.capabilities", 100, vp.MaxShortTextBytes),
		CurrentTask:  vp.MaxBytes("dynamic.currentTask", vp.MaxShortTextBytes),
	}
}

// SummaryLimit bounds set_summary's summary.
func SummaryLimit() vp.Limit { return vp.MaxBytes("summary", vp.MaxSummaryBytes) }

// UpdateProfile creates or partially updates a profile row.
func (s *Service) UpdateProfile(ctx context.Context, p vp.Principal, u Update) (vp.Profile, error) {
	const op = "update_profile"
	lim := u.Limits()
	if err := vp.CheckName(op, "instanceId", u.InstanceID, false); err != nil {
		return vp.Profile{}, err
	}
	if u.Name != nil {
		if err := lim.Name.Text(op, *u.Name, false); err != nil {
			return vp.Profile{}, err
		}
	}
	if u.Static != nil {
		for l, v := range map[vp.Limit]string{lim.Role: u.Static.Role, lim.Workspace: u.Static.Workspace} {
			if err := l.Text(op, v, false); err != nil {
				return vp.Profile{}, err
			}
		}
		if len(u.Static.Capabilities) > lim.Capabilities.Items {
			return vp.Profile{}, vp.Errorf(op, vp.KindTooLarge, lim.Capabilities.Field, "has more than %d entries", lim.Capabilities.Items)
		}
		for _, c := range u.Static.Capabilities {
			if err := lim.Capabilities.Text(op, c, true); err != nil {
				return vp.Profile{}, err
			}
		}
	}
	if u.Dynamic != nil {
		if err := lim.CurrentTask.Text(op, u.Dynamic.CurrentTask, false); err != nil {
			return vp.Profile{}, err
		}
	}
	return s.upsert(ctx, op, p, u.Orchestrator, u.InstanceID, func(pr *vp.Profile) {
		if u.Name != nil {
			pr.Name = *u.Name
		}
		if u.Static != nil {
			pr.Static = u.Static
		}
		if u.Dynamic != nil {
			d := *u.Dynamic
			if pr.Dynamic != nil && u.Dynamic.CurrentTask == "" {
				d.CurrentTask = pr.Dynamic.CurrentTask
			}
			pr.Dynamic = &d
		}
	})
}

// SetSummary records what an instance is working on (presence).
func (s *Service) SetSummary(ctx context.Context, p vp.Principal, orch, instance, summary string) (vp.Profile, error) {
	const op = "set_summary"
	if err := vp.CheckName(op, "instanceId", instance, true); err != nil {
		return vp.Profile{}, err
	}
	if err := SummaryLimit().Text(op, summary, true); err != nil {
		return vp.Profile{}, err
	}
	return s.upsert(ctx, op, p, orch, instance, func(pr *vp.Profile) {
		pr.Summary = summary
		if pr.Dynamic == nil {
			pr.Dynamic = &vp.ProfileDyn{}
		}
		pr.Dynamic.LastSeen = s.nowMS()
	})
}

// maxUpsertAttempts bounds the optimistic-concurrency loop of an upsert.
const maxUpsertAttempts = 8

// upsert applies change to the row (orch, instance) with optimistic
// concurrency, retrying when another writer got there first. It is not
// table.Update: the row is created when missing, and running out of
// attempts keeps its own message (table.Conflicts' Exhausted).
func (s *Service) upsert(ctx context.Context, op string, p vp.Principal, orchArg, instance string, change func(*vp.Profile)) (vp.Profile, error) {
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Profile{}, err
	}
	if err := vp.CheckName(op, "orchestratorId", orchArg, false); err != nil {
		return vp.Profile{}, err
	}
	orch, err := p.ActAs(op, "orchestratorId", orchArg)
	if err != nil {
		return vp.Profile{}, err
	}
	// Instance ids are folded like orchestrator ids: channels name them.
	instance = vp.NormalizeOrchestrator(instance)
	tbl := tableOf(instance)
	k := tbl.KeyOf(tenant, table.Values{"orch": orch, "instance": instance})
	var res vp.Profile
	err = table.Conflicts{Op: op, Max: maxUpsertAttempts, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "orchestratorId", "the profile is being updated by others; retry")
	}}.Retry(ctx, func() error {
		cur, err := s.st.Get(ctx, k)
		var pr vp.Profile
		cond := store.IfNotExists
		switch {
		case errors.Is(err, store.ErrNotFound):
			now := s.nowMS()
			pr = vp.Profile{ID: s.ids.New("prf"), CreationTime: now, Orchestrator: orch, InstanceID: instance}
		case err != nil:
			return records.Err(op, err)
		default:
			if pr, err = records.Decode[vp.Profile](op, cur); err != nil {
				return err
			}
			cond = store.IfVersion(cur.Version)
		}
		change(&pr)
		pr.UpdatedAt = s.nowMS()
		it, err := tbl.Item(op, tenant, pr)
		if err != nil {
			return err
		}
		err = records.Err(op, s.st.Write(ctx, store.Put(it, cond)))
		if !errors.Is(err, store.ErrConditionFailed) {
			res = pr // as written, or as it failed to be
		}
		return err
	})
	return res, err
}

// View is a profile with the presence rows of its instances.
type View struct {
	vp.Profile
	Instances []vp.Profile `json:"instances"`
}

// GetProfile returns an orchestrator's profile and its instances.
func (s *Service) GetProfile(ctx context.Context, p vp.Principal, orchArg string) (View, error) {
	const op = "get_profile"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return View{}, err
	}
	if err := vp.CheckName(op, "orchestratorId", orchArg, true); err != nil {
		return View{}, err
	}
	orch := vp.NormalizeOrchestrator(orchArg)
	rows, err := records.QueryAll(ctx, s.st, profiles.Query(tenant, store.Primary, table.Values{"orch": orch}), 1000)
	if err != nil {
		return View{}, records.Err(op, err)
	}
	if len(rows) == 0 {
		return View{}, vp.Errorf(op, vp.KindNotFound, "orchestratorId", "no profile for %q in this tenant; create it with update_profile or set_summary", orch)
	}
	view := View{Profile: vp.Profile{Orchestrator: orch}, Instances: []vp.Profile{}}
	for _, it := range rows {
		pr, err := records.Decode[vp.Profile](op, it)
		if err != nil {
			return View{}, err
		}
		if pr.InstanceID == "" {
			view.Profile = pr
		} else {
			view.Instances = append(view.Instances, pr)
		}
	}
	return view, nil
}

// ListPeers lists every profile and instance row of the tenant, most
// recently updated first.
func (s *Service) ListPeers(ctx context.Context, p vp.Principal, params listing.Params) (listing.Page[any], error) {
	const op = "list_peers"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	q := profiles.Query(tenant, store.GSI1, nil)
	q.Reverse = true
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op, Params: params, Query: q,
		LiteKeys: []string{"orchestratorId", "instanceId", "summary", "updatedAt"},
	}, func(it store.Item) (vp.Profile, bool, error) {
		pr, err := records.Decode[vp.Profile](op, it)
		return pr, err == nil, err
	})
}

// Orchestrators returns the distinct orchestrators of the tenant that have
// a profile or presence row. Errors are the store's.
func (s *Service) Orchestrators(ctx context.Context, tenant string) ([]string, error) {
	rows, err := records.QueryAll(ctx, s.st, profiles.Query(tenant, store.GSI1, nil), 10_000)
	if err != nil {
		return nil, err
	}
	partition := profiles.PK(tenant, store.Primary, table.Values{"orch": ""})
	seen := map[string]bool{}
	var out []string
	for _, it := range rows {
		orch := strings.TrimPrefix(it.Key.PK, partition)
		if !seen[orch] {
			seen[orch] = true
			out = append(out, orch)
		}
	}
	return out, nil
}

// HasProfile reports whether orch has a profile or presence row in the
// tenant: one query of its partition. Errors are the store's.
func (s *Service) HasProfile(ctx context.Context, tenant, orch string) (bool, error) {
	q := profiles.Query(tenant, store.Primary, table.Values{"orch": orch})
	q.Limit = 1
	rows, err := s.st.Query(ctx, q)
	return len(rows) > 0, err
}

// InstanceOwners returns the orchestrators of the tenant that run an
// instance with this id. Errors are the store's.
func (s *Service) InstanceOwners(ctx context.Context, tenant, instance string) ([]string, error) {
	rows, err := records.QueryAll(ctx, s.st, presence.Query(tenant, store.GSI2, table.Values{"instance": instance}), 100)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(rows))
	for i, it := range rows {
		out[i] = it.GSI[1].SK
	}
	return out, nil
}

// Identity is what whoami reports.
type Identity struct {
	Tenant        string   `json:"tenant"`
	Orchestrator  string   `json:"orchestratorId,omitempty"`
	ActsAs        []string `json:"actsAs"`
	ReadPrefixes  []string `json:"namespaceReadPrefixes"`
	WritePrefixes []string `json:"namespaceWritePrefixes"`
	Scopes        []string `json:"scopes"`
	Admin         bool     `json:"admin"`
}

// WhoAmI describes the caller's principal.
func (s *Service) WhoAmI(p vp.Principal) Identity {
	nz := func(v []string) []string {
		if v == nil {
			return []string{}
		}
		return v
	}
	return Identity{
		Tenant: p.Tenant, Orchestrator: p.DefaultOrchestrator(), ActsAs: nz(p.Orchestrators),
		ReadPrefixes: nz(p.ReadPrefixes), WritePrefixes: nz(p.WritePrefixes), Scopes: nz(p.Scopes), Admin: p.Admin,
	}
}
