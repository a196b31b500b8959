package coord

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Component keys. The table key is the unique key (type, name): registering
// is one conditional write. Previous revisions live in their own items,
// keyed by the component's id, so the component item never grows and a
// re-registered name starts a fresh history.
//
//	table  T#t#COMP#<type>#<name>   COMP          the component (current revision)
//	table  T#t#COMPHIST#<compId>    <rev 6 digits> a previous revision (the last MaxComponentHistory)
//	gsi1   T#t#COMPS                <id>          every component, newest first
//	gsi2   T#t#COMPTYPE#<type>      <id>          components of a type
//	gsi3   T#t#COMPTEAM#<team>      <id>          components of a team (sparse)

func componentKey(tenant, typ, name string) store.Key {
	return store.Key{PK: tp(tenant) + "COMP#" + typ + "#" + name, SK: "COMP"}
}

func componentHistoryPK(tenant, id string) string { return tp(tenant) + "COMPHIST#" + id }

func componentHistoryKey(tenant, id string, rev int) store.Key {
	return store.Key{PK: componentHistoryPK(tenant, id), SK: fmt.Sprintf("%06d", rev)}
}

func componentsPK(tenant string) string { return tp(tenant) + "COMPS" }

func componentTypePK(tenant, typ string) string { return tp(tenant) + "COMPTYPE#" + typ }

func componentTeamPK(tenant, team string) string { return tp(tenant) + "COMPTEAM#" + team }

// componentItem builds the stored item of c, refusing one whose JSON does
// not fit an item.
func componentItem(op, tenant string, c vp.Component) (store.Item, error) {
	it := store.Item{Key: componentKey(tenant, c.Type, c.Name), Data: encode(op, c)}
	if len(it.Data) > store.MaxItemBytes {
		return it, vp.Errorf(op, vp.KindTooLarge, "content", "encodes to %d bytes with the component's fields; the stored limit is %d bytes "+
			"(quotes, backslashes and control characters take more room once encoded) — shorten it or split the component", len(it.Data), store.MaxItemBytes)
	}
	it.GSI[0] = store.Key{PK: componentsPK(tenant), SK: c.ID}
	it.GSI[1] = store.Key{PK: componentTypePK(tenant, c.Type), SK: c.ID}
	if c.Team != "" {
		it.GSI[2] = store.Key{PK: componentTeamPK(tenant, c.Team), SK: c.ID}
	}
	return it, nil
}

// RegisterInput is a new component.
type RegisterInput struct {
	Name, Type, Team, Content, Version, Project, CreatedBy string
}

// RegisterComponent adds a component. (name, type) is unique in the
// tenant: of concurrent registrations of one name exactly one succeeds; the
// others get KindConflict and should use update_component.
func (s *Service) RegisterComponent(ctx context.Context, p vp.Principal, in RegisterInput) (vp.Component, error) {
	const op = "register_component"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Component{}, err
	}
	name, err := componentID(op, in.Name, in.Type)
	if err != nil {
		return vp.Component{}, err
	}
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		return vp.Component{}, err
	}
	c := vp.Component{Name: name, Type: in.Type}
	if err := applyComponent(op, &c, ComponentUpdate{Content: &in.Content, Version: &in.Version, Team: &in.Team, Project: &in.Project}); err != nil {
		return vp.Component{}, err
	}
	who, err := p.ActAs(op, "createdBy", in.CreatedBy)
	if err != nil {
		return vp.Component{}, err
	}
	now := s.nowMS()
	c.ID, c.CreationTime, c.CreatedAt, c.CreatedBy, c.Revision = s.ids.New("cmp"), now, now, who, 1
	it, err := componentItem(op, tenant, c)
	if err != nil {
		return vp.Component{}, err
	}
	err = s.st.Write(ctx, store.Put(it, store.IfNotExists))
	if errors.Is(err, store.ErrConditionFailed) {
		return vp.Component{}, vp.Errorf(op, vp.KindConflict, "name", "a %s named %q is already registered; change it with update_component (or delete_component it first)", c.Type, name)
	}
	if err != nil {
		return vp.Component{}, storeErr(op, err)
	}
	s.index(ctx, op, componentDoc(tenant, c))
	return c, nil
}

