package vp_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Every scope the server names in a challenge parses back to the right it
// names, whatever the namespace holds (spaces, quotes, '%', non-ASCII), and
// stays a valid RFC 6749 scope token.
func TestScopesRoundTrip(t *testing.T) {
	names := []string{"project/web", "orchestrator/alice", `a "quoted" name`, "100% sure", `back\slash`, "équipe/été"}
	for _, ns := range names {
		for _, c := range []struct {
			scope, kind string
		}{{vp.ReadScope(ns), "read"}, {vp.WriteScope(ns), "write"}} {
			for _, r := range c.scope {
				if r <= 0x20 || r >= 0x7f || r == '"' || r == '\\' {
					t.Fatalf("%q holds %q, which a scope token may not", c.scope, r)
				}
			}
			got, err := vp.ParseScopes("test", "scope", vp.ScopeFull+" "+c.scope)
			if err != nil {
				t.Fatalf("%q: %v", c.scope, err)
			}
			if len(got) != 2 || got[0].Kind != "full" || got[1] != (vp.ScopeRight{Kind: c.kind, Name: ns}) {
				t.Fatalf("%q parsed as %+v", c.scope, got)
			}
		}
	}
	if got, err := vp.ParseScopes("test", "scope", vp.ActAsScope(" Alice ")); err != nil || got[0] != (vp.ScopeRight{Kind: "as", Name: "alice"}) {
		t.Fatalf("as scope: %+v %v", got, err)
	}
}

func TestParseScopesRefusesMalformedOnes(t *testing.T) {
	if got, err := vp.ParseScopes("oauth.authorize", "scope", "openid mcp:full offline_access"); err != nil || len(got) != 1 || got[0].Kind != "full" {
		t.Errorf("scopes of other vocabularies: %+v %v", got, err)
	}
	for _, bad := range []string{"ns:read:", "ns:write:%zz", "ns:write:%4", "as:"} {
		_, err := vp.ParseScopes("oauth.authorize", "scope", "mcp:full "+bad)
		if !vp.IsKind(err, vp.KindInvalid) || !strings.Contains(err.Error(), "scope") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	_, err := vp.ParseScopes("oauth.authorize", "scope", strings.Repeat("mcp:full ", vp.MaxScopeEntries+1))
	if !vp.IsKind(err, vp.KindTooLarge) || !strings.Contains(err.Error(), "limit is 50") {
		t.Errorf("too many scopes: %v", err)
	}
}

// A refusal to act as someone else names the scope that would allow it;
// the server's own name gets none (no grant can give it).
func TestActAsRefusalNamesItsScope(t *testing.T) {
	p := vp.Principal{Tenant: "t", Orchestrators: []string{"alice"}}
	_, err := p.ActAs("send_message", "from", "Bob")
	if !vp.IsKind(err, vp.KindForbidden) || vp.ScopeOf(err) != "as:bob" {
		t.Fatalf("act as bob: %v (scope %q)", err, vp.ScopeOf(err))
	}
	if _, err := p.ActAs("send_message", "from", "system"); !vp.IsKind(err, vp.KindForbidden) || vp.ScopeOf(vp.Wrap("x", vp.KindOther, err)) != "" {
		t.Fatalf("act as system: %v (scope %q)", err, vp.ScopeOf(err))
	}
	if vp.ScopeOf(vp.Wrap("outer", vp.KindOther, vp.E("in", vp.KindForbidden, "namespace", "no").WithScope("ns:write:x"))) != "ns:write:x" {
		t.Fatal("the scope is lost through a wrap")
	}
}

// The principal's own checks return the refusal of a right, naming the
// field, the namespace or orchestrator and the scope that would allow it;
// what the token holds passes.
func TestRightsChecksNameTheirScope(t *testing.T) {
	p := vp.Principal{Tenant: "t", Orchestrators: []string{"alice"}, ReadPrefixes: []string{"project/web"}, WritePrefixes: []string{"project/web/notes"}}
	for _, c := range []struct {
		name  string
		err   error
		scope string
	}{
		{"read", p.MayRead("export", "namespace", "project/secret"), "ns:read:project/secret"},
		{"write", p.MayWrite("import", "namespace", "project/web"), "ns:write:project/web"},
		{"act as", p.MayActAs("mark_read", "receiptIds", "Bob"), "as:bob"},
	} {
		if !vp.IsKind(c.err, vp.KindForbidden) || vp.ScopeOf(c.err) != c.scope {
			t.Errorf("%s: %v (scope %q), want forbidden naming %q", c.name, c.err, vp.ScopeOf(c.err), c.scope)
		}
		if c.err != nil && !strings.Contains(c.err.Error(), ": ") {
			t.Errorf("%s: %v names no field", c.name, c.err)
		}
	}
	if err := p.MayRead("export", "namespace", "project/web/x"); err != nil {
		t.Errorf("read inside the prefix: %v", err)
	}
	if err := p.MayWrite("import", "namespace", "project/web/notes"); err != nil {
		t.Errorf("write inside the prefix: %v", err)
	}
	if err := p.MayActAs("mark_read", "receiptIds", " ALICE "); err != nil {
		t.Errorf("act as alice: %v", err)
	}
	if err := p.MayActAs("x", "from", "system"); !vp.IsKind(err, vp.KindForbidden) || vp.ScopeOf(err) != "" {
		t.Errorf("act as system: %v (scope %q), want forbidden without a scope", err, vp.ScopeOf(err))
	}
}

// A token that may act as no one (an OAuth grant of namespaces only) is
// refused an identity, not told that it may act as anyone.
func TestActAsWithoutAnyOrchestratorIsForbidden(t *testing.T) {
	p := vp.Principal{Tenant: "t", ReadPrefixes: []string{"*"}}
	_, err := p.ActAs("write_diary", "orchestrator", "")
	if !vp.IsKind(err, vp.KindForbidden) || strings.Contains(err.Error(), "any orchestrator") || !strings.Contains(err.Error(), "orchestrator: ") {
		t.Fatalf("no identity: %v", err)
	}
	wild := vp.Principal{Tenant: "t", Orchestrators: []string{vp.Wildcard}}
	if _, err := wild.ActAs("write_diary", "orchestrator", ""); !vp.IsKind(err, vp.KindInvalid) {
		t.Fatalf("a wildcard token names one: %v", err)
	}
}
