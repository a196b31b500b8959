package auth_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestVerifyIsResolveForTheSDK: Verify answers a token's principal (read
// back with PrincipalOf), its scopes and tenant/id as UserID; a refusal is
// Resolve's, and matches the SDK's ErrInvalidToken as a TokenVerifier's
// must.
func TestVerifyIsResolveForTheSDK(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	toks := auth.New(auth.Options{Store: st})
	secret, tok, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}, Scopes: []string{"tasks"}})
	if err != nil {
		t.Fatal(err)
	}
	ti, err := toks.Verify(ctx, secret, nil)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := auth.PrincipalOf(ti)
	if !ok || p.Tenant != "acme" || p.TokenID != tok.ID || !p.CanActAs("alice") || !slices.Equal(ti.Scopes, []string{"tasks"}) || ti.UserID != "acme/"+tok.ID {
		t.Fatalf("Verify: %+v, principal %+v (%v)", ti, p, ok)
	}
	_, err = toks.Verify(ctx, auth.NewSecret(), nil)
	if r := auth.Refusal(err); r == nil || r.Reason != auth.ReasonUnknown || !errors.Is(err, sdkauth.ErrInvalidToken) {
		t.Fatalf("an unknown token: %v, want the unknown refusal, an sdkauth.ErrInvalidToken", err)
	}
}

// TestPrincipalOfOnlyReadsNewTokenInfo: PrincipalOf finds no principal in a
// TokenInfo this package did not make, whatever its Extra holds.
func TestPrincipalOfOnlyReadsNewTokenInfo(t *testing.T) {
	admin := auth.MasterPrincipal("evil")
	for name, ti := range map[string]*sdkauth.TokenInfo{
		"nil":                    nil,
		"no Extra":               {UserID: "evil/master", Scopes: []string{"master"}},
		"a principal":            {Extra: map[string]any{"vp.principal": admin}},
		"a pointer to one":       {Extra: map[string]any{"vp.principal": &admin}},
		"a principal, other key": {Extra: map[string]any{"principal": admin}},
	} {
		if p, ok := auth.PrincipalOf(ti); ok || p.Tenant != "" {
			t.Errorf("%s: PrincipalOf = %+v, %v; want none", name, p, ok)
		}
	}
	want := vp.Principal{Tenant: "acme", TokenID: "t1"}
	if p, ok := auth.PrincipalOf(auth.NewTokenInfo(want)); !ok || p.Tenant != want.Tenant || p.TokenID != want.TokenID {
		t.Fatalf("NewTokenInfo round trip: %+v, %v", p, ok)
	}
}
