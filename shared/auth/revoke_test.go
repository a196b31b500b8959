package auth_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/store/storetest"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func openLosing(t *testing.T, now func() time.Time) *storetest.LosingWrites {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "a.db"), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return &storetest.LosingWrites{Store: st}
}

// TestRevokeEndsWhenEveryWriteLoses: a revocation whose every write loses
// ends with a conflict naming the token after a bounded number of
// attempts, instead of rereading for ever.
func TestRevokeEndsWhenEveryWriteLoses(t *testing.T) {
	ctx := context.Background()
	st := openLosing(t, nil)
	toks := auth.New(auth.Options{Store: st})
	_, tok, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	st.Armed.Store(true)
	done := make(chan error, 1)
	go func() {
		_, err := toks.Revoke(ctx, tok.ID)
		done <- err
	}()
	select {
	case err := <-done:
		var ve *vp.Error
		if !vp.IsKind(err, vp.KindConflict) || !errors.As(err, &ve) || ve.Field != "id" {
			t.Fatalf("every write lost: %v, want a conflict on id", err)
		}
		if n := st.Lost.Load(); n != table.MaxUpdateAttempts {
			t.Fatalf("%d writes lost, want %d (the bound)", n, table.MaxUpdateAttempts)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("Revoke still rereading after %d lost writes: the loop has no bound", st.Lost.Load())
	}
}

// TestRevokeLosesToAnotherRevocation: when another revocation lands
// between the read and the write, Revoke reads the token again and answers
// with that revocation, without writing a second one.
func TestRevokeLosesToAnotherRevocation(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	st := openLosing(t, func() time.Time { return at })
	toks := auth.New(auth.Options{Store: st, Now: func() time.Time { return at }})
	_, tok, err := toks.Create(ctx, auth.Spec{Tenant: "acme", ActsAs: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	other := auth.New(auth.Options{Store: st.Store, Now: func() time.Time { return at.Add(time.Hour) }})
	st.Meanwhile = func() {
		st.Armed.Store(false)
		if _, err := other.Revoke(ctx, tok.ID); err != nil {
			t.Error(err)
		}
	}
	st.Armed.Store(true)
	got, err := toks.Revoke(ctx, tok.ID)
	if err != nil || got.RevokedAt != at.Add(time.Hour).UnixMilli() || st.Lost.Load() != 1 {
		t.Fatalf("Revoke after losing to another: %+v %v (%d writes lost); want the other's revocation at %d after 1",
			got, err, st.Lost.Load(), at.Add(time.Hour).UnixMilli())
	}
}
