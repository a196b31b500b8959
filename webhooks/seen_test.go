package webhooks_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/webhooks"
)

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// seenKey is the key of the dedup record of (tenant, id).
func seenKey(t *testing.T, tenant, id string) store.Key {
	t.Helper()
	op, err := webhooks.Delivery{Tenant: tenant, ID: id}.Seen()
	if err != nil {
		t.Fatal(err)
	}
	return op.Key
}

// TestSeen: the first write of a delivery's record succeeds, the second
// fails on it and is recognised as a redelivery; the record expires 30
// days after receipt; tenants and ids do not collide.
func TestSeen(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	received := time.Now().Truncate(time.Second)
	d := webhooks.Delivery{Tenant: "acme", ID: deliveryID, Event: "issues", Action: "opened", HookID: "42", ReceivedAt: received}
	op, err := d.Seen()
	if err != nil {
		t.Fatal(err)
	}
	if op.Kind != store.OpPut || op.Cond != store.IfNotExists {
		t.Errorf("Seen = %+v, want a put if not exists", op)
	}
	if err := st.Write(ctx, op); err != nil {
		t.Fatalf("first write: %v", err)
	}
	it, err := st.Get(ctx, op.Key)
	if err != nil {
		t.Fatal(err)
	}
	if want := received.Add(30 * 24 * time.Hour).Unix(); it.ExpiresAt != want {
		t.Errorf("TTL %d (%v), want 30 days after receipt %d", it.ExpiresAt, time.Unix(it.ExpiresAt, 0), want)
	}
	err = st.Write(ctx, op)
	if !errors.Is(err, store.ErrConditionFailed) || !webhooks.IsRedelivery(err, d) {
		t.Fatalf("second write: %v (redelivery %v)", err, webhooks.IsRedelivery(err, d))
	}

	// In a transaction with the delivery's writes: the redelivery writes
	// nothing, and the error still names the record.
	change := store.Put(store.Item{Key: store.Key{PK: "T#acme#TEST#1", SK: "X"}, Data: []byte(`{}`)}, store.Always)
	err = st.Write(ctx, change, op)
	if !webhooks.IsRedelivery(err, d) {
		t.Errorf("redelivery in a transaction: %v", err)
	}
	if _, err := st.Get(ctx, change.Key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the redelivery's change was written: %v", err)
	}
	// A condition failing on the other op is not a redelivery.
	other := webhooks.Delivery{Tenant: "acme", ID: "other-id", ReceivedAt: received}
	otherOp, _ := other.Seen()
	err = st.Write(ctx, otherOp, store.Put(store.Item{Key: store.Key{PK: "T#acme#TEST#2", SK: "X"}, Data: []byte(`{}`)}, store.IfExists))
	if !errors.Is(err, store.ErrConditionFailed) || webhooks.IsRedelivery(err, other) || webhooks.IsRedelivery(err, d) {
		t.Errorf("another op's condition: %v, redelivery %v", err, webhooks.IsRedelivery(err, other))
	}

	for _, c := range []struct {
		name string
		err  error
		d    webhooks.Delivery
	}{
		{"nil", nil, d},
		{"another error", errors.New("boom"), d},
		{"another tenant's record", &store.ConditionError{Key: seenKey(t, "other", deliveryID)}, d},
		{"another delivery's record", &store.ConditionError{Key: seenKey(t, "acme", "x")}, d},
		{"an empty delivery", &store.ConditionError{Key: op.Key}, webhooks.Delivery{}},
	} {
		if webhooks.IsRedelivery(c.err, c.d) {
			t.Errorf("%s: IsRedelivery is true", c.name)
		}
	}

	// The same id in another tenant is another delivery.
	op2, _ := webhooks.Delivery{Tenant: "globex", ID: deliveryID, ReceivedAt: received}.Seen()
	if err := st.Write(ctx, op2); err != nil {
		t.Errorf("the same id in another tenant: %v", err)
	}
	if op2.Key == op.Key {
		t.Errorf("two tenants share the key %v", op.Key)
	}

	// No ReceivedAt: 30 days from now.
	op3, _ := webhooks.Delivery{Tenant: "acme", ID: "no-time"}.Seen()
	if exp := time.Unix(op3.Item.ExpiresAt, 0); time.Until(exp) < 30*24*time.Hour-time.Minute || time.Until(exp) > 30*24*time.Hour {
		t.Errorf("without ReceivedAt the record expires at %v", exp)
	}
}

// TestSeenRefusesBadDeliveries: a record needs a tenant and a delivery id
// of the forms the handler accepts.
func TestSeenRefusesBadDeliveries(t *testing.T) {
	for _, d := range []webhooks.Delivery{
		{Tenant: "", ID: deliveryID},
		{Tenant: "Acme", ID: deliveryID},
		{Tenant: "acme", ID: ""},
		{Tenant: "acme", ID: "a#b"},
	} {
		if _, err := d.Seen(); err == nil {
			t.Errorf("%+v: no error", d)
		}
	}
}

// TestSeenConcurrent: ten writers of the same record, exactly one wins;
// the others see a redelivery.
func TestSeenConcurrent(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	d := webhooks.Delivery{Tenant: "acme", ID: deliveryID, Event: "issues", ReceivedAt: time.Now()}
	var wg sync.WaitGroup
	errs := make([]error, 10)
	start := make(chan struct{})
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			op, err := d.Seen()
			if err == nil {
				<-start
				err = st.Write(ctx, op)
			}
			errs[i] = err
		}()
	}
	close(start)
	wg.Wait()
	won, redelivered := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case webhooks.IsRedelivery(err, d):
			redelivered++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if won != 1 || redelivered != 9 {
		t.Errorf("%d won, %d redeliveries; want 1 and 9", won, redelivered)
	}
}
