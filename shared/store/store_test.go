package store

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// plain is a Store without large transactions; large is one with them.
type plain struct{ Store }

type large struct {
	Store
	got int
}

func (l *large) TransactLarge(_ context.Context, ops []Op) error { l.got = len(ops); return nil }

// A view over several partitions keeps the capability of the store it
// wraps, and does not invent it for one without.
func TestPartitionsForwardsLargeTransactions(t *testing.T) {
	pks := []string{"T#a#X", "T#a#Y"}
	l := &large{}
	lt, ok := AsLargeTransactor(Partitions(l, pks))
	if !ok {
		t.Fatal("Partitions hid the store's large transactions")
	}
	if err := lt.TransactLarge(context.Background(), make([]Op, 3)); err != nil || l.got != 3 {
		t.Fatalf("forwarded %d ops (%v), want 3", l.got, err)
	}
	if _, ok := AsLargeTransactor(Partitions(plain{}, pks)); ok {
		t.Fatal("Partitions offers large transactions over a store without them")
	}
}

func TestValidateBoundsName(t *testing.T) {
	op := func(sk string) Op { return Put(Item{Key: Key{PK: "T#a#V", SK: sk}, Data: []byte("12345")}, Always) }
	ops := []Op{op("1"), op("2"), op("3")}
	for _, tc := range []struct {
		name     string
		maxOps   int
		maxBytes int
		want     string
	}{
		{"ops", 2, 100, "3 operations, the limit is 2 (store.Limit)"},
		{"bytes", 10, 12, "over 12 bytes"},
	} {
		err := validate(ops, tc.maxOps, "Limit", tc.maxBytes)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrInvalid saying %q", tc.name, err, tc.want)
		}
	}
	if err := validate(ops, 3, "Limit", 15); err != nil {
		t.Fatalf("at the bounds: %v", err)
	}
	if err := Validate(make([]Op, MaxTransactOps+1)); err == nil || !strings.Contains(err.Error(), "store.MaxTransactOps") {
		t.Fatalf("Validate: %v", err)
	}
}
