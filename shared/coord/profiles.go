package coord

import (
	"context"
	"errors"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// ProfileUpdate is a partial update: nil fields are left as they are.
type ProfileUpdate struct {
	Orchestrator string
	InstanceID   string
	Name         *string
	Static       *vp.ProfileStatic
	Dynamic      *vp.ProfileDyn
}

// UpdateProfile creates or partially updates a profile row.
func (s *Service) UpdateProfile(ctx context.Context, p vp.Principal, u ProfileUpdate) (vp.Profile, error) {
	const op = "update_profile"
	if err := vp.CheckName(op, "instanceId", u.InstanceID, false); err != nil {
		return vp.Profile{}, err
	}
	if u.Name != nil {
		if err := vp.CheckText(op, "name", *u.Name, vp.MaxShortTextBytes, false); err != nil {
			return vp.Profile{}, err
		}
	}
	if u.Static != nil {
		for field, v := range map[string]string{"static.role": u.Static.Role, "static.workspace": u.Static.Workspace} {
			if err := vp.CheckText(op, field, v, vp.MaxShortTextBytes, false); err != nil {
				return vp.Profile{}, err
			}
		}
		if len(u.Static.Capabilities) > 100 {
			return vp.Profile{}, vp.E(op, vp.KindTooLarge, "static.capabilities", "has more than 100 entries")
		}
		for _, c := range u.Static.Capabilities {
			if err := vp.CheckText(op, "static.capabilities", c, vp.MaxShortTextBytes, true); err != nil {
				return vp.Profile{}, err
			}
		}
	}
	if u.Dynamic != nil {
		if err := vp.CheckText(op, "dynamic.currentTask", u.Dynamic.CurrentTask, vp.MaxShortTextBytes, false); err != nil {
			return vp.Profile{}, err
		}
	}
	return s.upsertProfile(ctx, op, p, u.Orchestrator, u.InstanceID, func(pr *vp.Profile) {
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
	if err := vp.CheckText(op, "summary", summary, vp.MaxSummaryBytes, true); err != nil {
		return vp.Profile{}, err
	}
	return s.upsertProfile(ctx, op, p, orch, instance, func(pr *vp.Profile) {
		pr.Summary = summary
		if pr.Dynamic == nil {
			pr.Dynamic = &vp.ProfileDyn{}
		}
		pr.Dynamic.LastSeen = s.nowMS()
	})
}

// upsertProfile applies change to the row (orch, instance) with optimistic
// concurrency, retrying when another writer got there first.
func (s *Service) upsertProfile(ctx context.Context, op string, p vp.Principal, orchArg, instance string, change func(*vp.Profile)) (vp.Profile, error) {
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
	k := profileKey(tenant, orch, instance)
	for attempt := 0; attempt < 8; attempt++ {
		cur, err := s.st.Get(ctx, k)
		var pr vp.Profile
		cond := store.IfNotExists
		switch {
		case errors.Is(err, store.ErrNotFound):
			now := s.nowMS()
			pr = vp.Profile{ID: s.ids.New("prf"), CreationTime: now, Orchestrator: orch, InstanceID: instance}
		case err != nil:
			return vp.Profile{}, storeErr(op, err)
		default:
			if pr, err = decode[vp.Profile](op, cur); err != nil {
				return vp.Profile{}, err
			}
			cond = store.IfVersion(cur.Version)
		}
		change(&pr)
		pr.UpdatedAt = s.nowMS()
		it := store.Item{Key: k, Data: encode(op, pr)}
		it.GSI[0] = peersIndex(tenant, pr.UpdatedAt, orch, instance)
		if instance != "" {
			it.GSI[1] = instanceIndex(tenant, instance, orch)
		}
		err = s.st.Write(ctx, store.Put(it, cond))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		return pr, storeErr(op, err)
	}
	return vp.Profile{}, vp.E(op, vp.KindConflict, "orchestratorId", "the profile is being updated by others; retry")
}

// ProfileView is a profile with the presence rows of its instances.
type ProfileView struct {
	vp.Profile
	Instances []vp.Profile `json:"instances"`
}

// GetProfile returns an orchestrator's profile and its instances.
func (s *Service) GetProfile(ctx context.Context, p vp.Principal, orchArg string) (ProfileView, error) {
	const op = "get_profile"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return ProfileView{}, err
	}
	if err := vp.CheckName(op, "orchestratorId", orchArg, true); err != nil {
		return ProfileView{}, err
	}
	orch := vp.NormalizeOrchestrator(orchArg)
	rows, err := s.queryAll(ctx, store.Query{PK: profileKey(tenant, orch, "").PK}, 1000)
	if err != nil {
		return ProfileView{}, storeErr(op, err)
	}
	if len(rows) == 0 {
		return ProfileView{}, vp.Errorf(op, vp.KindNotFound, "orchestratorId", "no profile for %q in this tenant; create it with update_profile or set_summary", orch)
	}
	view := ProfileView{Profile: vp.Profile{Orchestrator: orch}, Instances: []vp.Profile{}}
	for _, it := range rows {
		pr, err := decode[vp.Profile](op, it)
		if err != nil {
			return ProfileView{}, err
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
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op, Params: params,
		Query:    store.Query{Index: store.GSI1, PK: peersIndex(tenant, 0, "", "").PK, Reverse: true},
		LiteKeys: []string{"orchestratorId", "instanceId", "summary", "updatedAt"},
	}, func(it store.Item) (vp.Profile, bool, error) {
		pr, err := decode[vp.Profile](op, it)
		return pr, err == nil, err
	})
}

// orchestrators returns the distinct orchestrators that have a profile row.
func (s *Service) orchestrators(ctx context.Context, tenant string) ([]string, error) {
	rows, err := s.queryAll(ctx, store.Query{Index: store.GSI1, PK: peersIndex(tenant, 0, "", "").PK}, 10_000)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, it := range rows {
		orch := strings.TrimPrefix(it.Key.PK, tp(tenant)+"PROFILE#")
		if !seen[orch] {
			seen[orch] = true
			out = append(out, orch)
		}
	}
	return out, nil
}

// instanceOwners returns the orchestrators that run an instance with this id.
func (s *Service) instanceOwners(ctx context.Context, tenant, instance string) ([]string, error) {
	rows, err := s.queryAll(ctx, store.Query{Index: store.GSI2, PK: instanceIndex(tenant, instance, "").PK}, 100)
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