// GetComponent returns a component by name and type: its current revision,
// or with rev > 0 that earlier revision while it is kept.
func (s *Service) GetComponent(ctx context.Context, p vp.Principal, nameArg, typ string, rev int) (vp.Component, error) {
	const op = "get_component"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Component{}, err
	}
	name, err := componentID(op, nameArg, typ)
	if err != nil {
		return vp.Component{}, err
	}
	if rev < 0 {
		return vp.Component{}, vp.E(op, vp.KindInvalid, "revision", "must be positive (or omitted for the current revision)")
	}
	c, _, err := get[vp.Component](ctx, s, op, "name", name, componentKey(tenant, typ, name))
	if vp.IsKind(err, vp.KindNotFound) {
		return c, vp.Errorf(op, vp.KindNotFound, "name", "no %s named %q is registered in this tenant; list_components shows what is", typ, name)
	}
	if err != nil || rev == 0 || rev == c.Revision {
		return c, err
	}
	if rev > c.Revision {
		return vp.Component{}, vp.Errorf(op, vp.KindNotFound, "revision", "%s %q is at revision %d; there is no revision %d", typ, name, c.Revision, rev)
	}
	old, _, err := get[vp.Component](ctx, s, op, "revision", itoa64(int64(rev)), componentHistoryKey(tenant, c.ID, rev))
	if vp.IsKind(err, vp.KindNotFound) {
		return old, vp.Errorf(op, vp.KindNotFound, "revision", "revision %d of %s %q is no longer kept: only the last %d revisions before the current one (%d) are",
			rev, typ, name, vp.MaxComponentHistory, c.Revision)
	}
	return old, err
}

// ComponentUpdate changes a component's content or metadata; nil fields
// are left as they are.
type ComponentUpdate struct {
	Name, Type         string
	CallerOrchestrator string
	Content            *string
	Version            *string
	Team               *string
	Project            *string
}

// UpdateComponent writes a new revision: the current one is kept as a
// history item in the same transaction (the oldest beyond
// MaxComponentHistory is dropped). Only the creator or system may update.
// An update that changes nothing writes nothing.
func (s *Service) UpdateComponent(ctx context.Context, p vp.Principal, u ComponentUpdate) (vp.Component, error) {
	const op = "update_component"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Component{}, err
	}
	name, err := componentID(op, u.Name, u.Type)
	if err != nil {
		return vp.Component{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", u.CallerOrchestrator, false); err != nil {
		return vp.Component{}, err
	}
	if u.Content == nil && u.Version == nil && u.Team == nil && u.Project == nil {
		return vp.Component{}, vp.E(op, vp.KindInvalid, "", "nothing to update: pass at least one of content, version, team, project")
	}
	if err := applyComponent(op, &vp.Component{}, u); err != nil {
		return vp.Component{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", u.CallerOrchestrator)
	if err != nil {
		return vp.Component{}, err
	}
	for attempt := 0; attempt < 8; attempt++ {
		if err := pause(ctx, attempt); err != nil {
			return vp.Component{}, vp.Wrap(op, vp.KindInternal, err)
		}
		prev, cur, err := s.ownedComponent(ctx, op, tenant, who, u.Type, name)
		if err != nil {
			return vp.Component{}, err
		}
		next := prev
		_ = applyComponent(op, &next, u) // validated above
		if next.Content == prev.Content && next.Version == prev.Version && next.Team == prev.Team && next.Project == prev.Project {
			return prev, nil
		}
		next.Revision = prev.Revision + 1
		next.UpdatedAt, next.UpdatedBy = max(s.nowMS(), prev.CreatedAt), who
		it, err := componentItem(op, tenant, next)
		if err != nil {
			return vp.Component{}, err
		}
		ops := []store.Op{
			store.Put(it, store.IfVersion(cur.Version)),
			store.Put(store.Item{Key: componentHistoryKey(tenant, prev.ID, prev.Revision), Data: cur.Data}, store.IfNotExists),
		}
		if drop := prev.Revision - vp.MaxComponentHistory; drop >= 1 {
			ops = append(ops, store.Delete(componentHistoryKey(tenant, prev.ID, drop), store.Always))
		}
		err = s.st.Write(ctx, ops...)
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return vp.Component{}, storeErr(op, err)
		}
		s.index(ctx, op, componentDoc(tenant, next))
		return next, nil
	}
	return vp.Component{}, vp.E(op, vp.KindConflict, "name", "the component is being changed by others at the same time; retry")
}

// DeleteComponentResult reports a deletion.
type DeleteComponentResult struct {
	Deleted          bool `json:"deleted"`
	RevisionsDeleted int  `json:"revisionsDeleted"`
}

// DeleteComponent removes a component and its kept revisions in one
// transaction. Only the creator or system may delete.
func (s *Service) DeleteComponent(ctx context.Context, p vp.Principal, nameArg, typ, caller string) (DeleteComponentResult, error) {
	const op = "delete_component"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return DeleteComponentResult{}, err
	}
	name, err := componentID(op, nameArg, typ)
	if err != nil {
		return DeleteComponentResult{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return DeleteComponentResult{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return DeleteComponentResult{}, err
	}
	for attempt := 0; attempt < 8; attempt++ {
		if err := pause(ctx, attempt); err != nil {
			return DeleteComponentResult{}, vp.Wrap(op, vp.KindInternal, err)
		}
		c, cur, err := s.ownedComponent(ctx, op, tenant, who, typ, name)
		if err != nil {
			return DeleteComponentResult{}, err
		}
		hist, err := s.queryAll(ctx, store.Query{PK: componentHistoryPK(tenant, c.ID)}, store.MaxTransactOps-1)
		if err != nil {
			return DeleteComponentResult{}, storeErr(op, err)
		}
		ops := []store.Op{store.Delete(cur.Key, store.IfVersion(cur.Version))}
		for _, h := range hist {
			ops = append(ops, store.Delete(h.Key, store.Always))
		}
		err = s.st.Write(ctx, ops...)
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return DeleteComponentResult{}, storeErr(op, err)
		}
		s.unindex(ctx, op, tenant, KindComponent, componentDocID(c.Type, c.Name))
		return DeleteComponentResult{Deleted: true, RevisionsDeleted: len(hist)}, nil
	}
	return DeleteComponentResult{}, vp.E(op, vp.KindConflict, "name", "the component is being changed by others at the same time; retry")
}

// ownedComponent reads a component that who (its creator, or system) may change.
func (s *Service) ownedComponent(ctx context.Context, op, tenant, who, typ, name string) (vp.Component, store.Item, error) {
	c, cur, err := get[vp.Component](ctx, s, op, "name", name, componentKey(tenant, typ, name))
	if vp.IsKind(err, vp.KindNotFound) {
		return c, cur, vp.Errorf(op, vp.KindNotFound, "name", "no %s named %q is registered in this tenant; register_component adds it", typ, name)
	}
	if err != nil {
		return c, cur, err
	}
	if who != c.CreatedBy && who != vp.SystemCaller {
		return c, cur, vp.Errorf(op, vp.KindForbidden, "callerOrchestrator", "only the component's creator (%q) or system may change it; %q may not", c.CreatedBy, who)
	}
	return c, cur, nil
}

// ListComponentsInput filters the registry.
type ListComponentsInput struct {
	Type, Team string
	Params     listing.Params
}

// ListComponents lists components newest first, optionally of one type
// and/or team.
func (s *Service) ListComponents(ctx context.Context, p vp.Principal, in ListComponentsInput) (listing.Page[any], error) {
	const op = "list_components"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if in.Type != "" {
		if err := checkComponentType(op, in.Type); err != nil {
			return listing.Page[any]{}, err
		}
	}
	team := strings.TrimSpace(in.Team)
	if err := vp.CheckKeyText(op, "team", team, vp.MaxShortTextBytes, false); err != nil {
		return listing.Page[any]{}, err
	}
	q := store.Query{Index: store.GSI1, PK: componentsPK(tenant), Reverse: true}
	switch {
	case team != "":
		q.Index, q.PK = store.GSI3, componentTeamPK(tenant, team)
	case in.Type != "":
		q.Index, q.PK = store.GSI2, componentTypePK(tenant, in.Type)
	}
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + in.Type + "\x00" + team, Params: in.Params, Query: q,
		LiteKeys: []string{"name", "type", "team"},
	}, func(it store.Item) (vp.Component, bool, error) {
		c, err := decode[vp.Component](op, it)
		if err != nil {
			return c, false, err
		}
		return c, in.Type == "" || c.Type == in.Type, nil
	})
}

