package auth_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

func TestTokenLifecycle(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db"), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	master := auth.NewSecret()
	toks := auth.New(auth.Options{Store: st, MasterHash: auth.Hash(master), Now: func() time.Time { return now }})

	p, err := toks.Resolve(ctx, master)
	if err != nil || !p.Admin || p.Tenant != "default" {
		t.Fatalf("master: %+v %v", p, err)
	}
	secret, tok, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice", "bob"}, ReadPrefixes: []string{"global"}, WritePrefixes: []string{"project/x"}})
	if err != nil {
		t.Fatal(err)
	}
	if !auth.ValidSecret(secret) {
		t.Fatalf("secret %q is not 64 hex", secret)
	}
	p, err = toks.Resolve(ctx, secret)
	if err != nil || p.Tenant != "acme" || p.Admin || !p.CanActAs("bob") || p.CanActAs("carol") || !p.CanWrite("project/x") || p.CanWrite("global") {
		t.Fatalf("token principal: %+v %v", p, err)
	}
	_, short, _ := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"tmp"}, TTL: time.Hour})
	list, err := toks.List(ctx, "acme")
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %d tokens %v, want 2", len(list), err)
	}
	if other, _ := toks.List(ctx, "other"); len(other) != 0 {
		t.Fatalf("other tenant lists %d tokens", len(other))
	}
	if _, err := toks.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := toks.Resolve(ctx, secret); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("revoked token still resolves: %v", err)
	}
	_ = short
	flipped := master[:63] + map[bool]string{true: "1", false: "0"}[master[63] == '0']
	for _, bad := range []string{"", "x", auth.NewSecret(), flipped, strings.ToUpper(master)} {
		if _, err := toks.Resolve(ctx, bad); !errors.Is(err, auth.ErrInvalidToken) {
			t.Errorf("Resolve(%q): %v", bad, err)
		}
	}
	for _, spec := range []auth.Spec{{Tenant: "Bad Tenant", ActsAs: []string{"a"}}, {Tenant: "acme", ActsAs: []string{"system"}}, {Tenant: "acme", ActsAs: []string{"a#b"}}} {
		if _, _, err := toks.Create(ctx, spec); err == nil {
			t.Errorf("Create(%+v) accepted", spec)
		}
	}
}

func TestTokenExpiry(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st, _ := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db"), Now: clock})
	defer st.Close()
	toks := auth.New(auth.Options{Store: st, Now: clock})
	secret, _, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"a"}, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toks.Resolve(ctx, secret); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if _, err := toks.Resolve(ctx, secret); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("expired token resolves: %v", err)
	}
}

func TestEnsureMasterAndKey(t *testing.T) {
	ctx := context.Background()
	st, _ := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db")})
	defer st.Close()
	h1, created, err := auth.EnsureMaster(ctx, st, "")
	if err != nil || created == "" || auth.Hash(created) != h1 {
		t.Fatalf("first start: %v created=%q", err, created)
	}
	h2, again, err := auth.EnsureMaster(ctx, st, "")
	if err != nil || again != "" || h2 != h1 {
		t.Fatalf("second start must reuse the stored hash and print nothing: %q %v", again, err)
	}
	override := auth.NewSecret()
	h3, _, err := auth.EnsureMaster(ctx, st, override)
	if err != nil || h3 != auth.Hash(override) {
		t.Fatalf("override: %v", err)
	}
	// A command on the same store without the variable: the master token
	// the server uses, not a new one it would refuse.
	h4, minted, err := auth.EnsureMaster(ctx, st, "")
	if err != nil || minted != "" || h4 != h3 {
		t.Fatalf("after VP_MASTER_TOKEN, a start without it minted %q (%v) instead of keeping the override's hash", minted, err)
	}
	fresh, _ := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "b.db")})
	defer fresh.Close()
	if _, minted, err := auth.EnsureMaster(ctx, fresh, override); err != nil || minted != "" {
		t.Fatalf("override on a fresh store: %q %v", minted, err)
	}
	if h, minted, err := auth.EnsureMaster(ctx, fresh, ""); err != nil || minted != "" || h != auth.Hash(override) {
		t.Fatalf("fresh store first started with VP_MASTER_TOKEN: later start minted %q (%v)", minted, err)
	}
	if _, _, err := auth.EnsureMaster(ctx, st, "not-hex"); err == nil {
		t.Fatal("malformed VP_MASTER_TOKEN accepted")
	}
	k1, _ := auth.EnsureKey(ctx, st, "cursor")
	k2, _ := auth.EnsureKey(ctx, st, "cursor")
	if len(k1) != 32 || string(k1) != string(k2) {
		t.Fatal("cursor key not stable across starts")
	}
}
