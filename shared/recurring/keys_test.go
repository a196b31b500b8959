package recurring_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestRecurringKeysUnchanged: the declared keys are byte for byte the keys
// existing data was written with, the due index global and sparse.
func TestRecurringKeysUnchanged(t *testing.T) {
	r := vp.RecurringTask{ID: "rec_1", NextRunAt: 42}
	it, err := recurring.Table.Item("op", "acme", r)
	if err != nil {
		t.Fatal(err)
	}
	want := [store.NumGSI]store.Key{{PK: "T#acme#RECURS", SK: "rec_1"}, {PK: "RECURRING_DUE", SK: "0000000000042#acme#rec_1"}, {}, {}}
	if it.Key != (store.Key{PK: "T#acme#RECUR#rec_1", SK: "RECUR"}) || it.GSI != want {
		t.Fatalf("template keys %+v %+v", it.Key, it.GSI)
	}
	r.Paused = true
	if it, _ = recurring.Table.Item("op", "acme", r); it.GSI[1] != (store.Key{}) {
		t.Fatalf("a paused template is due: %+v", it.GSI[1])
	}
	if k := recurring.Fired.KeyOf("acme", table.Values{"recId": "rec_1", "slot 13 digits": table.Millis(42)}); k != (store.Key{PK: "T#acme#RECFIRE#rec_1#0000000000042", SK: "FIRE"}) {
		t.Fatalf("fired key %+v", k)
	}
}
