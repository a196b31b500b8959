package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/oauth/rights"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Scope profiles are global (an admin defines them for every tenant); the
// tenant of a token comes from whoever approved it (or, for client
// credentials, from the client). All of them live in one partition.

// Built-in profile ids.
const (
	ProfileMaster   = rights.Master
	ProfileGeneric  = rights.Generic
	ProfileReadOnly = "public-readonly"
)

// Limits of a profile.
const (
	MaxProfileEntries     = 100
	MaxProfileDescription = 1024
)

// Profile is a scope profile: what a token of a client assigned to it may
// do inside the approving user's tenant. Empty lists grant nothing. On a
// person's approval, client-generic sets no ceiling and any other profile
// is one (package rights).
type Profile struct {
	ID                     string   `json:"profileId"`
	Description            string   `json:"description"`
	FromAllowList          []string `json:"fromAllowList"`
	NamespaceReadPrefixes  []string `json:"namespaceReadPrefixes"`
	NamespaceWritePrefixes []string `json:"namespaceWritePrefixes"`
	CreatedAt              int64    `json:"createdAt,omitempty"`
	UpdatedAt              int64    `json:"updatedAt,omitempty"`
}

// DefaultProfiles are seeded by SeedProfiles.
var DefaultProfiles = []Profile{
	{ID: ProfileMaster, Description: "Full admin: every namespace, every from-address. Only for clients an admin elevates; never given by self-registration.",
		FromAllowList: []string{vp.Wildcard}, NamespaceReadPrefixes: []string{vp.Wildcard}, NamespaceWritePrefixes: []string{vp.Wildcard}},
	{ID: ProfileGeneric, Description: "The default: the client gets what the person who approves it may do (the identity, tenant and namespaces of the token they sign in with, narrowed on the consent page); without a person (client credentials), nothing.",
		FromAllowList: []string{}, NamespaceReadPrefixes: []string{}, NamespaceWritePrefixes: []string{}},
	{ID: ProfileReadOnly, Description: "Read-only on the shared namespace global; cannot write or send messages.",
		FromAllowList: []string{}, NamespaceReadPrefixes: []string{"global"}, NamespaceWritePrefixes: []string{}},
}

