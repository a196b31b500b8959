// Package component is the registry of a team's reusable components —
// agents, skills, hooks and plugins — with their content, a bounded
// history of revisions, and keyword search by name, team and description.
package component

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Components declares where components live. The table key is the unique
// key (type, name): registering is one conditional write.
var Components = table.Declare(table.Schema[vp.Component]{
	Entity: "component",
	Primary: table.Key{PK: "COMP#{type}#{name}", SK: "COMP",
		Pattern: "component by (type, name)", Note: "unique key: register_component is one IfNotExists put"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "COMPS", SK: "{id}", Pattern: "components, newest first"},
		{Index: store.GSI2, PK: "COMPTYPE#{type}", SK: "{id}", Pattern: "components of a type"},
		{Index: store.GSI3, PK: "COMPTEAM#{team}", SK: "{id}", Pattern: "components of a team", Note: "team index sparse"},
	},
	Fields: func(c vp.Component) table.Values {
		return table.Values{"type": c.Type, "name": c.Name, "id": c.ID, "team": c.Team}
	},
})

// revisions declares the previous revisions of a component. They live in
// their own items, keyed by the component's id, so the component item never
// grows and a re-registered name starts a fresh history.
var revisions = table.Declare(table.Schema[vp.Component]{
	Entity: "component revision",
	Primary: table.Key{PK: "COMPHIST#{compId}", SK: "{revision}",
		Pattern: "kept previous revisions of a component", Note: "revision = 6 digits; last 50; written in the update's transaction"},
	Fields: func(c vp.Component) table.Values {
		return table.Values{"compId": c.ID, "revision": fmt.Sprintf("%06d", c.Revision)}
	},
})

// Tables describes the component keys for shared/store/KEYS.md.
func Tables() []table.Doc { return []table.Doc{Components.Doc(), revisions.Doc()} }

func componentKey(tenant, typ, name string) store.Key {
	return Components.KeyOf(tenant, table.Values{"type": typ, "name": name})
}

// Kind is the search kind of component documents.
const Kind = "component"

// Doc is a component's keyword-search document: the name (weighted), the
// team and project, and the description of the file's front matter — not
// the whole file, whose boilerplate would drown the name. Its id is the
// component's primary key (type and name), which is what a hit must be
// read back by.
func Doc(tenant string, c vp.Component) search.Doc {
	text := strings.TrimSpace(strings.Join([]string{c.Team, c.Project, frontMatterDescription(c.Content)}, "\n"))
	return search.Doc{Tenant: search.KindPartition(tenant, Kind), ID: DocID(c.Type, c.Name), Kind: Kind,
		Type: c.Type, Owner: c.CreatedBy, Title: c.Name, Text: text, CreatedAt: c.CreatedAt}
}

// DocID is "cmp:<type>:<name>"; types contain no ":", so the first two
// separators split it back.
func DocID(typ, name string) string { return "cmp:" + typ + ":" + name }

// KeyOfDoc is the store key of the component a search document names;
// false when id is not a component document's.
func KeyOfDoc(tenant, id string) (store.Key, bool) {
	rest, ok := strings.CutPrefix(id, "cmp:")
	if !ok {
		return store.Key{}, false
	}
	typ, name, ok := strings.Cut(rest, ":")
	return componentKey(tenant, typ, name), ok
}

