package component_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestKeysUnchanged: the declared keys are the ones coord wrote by hand,
// byte for byte, so existing components are still found.
func TestKeysUnchanged(t *testing.T) {
	for _, tc := range []struct {
		c    vp.Component
		team store.Key
	}{
		{vp.Component{ID: "cmp_1", Type: "agent", Name: "dev-x", Team: "ops"}, store.Key{PK: "T#acme#COMPTEAM#ops", SK: "cmp_1"}},
		{vp.Component{ID: "cmp_1", Type: "agent", Name: "dev-x"}, store.Key{}}, // the team index is sparse
	} {
		it, err := component.Components.Item("op", "acme", tc.c)
		if err != nil {
			t.Fatal(err)
		}
		want := store.Item{Key: store.Key{PK: "T#acme#COMP#agent#dev-x", SK: "COMP"}, GSI: [store.NumGSI]store.Key{
			{PK: "T#acme#COMPS", SK: "cmp_1"}, {PK: "T#acme#COMPTYPE#agent", SK: "cmp_1"}, tc.team,
		}}
		if it.Key != want.Key || it.GSI != want.GSI {
			t.Fatalf("keys %+v %+v, want %+v %+v", it.Key, it.GSI, want.Key, want.GSI)
		}
	}
	if k, ok := component.KeyOfDoc("acme", component.DocID("agent", "dev-x")); !ok || k != (store.Key{PK: "T#acme#COMP#agent#dev-x", SK: "COMP"}) {
		t.Fatalf("KeyOfDoc = %+v %v", k, ok)
	}
}

func TestRevisionKeyUnchanged(t *testing.T) {
	if k := component.RevisionKey("acme", "cmp_1", 7); k != (store.Key{PK: "T#acme#COMPHIST#cmp_1", SK: "000007"}) {
		t.Fatalf("revision key %+v", k)
	}
}
