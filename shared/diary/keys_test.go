package diary

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestKeysUnchanged: the declared keys are the ones coord wrote by hand,
// byte for byte, so existing entries are still found.
func TestKeysUnchanged(t *testing.T) {
	it, err := entries.Item("op", "acme", vp.DiaryEntry{ID: "dia_1", Orchestrator: "sigma", Date: "2026-05-29"})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Item{Key: store.Key{PK: "T#acme#DIARY#sigma", SK: "2026-05-29"}, GSI: [store.NumGSI]store.Key{
		{PK: "T#acme#DIARIES", SK: "2026-05-29#sigma"},
	}}
	if it.Key != want.Key || it.GSI != want.GSI {
		t.Fatalf("keys %+v %+v, want %+v %+v", it.Key, it.GSI, want.Key, want.GSI)
	}
}
