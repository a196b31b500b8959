package auth_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

// Issued tokens: prepared inside a caller's transaction, listed by client,
// valid only while their required item exists.
func TestIssuedTokens(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db"), Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	toks := auth.New(auth.Options{Store: st, Now: func() time.Time { return now }})
	guard := store.Key{PK: "GUARD#c1", SK: "G"}
	if err := st.Write(ctx, store.Put(store.Item{Key: guard, Data: []byte("{}")}, store.IfNotExists)); err != nil {
		t.Fatal(err)
	}
	secret, tok, op, err := toks.Prepare(auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}, Kind: "oauth", ClientID: "c1", FamilyID: "f1", Requires: &guard, TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toks.Resolve(ctx, secret); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatal("a prepared token resolves before it is written")
	}
	if err := st.Write(ctx, op); err != nil {
		t.Fatal(err)
	}
	p, err := toks.Resolve(ctx, secret)
	if err != nil || p.Tenant != "acme" || p.TokenID != tok.ID {
		t.Fatalf("%+v %v", p, err)
	}
	if list, _ := toks.List(ctx, ""); len(list) != 0 {
		t.Fatalf("an OAuth token is in the admin list: %+v", list)
	}
	items, err := toks.ClientTokens(ctx, "c1")
	if err != nil || len(items) != 1 {
		t.Fatalf("client tokens: %d %v", len(items), err)
	}
	rop, ok, err := auth.RevokeOp(items[0], now.UnixMilli())
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	// Removing the required item revokes the token at once.
	if err := st.Write(ctx, store.Delete(guard, store.Always)); err != nil {
		t.Fatal(err)
	}
	if _, err := toks.Resolve(ctx, secret); !errors.Is(err, auth.ErrInvalidToken) {
		t.Fatalf("token without its required item: %v", err)
	}
	if err := st.Write(ctx, rop); err != nil {
		t.Fatal(err)
	}
	it, _ := st.Get(ctx, auth.TokenKey(auth.HashHex(secret)))
	if got, _ := auth.DecodeToken(it); got.RevokedAt == 0 || got.ClientID != "c1" || got.FamilyID != "f1" {
		t.Fatalf("stored %+v", got)
	}
	if _, ok, _ := auth.RevokeOp(it, now.UnixMilli()); ok {
		t.Fatal("revoking twice")
	}
}