func checkProfile(op string, p *Profile) error {
	if !vp.ValidSlug(p.ID) {
		return vp.Errorf(op, vp.KindInvalid, "profileId", "%q: use lower-case letters, digits, '-' and '_' (at most 63)", p.ID)
	}
	if err := vp.CheckText(op, "description", p.Description, MaxProfileDescription, false); err != nil {
		return err
	}
	lists := []struct {
		field string
		v     *[]string
	}{{"fromAllowList", &p.FromAllowList}, {"namespaceReadPrefixes", &p.NamespaceReadPrefixes}, {"namespaceWritePrefixes", &p.NamespaceWritePrefixes}}
	for _, l := range lists {
		if len(*l.v) > MaxProfileEntries {
			return vp.Errorf(op, vp.KindTooLarge, l.field, "has %d entries; the limit is %d", len(*l.v), MaxProfileEntries)
		}
		out := []string{}
		for _, e := range *l.v {
			e = strings.TrimSpace(e)
			if err := vp.CheckName(op, l.field, e, true); err != nil {
				return err
			}
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
		*l.v = out
	}
	for _, f := range p.FromAllowList {
		if vp.NormalizeOrchestrator(f) == vp.SystemCaller {
			return vp.E(op, vp.KindInvalid, "fromAllowList", "\"system\" is reserved for the server and the master token")
		}
	}
	return nil
}

// GetProfile returns a profile.
func (s *Server) GetProfile(ctx context.Context, id string) (Profile, error) {
	const op = "oauth.profile.get"
	p, _, err := getJSON[Profile](ctx, s.st, profileKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return Profile{}, vp.Errorf(op, vp.KindNotFound, "profileId", "no scope profile %q (seed the defaults with POST /admin/oauth/seed-profiles)", id)
	}
	if err != nil {
		return Profile{}, vp.Wrap(op, vp.KindInternal, err)
	}
	return p, nil
}

// ListProfiles returns every profile, by id.
func (s *Server) ListProfiles(ctx context.Context) ([]Profile, error) {
	rows, err := records.QueryAll(ctx, s.st, profiles.Query("", store.Primary, nil), 10_000)
	if err != nil {
		return nil, vp.Wrap("oauth.profile.list", vp.KindInternal, err)
	}
	out := []Profile{}
	for _, it := range rows {
		var p Profile
		if err := json.Unmarshal(it.Data, &p); err != nil {
			return nil, vp.Wrap("oauth.profile.list", vp.KindInternal, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// PutProfile creates or replaces a profile. The master profile is fixed.
func (s *Server) PutProfile(ctx context.Context, a Actor, p Profile) (Profile, error) {
	const op = "oauth.profile.put"
	if err := checkProfile(op, &p); err != nil {
		return Profile{}, err
	}
	if p.ID == ProfileMaster {
		return Profile{}, vp.E(op, vp.KindForbidden, "profileId", "the master profile is fixed (full access); create a profile of your own instead")
	}
	err := table.Conflicts{Op: op, Max: 5, Exhausted: func() error {
		return vp.E(op, vp.KindConflict, "profileId", "the profile kept changing underneath; retry")
	}}.Retry(ctx, func() error {
		now := s.nowMS()
		cond := store.IfNotExists
		it, err := s.st.Get(ctx, profileKey(p.ID))
		switch {
		case err == nil:
			var old Profile
			_ = json.Unmarshal(it.Data, &old)
			p.CreatedAt, p.UpdatedAt = old.CreatedAt, now
			cond = store.IfVersion(it.Version)
		case errors.Is(err, store.ErrNotFound):
			p.CreatedAt, p.UpdatedAt = now, 0
		default:
			return vp.Wrap(op, vp.KindInternal, err)
		}
		// A lost write stays a condition failure through the wrap: read
		// again.
		return vp.Wrap(op, vp.KindInternal, s.st.Write(ctx, store.Put(itemOf(profiles, p), cond),
			s.auditOp(AuditRecord{Action: "oauth.profile.put", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, Profile: p.ID})))
	})
	if err != nil {
		return Profile{}, err
	}
	return p, nil
}

// DeleteProfile removes a profile no client uses. The built-in master and
// client-generic profiles cannot be deleted.
func (s *Server) DeleteProfile(ctx context.Context, a Actor, id string) error {
	const op = "oauth.profile.delete"
	if id == ProfileMaster || id == ProfileGeneric {
		return vp.Errorf(op, vp.KindForbidden, "profileId", "%q is built in and cannot be deleted", id)
	}
	it, err := s.st.Get(ctx, profileKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return vp.Errorf(op, vp.KindNotFound, "profileId", "no scope profile %q", id)
	}
	if err != nil {
		return vp.Wrap(op, vp.KindInternal, err)
	}
	q := clients.Query("", store.GSI2, table.Values{"profileId": id})
	q.Limit = 5
	users, err := s.st.Query(ctx, q)
	if err != nil {
		return vp.Wrap(op, vp.KindInternal, err)
	}
	if len(users) > 0 {
		var ids []string
		for _, u := range users {
			var c Client
			_ = json.Unmarshal(u.Data, &c)
			ids = append(ids, c.ClientID)
		}
		return vp.Errorf(op, vp.KindConflict, "profileId", "%q is assigned to clients (%s); elevate them to another profile first", id, strings.Join(ids, ", "))
	}
	err = s.st.Write(ctx, store.Delete(it.Key, store.IfVersion(it.Version)),
		s.auditOp(AuditRecord{Action: "oauth.profile.delete", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, Profile: id}))
	if errors.Is(err, store.ErrConditionFailed) {
		return vp.E(op, vp.KindConflict, "profileId", "the profile changed while deleting it; retry")
	}
	return vp.Wrap(op, vp.KindInternal, err)
}

// SeedProfiles creates the default profiles that do not exist yet (it never
// overwrites an admin's edits) and returns the ids it created.
func (s *Server) SeedProfiles(ctx context.Context, a Actor) ([]string, error) {
	created := []string{}
	for _, p := range DefaultProfiles {
		p.CreatedAt = s.nowMS()
		err := s.st.Write(ctx, store.Put(itemOf(profiles, p), store.IfNotExists),
			s.auditOp(AuditRecord{Action: "oauth.profile.seed", Actor: a.ID, IP: a.IP, UserAgent: a.UserAgent, Profile: p.ID}))
		if errors.Is(err, store.ErrConditionFailed) {
			continue
		}
		if err != nil {
			return created, vp.Wrap("oauth.profile.seed", vp.KindInternal, err)
		}
		created = append(created, p.ID)
	}
	return created, nil
}

// profileOrDefault reads a profile; the built-ins work before they are
// seeded.
func (s *Server) profileOrDefault(ctx context.Context, id string) (Profile, error) {
	p, err := s.GetProfile(ctx, id)
	if vp.IsKind(err, vp.KindNotFound) {
		for _, d := range DefaultProfiles {
			if d.ID == id {
				return d, nil
			}
		}
	}
	if id == ProfileMaster && err == nil {
		return DefaultProfiles[0], nil // fixed, whatever is stored
	}
	return p, err
}

// ---- what a token gets (package rights) ----

// ceiling is the part of pr the grant rules read.
func ceiling(pr Profile) rights.Profile {
	return rights.Profile{ID: pr.ID, ActsAs: pr.FromAllowList, Read: pr.NamespaceReadPrefixes, Write: pr.NamespaceWritePrefixes}
}

// ---- helpers ----

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("oauth: encoding: " + err.Error())
	}
	return b
}
