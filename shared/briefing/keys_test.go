package briefing_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestKeysUnchanged: the declared keys are the ones coord wrote by hand,
// byte for byte, so existing notes are still found.
func TestKeysUnchanged(t *testing.T) {
	n := vp.BriefingNote{ID: "brf_1", Topic: "standup", CreatedAt: 5, UpdatedAt: 7}
	it, err := briefing.Notes.Item("op", "acme", n)
	if err != nil {
		t.Fatal(err)
	}
	want := store.Item{Key: store.Key{PK: "T#acme#BRIEF#brf_1", SK: "BRIEF"}, GSI: [store.NumGSI]store.Key{
		{PK: "T#acme#BRIEFS", SK: "brf_1"},
		{PK: "T#acme#BRIEFTOPIC#standup", SK: "brf_1"},
		{PK: "T#acme#BRIEFCHG", SK: "0000000000007#brf_1"},
	}}
	if it.Key != want.Key || it.GSI != want.GSI {
		t.Fatalf("keys %+v %+v, want %+v %+v", it.Key, it.GSI, want.Key, want.GSI)
	}
}
