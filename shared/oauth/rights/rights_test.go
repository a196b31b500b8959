package rights_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/oauth/rights"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

var alice = rights.Approver{TokenID: "tok_a", Tenant: "acme", ActsAs: []string{"alice"},
	Read: []string{"global", "project", "orchestrator/alice"}, Write: []string{"project/web", "orchestrator/alice"}, Hash: "h"}

func TestTheRulesOfAGrant(t *testing.T) {
	generic := rights.Profile{ID: rights.Generic}
	writer := rights.Profile{ID: "writer", ActsAs: []string{"*"}, Read: []string{"project/web", "secret"}, Write: []string{"*"}}
	for _, c := range []struct {
		name       string
		pr         rights.Profile
		ap         *rights.Approver
		n          *rights.Narrowing
		acts, r, w []string
		admin      bool
	}{
		{"a person on the default profile: the person's rights", generic, &alice, nil, alice.ActsAs, alice.Read, alice.Write, false},
		{"an admin's profile is a ceiling", writer, &alice, nil, []string{"alice"}, []string{"project/web"}, alice.Write, false},
		{"narrowed on the page", generic, &alice, &rights.Narrowing{Set: true, Read: []string{"project"}, Write: []string{}}, alice.ActsAs, []string{"project"}, []string{}, false},
		{"no person: the profile alone", writer, nil, nil, writer.ActsAs, writer.Read, writer.Write, false},
		{"no person, default profile: nothing", generic, nil, nil, []string{}, []string{}, []string{}, false},
		{"the master token on the default profile: nothing, no admin", generic, &rights.Approver{TokenID: "master", Admin: true, ActsAs: []string{"*"}, Read: []string{"*"}, Write: []string{"*"}}, nil, []string{}, []string{}, []string{}, false},
		{"the master token on the master profile: admin", rights.Profile{ID: rights.Master, ActsAs: []string{"*"}, Read: []string{"*"}, Write: []string{"*"}}, &rights.Approver{TokenID: "master", Admin: true}, nil, []string{"*"}, []string{"*"}, []string{"*"}, true},
	} {
		g := rights.For(c.pr, "acme", c.ap, c.n)
		if !slices.Equal(g.ActsAs, c.acts) || !slices.Equal(g.Read, c.r) || !slices.Equal(g.Write, c.w) || g.Admin != c.admin || g.Tenant != "acme" {
			t.Errorf("%s: %+v", c.name, g)
		}
	}
}

// A narrowing may only keep what the token has: a forged entry, one wider
// than the token's, is refused naming its field.
func TestNarrowingKeepsOnlyWhatTheTokenHas(t *testing.T) {
	n, err := rights.NarrowingOf("oauth.authorize", alice, true, []string{"project/web/notes", "global"}, nil)
	if err != nil || !slices.Equal(n.Read, []string{"project/web/notes", "global"}) || len(n.Write) != 0 {
		t.Fatalf("within the token: %+v %v", n, err)
	}
	for _, c := range []struct {
		read, write []string
		field       string
	}{{[]string{"*"}, nil, "read"}, {nil, []string{"project"}, "write"}, {[]string{"orchestrator/bob"}, nil, "read"}} {
		_, err := rights.NarrowingOf("oauth.authorize", alice, true, c.read, c.write)
		var ve *vp.Error
		if !vp.IsKind(err, vp.KindForbidden) || !asErr(err, &ve) || ve.Field != c.field {
			t.Errorf("%v %v: %v", c.read, c.write, err)
		}
	}
	if n, err := rights.NarrowingOf("oauth.authorize", alice, false, []string{"*"}, nil); err != nil || n.Set {
		t.Fatalf("no narrowing asked: %+v %v", n, err)
	}
}

func TestMissingNamesWhatTheGrantLacks(t *testing.T) {
	g := rights.For(rights.Profile{ID: rights.Generic}, "acme", &alice, nil)
	wanted, err := vp.ParseScopes("t", "scope", "mcp:full ns:read:project/x ns:write:project/web/a ns:write:global as:alice as:bob")
	if err != nil {
		t.Fatal(err)
	}
	if got := rights.Missing(g, wanted); !slices.Equal(got, []string{"ns:write:global", "as:bob"}) {
		t.Fatalf("missing %v", got)
	}
}

func asErr(err error, target **vp.Error) bool { return errors.As(err, target) }
