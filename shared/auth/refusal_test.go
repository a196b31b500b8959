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

// Each refusal says why in words its holder can act on; the ones that need
// a matched hash (expired, revoked) are the only ones naming a token.
func TestResolveSaysWhyATokenIsRefused(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	st, _ := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db"), Now: clock})
	defer st.Close()
	toks := auth.New(auth.Options{Store: st, Now: clock})
	expiring, expTok, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"a"}, TTL: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	revoked, revTok, _ := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"a"}})
	if _, err := toks.Revoke(ctx, revTok.ID); err != nil {
		t.Fatal(err)
	}
	now = now.Add(48 * time.Hour)
	for _, c := range []struct {
		name, secret string
		reason       auth.Reason
		want         []string
		notWant      string
	}{
		{"missing", "", auth.ReasonMissing, []string{"no bearer token"}, "tok_"},
		{"malformed: short", "abc", auth.ReasonMalformed, []string{"malformed", "64 hex"}, "tok_"},
		{"malformed: 64 non-hex", strings.Repeat("z", 64), auth.ReasonMalformed, []string{"malformed"}, "tok_"},
		{"unknown", auth.NewSecret(), auth.ReasonUnknown, []string{"not known to this server", "token create"}, "tok_"},
		{"expired", expiring, auth.ReasonExpired, []string{expTok.ID, "expired on 2026-11-30 10:00 UTC", "token create"}, ""},
		{"revoked", revoked, auth.ReasonRevoked, []string{revTok.ID, "revoked on 2026-11-29"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := toks.Resolve(ctx, c.secret)
			if !errors.Is(err, auth.ErrInvalidToken) {
				t.Fatalf("err = %v, want ErrInvalidToken", err)
			}
			r := auth.Refusal(err)
			if r == nil || r.Reason != c.reason {
				t.Fatalf("refusal = %+v, want reason %s", r, c.reason)
			}
			d := r.Description()
			for _, w := range c.want {
				if !strings.Contains(d, w) {
					t.Errorf("description %q lacks %q", d, w)
				}
			}
			if c.notWant != "" && strings.Contains(d, c.notWant) {
				t.Errorf("description %q names a token though none matched", d)
			}
		})
	}
}