// frontMatterDescription returns the description: line of a leading YAML
// front matter block (agents' and skills' files carry one), or "".
func frontMatterDescription(content string) string {
	body, ok := strings.CutPrefix(content, "---\n")
	if !ok {
		return ""
	}
	for n, line := range strings.Split(body, "\n") {
		if n > 100 || strings.TrimSpace(line) == "---" {
			return ""
		}
		if v, ok := strings.CutPrefix(line, "description:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return ""
}

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	// Search, when set, indexes every component written for keyword search.
	Search *search.Writer
}

// Service is the component registry.
type Service struct {
	st      store.Store
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
	search  *search.Writer
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now), search: o.Search}
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// item builds the stored item of c, refusing one whose JSON does not fit
// an item.
func item(op, tenant string, c vp.Component) (store.Item, error) {
	it, err := Components.Item(op, tenant, c)
	if err != nil {
		return it, err
	}
	if len(it.Data) > store.MaxItemBytes {
		return it, vp.Errorf(op, vp.KindTooLarge, "content", "encodes to %d bytes with the component's fields; the stored limit is %d bytes "+
			"(quotes, backslashes and control characters take more room once encoded) — shorten it or split the component", len(it.Data), store.MaxItemBytes)
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
	name, err := identity(op, in.Name, in.Type)
	if err != nil {
		return vp.Component{}, err
	}
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		return vp.Component{}, err
	}
	c := vp.Component{Name: name, Type: in.Type}
	if err := apply(op, &c, Update{Content: &in.Content, Version: &in.Version, Team: &in.Team, Project: &in.Project}); err != nil {
		return vp.Component{}, err
	}
	who, err := p.ActAs(op, "createdBy", in.CreatedBy)
	if err != nil {
		return vp.Component{}, err
	}
	now := s.nowMS()
	c.ID, c.CreationTime, c.CreatedAt, c.CreatedBy, c.Revision = s.ids.New("cmp"), now, now, who, 1
	it, err := item(op, tenant, c)
	if err != nil {
		return vp.Component{}, err
	}
	ix, err := s.search.Prepare(ctx, tenant, Kind, DocID(c.Type, c.Name))
	if err != nil {
		return vp.Component{}, err
	}
	err = s.st.Write(ctx, append([]store.Op{store.Put(it, store.IfNotExists)}, ix.Ops()...)...)
	if errors.Is(err, store.ErrConditionFailed) {
		return vp.Component{}, vp.Errorf(op, vp.KindConflict, "name", "a %s named %q is already registered; change it with update_component (or delete_component it first)", c.Type, name)
	}
	if err != nil {
		return vp.Component{}, records.Err(op, err)
	}
	s.search.Done(ctx, op, ix, Doc(tenant, c))
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
	name, err := identity(op, nameArg, typ)
	if err != nil {
		return vp.Component{}, err
	}
	if rev < 0 {
		return vp.Component{}, vp.E(op, vp.KindInvalid, "revision", "must be positive (or omitted for the current revision)")
	}
	c, _, err := Components.Get(ctx, s.st, op, "name", name, componentKey(tenant, typ, name))
	if vp.IsKind(err, vp.KindNotFound) {
		return c, vp.Errorf(op, vp.KindNotFound, "name", "no %s named %q is registered in this tenant; list_components shows what is", typ, name)
	}
	if err != nil || rev == 0 || rev == c.Revision {
		return c, err
	}
	if rev > c.Revision {
		return vp.Component{}, vp.Errorf(op, vp.KindNotFound, "revision", "%s %q is at revision %d; there is no revision %d", typ, name, c.Revision, rev)
	}
	old, _, err := revisions.Get(ctx, s.st, op, "revision", fmt.Sprint(rev), revisions.Key(tenant, vp.Component{ID: c.ID, Revision: rev}))
	if vp.IsKind(err, vp.KindNotFound) {
		return old, vp.Errorf(op, vp.KindNotFound, "revision", "revision %d of %s %q is no longer kept: only the last %d revisions before the current one (%d) are",
			rev, typ, name, vp.MaxComponentHistory, c.Revision)
	}
	return old, err
}

