package businessunit

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestKeysUnchanged: the declared keys are the ones coord wrote by hand,
// byte for byte, so existing units are still found.
func TestKeysUnchanged(t *testing.T) {
	it, err := units.Item("op", "acme", vp.BusinessUnit{ID: "bun_1", OrchestratorID: "sigma", Status: "idea"})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Item{Key: store.Key{PK: "T#acme#BU#bun_1", SK: "BU"}, GSI: [store.NumGSI]store.Key{
		{PK: "T#acme#BUS", SK: "bun_1"}, {PK: "T#acme#BULEAD#sigma", SK: "bun_1"}, {PK: "T#acme#BUSTATUS#idea", SK: "bun_1"},
	}}
	if it.Key != want.Key || it.GSI != want.GSI {
		t.Fatalf("keys %+v %+v, want %+v %+v", it.Key, it.GSI, want.Key, want.GSI)
	}
}
