// Package rights decides what an OAuth grant carries: the rights of the
// person who approved it (the token they signed in with on the consent
// page), under the ceiling an admin set for the client (its scope profile),
// narrowed by what the person chose on the page — never more than that
// token.
//
// The default profile, client-generic, sets no ceiling on a person's
// approval: the client gets the person's identity, tenant and namespaces
// with no admin step. Any other profile an admin assigns is a ceiling
// (profile ∩ person). A grant without a person (client_credentials) gets the
// profile's lists alone, so client-generic gives it nothing; an admin
// approval gives the admin flag only with the master profile.
package rights

import (
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Built-in profile ids whose meaning the rules depend on.
const (
	Master  = "master"
	Generic = "client-generic"
)

// Approver is who approved an authorization: the lists of the token (or
// master token) that signed in on the consent page, kept with the grant so
// that a refresh never gives more than the approver had, and the token's
// hash, so that the grant ends when that token is revoked.
type Approver struct {
	TokenID string   `json:"tokenId"`
	Tenant  string   `json:"tenant"`
	ActsAs  []string `json:"actsAs"`
	Read    []string `json:"read"`
	Write   []string `json:"write"`
	Admin   bool     `json:"admin,omitempty"`
	// Hash is the SHA-256 (hex) of the approving token's secret; empty for
	// the master token, which has no record to revoke.
	Hash string `json:"tokenHash,omitempty"`
}

// ApproverOf is the approval of principal p, signed in with the token of
// hash hashHex ("" for the master token).
func ApproverOf(p vp.Principal, hashHex string) Approver {
	return Approver{TokenID: p.TokenID, Tenant: p.Tenant, ActsAs: nz(p.Orchestrators), Read: nz(p.ReadPrefixes), Write: nz(p.WritePrefixes), Admin: p.Admin, Hash: hashHex}
}

// Principal is what the approver may do.
func (a Approver) Principal() vp.Principal {
	return vp.Principal{Tenant: a.Tenant, Orchestrators: a.ActsAs, ReadPrefixes: a.Read, WritePrefixes: a.Write, Admin: a.Admin}
}

// Narrowing is what the person kept on the consent page: with Set, only
// the namespaces listed (each one of the approver's own entries); without,
// everything.
type Narrowing struct {
	Set   bool     `json:"set,omitempty"`
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// MaxNarrowingEntries bounds each list of a narrowing.
const MaxNarrowingEntries = 100

// NarrowingOf reads the consent form's choice: set says the form carried
// one; read and write are the namespaces left checked. Every entry must be
// within the approver's token's lists, as the page offered it: anything
// else is a forged field, refused naming it.
func NarrowingOf(op string, a Approver, set bool, read, write []string) (Narrowing, error) {
	if !set {
		return Narrowing{}, nil
	}
	n := Narrowing{Set: true, Read: []string{}, Write: []string{}}
	for _, l := range []struct {
		field string
		in    []string
		have  []string
		out   *[]string
	}{{"read", read, a.Read, &n.Read}, {"write", write, a.Write, &n.Write}} {
		if len(l.in) > MaxNarrowingEntries {
			return Narrowing{}, vp.Errorf(op, vp.KindTooLarge, l.field, "has %d entries; the limit is %d", len(l.in), MaxNarrowingEntries)
		}
		for _, v := range l.in {
			if !slices.ContainsFunc(l.have, func(h string) bool { return covers(h, v) }) {
				return Narrowing{}, vp.Errorf(op, vp.KindForbidden, l.field, "%q is not one of the %s namespaces of the token you signed in with (%s)", v, l.field, strings.Join(l.have, ", "))
			}
			if !slices.Contains(*l.out, v) {
				*l.out = append(*l.out, v)
			}
		}
	}
	return n, nil
}

// Profile is the part of a scope profile the rules read.
type Profile struct {
	ID                  string
	ActsAs, Read, Write []string
}

// Grant is what one token carries.
type Grant struct {
	Tenant  string
	Profile string
	ActsAs  []string
	Read    []string
	Write   []string
	Admin   bool
}

// Principal is what the grant may do.
func (g Grant) Principal() vp.Principal {
	return vp.Principal{Tenant: g.Tenant, Orchestrators: g.ActsAs, ReadPrefixes: g.Read, WritePrefixes: g.Write, Admin: g.Admin}
}

// For is the grant of a client on profile pr in tenant, approved by ap
// (nil: no person, client credentials) and narrowed by n (nil: not).
func For(pr Profile, tenant string, ap *Approver, n *Narrowing) Grant {
	g := Grant{Tenant: tenant, Profile: pr.ID, ActsAs: nz(pr.ActsAs), Read: nz(pr.Read), Write: nz(pr.Write)}
	if ap == nil || ap.Admin {
		// No person, or an admin: the profile, which an admin chose. The
		// master token on the consent page never turns a client-generic
		// client into an admin: only elevation to master does.
		g.Admin = pr.ID == Master
		return g
	}
	if pr.ID == Generic {
		g.ActsAs, g.Read, g.Write = nz(ap.ActsAs), nz(ap.Read), nz(ap.Write)
	} else {
		g.ActsAs = intersectActs(g.ActsAs, ap.ActsAs)
		g.Read = intersectPrefixes(g.Read, ap.Read)
		g.Write = intersectPrefixes(g.Write, ap.Write)
	}
	if n != nil && n.Set {
		g.Read = intersectPrefixes(g.Read, n.Read)
		g.Write = intersectPrefixes(g.Write, n.Write)
	}
	return g
}

// Missing lists the requested rights the grant does not hold, as scopes.
func Missing(g Grant, wanted []vp.ScopeRight) []string {
	p := g.Principal()
	var out []string
	for _, w := range wanted {
		if p.Covers(w) {
			continue
		}
		switch w.Kind {
		case "read":
			out = append(out, vp.ReadScope(w.Name))
		case "write":
			out = append(out, vp.WriteScope(w.Name))
		case "as":
			out = append(out, vp.ActAsScope(w.Name))
		}
	}
	return out
}

func nz(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

func intersectActs(profile, approver []string) []string {
	out := []string{}
	p := vp.Principal{Orchestrators: approver}
	for _, x := range profile {
		if x == vp.Wildcard {
			for _, a := range approver {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
			continue
		}
		if p.CanActAs(x) && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// covers reports whether prefix a grants namespace (or prefix) b.
func covers(a, b string) bool {
	a = strings.TrimSuffix(a, "/")
	b = strings.TrimSuffix(b, "/")
	return a == vp.Wildcard || a == b || (b != vp.Wildcard && strings.HasPrefix(b, a+"/"))
}

func intersectPrefixes(profile, approver []string) []string {
	out := []string{}
	add := func(v string) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, p := range profile {
		for _, a := range approver {
			switch {
			case covers(a, p):
				add(p)
			case covers(p, a):
				add(a)
			}
		}
	}
	return out
}