// Update changes a component's content or metadata; nil fields are left
// as they are.
type Update struct {
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
func (s *Service) UpdateComponent(ctx context.Context, p vp.Principal, u Update) (vp.Component, error) {
	const op = "update_component"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return vp.Component{}, err
	}
	name, err := identity(op, u.Name, u.Type)
	if err != nil {
		return vp.Component{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", u.CallerOrchestrator, false); err != nil {
		return vp.Component{}, err
	}
	if u.Content == nil && u.Version == nil && u.Team == nil && u.Project == nil {
		return vp.Component{}, vp.E(op, vp.KindInvalid, "", "nothing to update: pass at least one of content, version, team, project")
	}
	if err := apply(op, &vp.Component{}, u); err != nil {
		return vp.Component{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", u.CallerOrchestrator)
	if err != nil {
		return vp.Component{}, err
	}
	var next vp.Component
	var ix search.Pending
	changed := false
	err = table.Retry(ctx, op, "name", name, func() error {
		prev, cur, err := s.owned(ctx, op, tenant, who, u.Type, name)
		if err != nil {
			return err
		}
		next = prev
		_ = apply(op, &next, u) // validated above
		if changed = next.Content != prev.Content || next.Version != prev.Version || next.Team != prev.Team || next.Project != prev.Project; !changed {
			next = prev
			return nil
		}
		next.Revision = prev.Revision + 1
		next.UpdatedAt, next.UpdatedBy = max(s.nowMS(), prev.CreatedAt), who
		it, err := item(op, tenant, next)
		if err != nil {
			return err
		}
		// The revision item keeps the stored bytes of the previous revision as they were.
		ops := []store.Op{
			store.Put(it, store.IfVersion(cur.Version)),
			store.Put(store.Item{Key: revisions.Key(tenant, prev), Data: cur.Data}, store.IfNotExists),
		}
		if drop := prev.Revision - vp.MaxComponentHistory; drop >= 1 {
			ops = append(ops, store.Delete(revisions.Key(tenant, vp.Component{ID: prev.ID, Revision: drop}), store.Always))
		}
		if ix, err = s.search.Prepare(ctx, tenant, Kind, DocID(next.Type, next.Name)); err != nil {
			return err
		}
		return s.st.Write(ctx, append(ops, ix.Ops()...)...)
	})
	if vp.IsKind(err, vp.KindConflict) { // the retries ran out: say it as this tool always has
		return vp.Component{}, vp.E(op, vp.KindConflict, "name", "the component is being changed by others at the same time; retry")
	}
	if err != nil {
		return vp.Component{}, err
	}
	if changed {
		s.search.Done(ctx, op, ix, Doc(tenant, next))
	}
	return next, nil
}

// DeleteResult reports a deletion.
type DeleteResult struct {
	Deleted          bool `json:"deleted"`
	RevisionsDeleted int  `json:"revisionsDeleted"`
}

// DeleteComponent removes a component and its kept revisions in one
// transaction. Only the creator or system may delete.
func (s *Service) DeleteComponent(ctx context.Context, p vp.Principal, nameArg, typ, caller string) (DeleteResult, error) {
	const op = "delete_component"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return DeleteResult{}, err
	}
	name, err := identity(op, nameArg, typ)
	if err != nil {
		return DeleteResult{}, err
	}
	if err := vp.CheckName(op, "callerOrchestrator", caller, false); err != nil {
		return DeleteResult{}, err
	}
	who, err := p.ActAs(op, "callerOrchestrator", caller)
	if err != nil {
		return DeleteResult{}, err
	}
	var c vp.Component
	var hist []store.Item
	var ix search.Pending
	err = table.Retry(ctx, op, "name", name, func() error {
		var cur store.Item
		var err error
		if c, cur, err = s.owned(ctx, op, tenant, who, typ, name); err != nil {
			return err
		}
		q := revisions.Query(tenant, store.Primary, table.Values{"compId": c.ID})
		if hist, err = records.QueryAll(ctx, s.st, q, store.MaxTransactOps-1); err != nil {
			return err
		}
		ops := []store.Op{store.Delete(cur.Key, store.IfVersion(cur.Version))}
		for _, h := range hist {
			ops = append(ops, store.Delete(h.Key, store.Always))
		}
		if ix, err = s.search.Prepare(ctx, tenant, Kind, DocID(c.Type, c.Name)); err != nil {
			return err
		}
		if ops, err = s.search.Add(ctx, s.st, ops, ix); err != nil {
			return err
		}
		return s.st.Write(ctx, ops...)
	})
	if vp.IsKind(err, vp.KindConflict) { // the retries ran out: say it as this tool always has
		return DeleteResult{}, vp.E(op, vp.KindConflict, "name", "the component is being changed by others at the same time; retry")
	}
	if err != nil {
		return DeleteResult{}, err
	}
	s.search.Done(ctx, op, ix)
	return DeleteResult{Deleted: true, RevisionsDeleted: len(hist)}, nil
}

// owned reads a component that who (its creator, or system) may change.
func (s *Service) owned(ctx context.Context, op, tenant, who, typ, name string) (vp.Component, store.Item, error) {
	c, cur, err := Components.Get(ctx, s.st, op, "name", name, componentKey(tenant, typ, name))
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

// ListInput filters the registry.
type ListInput struct {
	Type, Team string
	Params     listing.Params
}

// ListComponents lists components newest first, optionally of one type
// and/or team.
func (s *Service) ListComponents(ctx context.Context, p vp.Principal, in ListInput) (listing.Page[any], error) {
	const op = "list_components"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if in.Type != "" {
		if err := CheckType(op, in.Type); err != nil {
			return listing.Page[any]{}, err
		}
	}
	team := strings.TrimSpace(in.Team)
	if err := vp.CheckKeyText(op, "team", team, vp.MaxShortTextBytes, false); err != nil {
		return listing.Page[any]{}, err
	}
	q := Components.Query(tenant, store.GSI1, nil)
	switch {
	case team != "":
		q = Components.Query(tenant, store.GSI3, table.Values{"team": team})
	case in.Type != "":
		q = Components.Query(tenant, store.GSI2, table.Values{"type": in.Type})
	}
	q.Reverse = true
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + in.Type + "\x00" + team, Params: in.Params, Query: q,
		LiteKeys: []string{"name", "type", "team"},
	}, func(it store.Item) (vp.Component, bool, error) {
		c, err := records.Decode[vp.Component](op, it)
		if err != nil {
			return c, false, err
		}
		return c, in.Type == "" || c.Type == in.Type, nil
	})
}

// Limits bound a component's fields, declared once for register_component
// and update_component; get_component and delete_component take the name.
type Limits struct{ Name, Content, Version, Team, Project vp.Limit }

func componentLimits() Limits {
	return Limits{
		Name:    vp.MaxBytes("name", vp.MaxComponentNameBytes),
		Content: vp.MaxBytes("content", vp.MaxComponentContentBytes),
		Version: vp.MaxBytes("version", vp.MaxNameBytes),
		Team:    vp.MaxBytes("team", vp.MaxShortTextBytes),
		Project: vp.MaxBytes("project", vp.MaxShortTextBytes),
	}
}

// Limits are register_component's limits.
func (RegisterInput) Limits() Limits { return componentLimits() }

// Limits are update_component's limits.
func (Update) Limits() Limits { return componentLimits() }

// NameLimit bounds a component's name, as every component tool takes it.
func NameLimit() vp.Limit { return componentLimits().Name }

// identity validates the identity of a component: its name (returned
// trimmed) and its type.
func identity(op, name, typ string) (string, error) {
	name = strings.TrimSpace(name)
	if err := NameLimit().KeyText(op, name, true); err != nil {
		return "", err
	}
	return name, CheckType(op, typ)
}

// CheckType accepts one of vp.ComponentTypes (search_components checks its
// filter with it too).
func CheckType(op, typ string) error {
	if !slices.Contains(vp.ComponentTypes, typ) {
		return vp.Errorf(op, vp.KindInvalid, "type", "%q is not a component type; use one of %s", typ, strings.Join(vp.ComponentTypes, ", "))
	}
	return nil
}

// apply validates u's fields and applies them to c.
func apply(op string, c *vp.Component, u Update) error {
	lim := u.Limits()
	if u.Content != nil {
		if err := lim.Content.Text(op, *u.Content, true); err != nil {
			return err
		}
		sum := sha256.Sum256([]byte(*u.Content))
		c.Content, c.ContentHash = *u.Content, hex.EncodeToString(sum[:])
	}
	if u.Version != nil {
		if err := lim.Version.KeyText(op, *u.Version, false); err != nil {
			return err
		}
		c.Version = *u.Version
	}
	if u.Team != nil {
		team := strings.TrimSpace(*u.Team)
		if err := lim.Team.KeyText(op, team, false); err != nil {
			return err
		}
		c.Team = team
	}
	if u.Project != nil {
		if err := lim.Project.KeyText(op, *u.Project, false); err != nil {
			return err
		}
		c.Project = *u.Project
	}
	return nil
}
