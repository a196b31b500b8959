package auth_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// An OAuth client's token issued on a person's approval lives no longer than
// the token the person signed in with: revoking that one, or its expiry,
// refuses the client's token at its next resolve, with a reason naming both.
func TestApprovedTokenDiesWithItsApprover(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	toks := auth.New(auth.Options{Store: openLosing(t, clock), Now: clock})
	person := func(ttl time.Duration) (string, auth.Token) {
		secret, tok, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}, ReadPrefixes: []string{"project"}, TTL: ttl})
		if err != nil {
			t.Fatal(err)
		}
		return secret, tok
	}
	client := func(approverSecret string) string {
		secret, _, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}, Kind: "oauth", ClientID: "vp_client_1", Approver: auth.HashHex(approverSecret)})
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}

	revokedSecret, revoked := person(0)
	c1 := client(revokedSecret)
	if p, err := toks.Resolve(ctx, c1); err != nil || p.ClientID != "vp_client_1" {
		t.Fatalf("before the revocation: %+v %v", p, err)
	}
	if _, err := toks.Revoke(ctx, revoked.ID); err != nil {
		t.Fatal(err)
	}
	_, err := toks.Resolve(ctx, c1)
	var r *auth.RefusedError
	if !errors.As(err, &r) || r.Reason != auth.ReasonApproverGone || r.Approver != revoked.ID || !strings.Contains(r.Description(), revoked.ID) {
		t.Fatalf("after the approver's revocation: %v", err)
	}

	expiringSecret, expiring := person(time.Hour)
	c2 := client(expiringSecret)
	if _, err := toks.Resolve(ctx, c2); err != nil {
		t.Fatalf("before the approver expires: %v", err)
	}
	now = now.Add(time.Hour)
	if _, err := toks.Resolve(ctx, c2); !errors.As(err, &r) || r.Reason != auth.ReasonApproverGone || r.Approver != expiring.ID {
		t.Fatalf("after the approver expired: %v", err)
	}

	c3 := client(strings.Repeat("0", 64)) // an approver this server never knew
	if _, err := toks.Resolve(ctx, c3); !errors.As(err, &r) || r.Reason != auth.ReasonApproverGone || !strings.Contains(r.Description(), "no longer knows") {
		t.Fatalf("an unknown approver: %v", err)
	}
}

// An approval by the master token ends when the master token is rotated:
// the grant names the master's hash like any approver's, and a server
// started with another master token no longer knows it. (Such grants used
// to carry no approver, so rotating VP_MASTER_TOKEN after a leak left
// every OAuth client its holder had approved, admin included.)
func TestMasterApprovedTokenDiesWithTheMasterToken(t *testing.T) {
	ctx := context.Background()
	clock := func() time.Time { return time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC) }
	st := openLosing(t, clock)
	master := auth.NewSecret()
	toks := auth.New(auth.Options{Store: st, Now: clock, MasterHash: auth.Hash(master)})
	client, _, err := toks.Create(ctx, auth.Spec{Tenant: "default", ActsAs: []string{"*"}, Admin: true, Kind: "oauth", ClientID: "vp_client_1", Approver: auth.HashHex(master)})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := toks.Resolve(ctx, client); err != nil || !p.Admin {
		t.Fatalf("approved by the current master token: %+v %v", p, err)
	}
	if tok, err := toks.Live(ctx, auth.HashHex(master)); err != nil || !tok.Principal().Admin || tok.ID != "master" {
		t.Fatalf("Live(the master token's hash): %+v %v", tok, err)
	}

	rotated := auth.New(auth.Options{Store: st, Now: clock, MasterHash: auth.Hash(auth.NewSecret())})
	var r *auth.RefusedError
	if _, err := rotated.Resolve(ctx, client); !errors.As(err, &r) || r.Reason != auth.ReasonApproverGone {
		t.Fatalf("after the master token was rotated: %v", err)
	}
	if _, err := rotated.Live(ctx, auth.HashHex(master)); !errors.As(err, &r) || r.Reason != auth.ReasonUnknown {
		t.Fatalf("Live(the old master token's hash): %v", err)
	}
	if _, err := auth.New(auth.Options{Store: st, Now: clock}).Resolve(ctx, client); !errors.As(err, &r) || r.Reason != auth.ReasonApproverGone {
		t.Fatalf("with the master token switched off: %v", err)
	}
}