// componentID validates the identity of a component: its name (returned
// trimmed) and its type.
func componentID(op, name, typ string) (string, error) {
	name = strings.TrimSpace(name)
	if err := vp.CheckKeyText(op, "name", name, vp.MaxComponentNameBytes, true); err != nil {
		return "", err
	}
	return name, checkComponentType(op, typ)
}

func checkComponentType(op, typ string) error {
	if !slices.Contains(vp.ComponentTypes, typ) {
		return vp.Errorf(op, vp.KindInvalid, "type", "%q is not a component type; use one of %s", typ, strings.Join(vp.ComponentTypes, ", "))
	}
	return nil
}

// applyComponent validates u's fields and applies them to c.
func applyComponent(op string, c *vp.Component, u ComponentUpdate) error {
	if u.Content != nil {
		if err := vp.CheckText(op, "content", *u.Content, vp.MaxComponentContentBytes, true); err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(*u.Content))
		c.Content, c.ContentHash = *u.Content, hex.EncodeToString(sum[:])
	}
	if u.Version != nil {
		if err := vp.CheckKeyText(op, "version", *u.Version, vp.MaxNameBytes, false); err != nil {
			return err
		}
		c.Version = *u.Version
	}
	if u.Team != nil {
		team := strings.TrimSpace(*u.Team)
		if err := vp.CheckKeyText(op, "team", team, vp.MaxShortTextBytes, false); err != nil {
			return err
		}
		c.Team = team
	}
	if u.Project != nil {
		if err := vp.CheckKeyText(op, "project", *u.Project, vp.MaxShortTextBytes, false); err != nil {
			return err
		}
		c.Project = *u.Project
	}
	return nil
}
