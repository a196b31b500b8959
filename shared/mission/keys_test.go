package mission_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestMissionKeysUnchanged: the declared keys are byte for byte the keys
// existing data was written with.
func TestMissionKeysUnchanged(t *testing.T) {
	it, err := mission.Table.Item("op", "acme", vp.Mission{ID: "msn_1", Project: "web", Pilot: "pi", Status: vp.MissionPlan, UpdatedAt: 42})
	if err != nil {
		t.Fatal(err)
	}
	sk := "0000000000042#msn_1"
	want := [store.NumGSI]store.Key{{PK: "T#acme#MPROJ#web", SK: sk}, {PK: "T#acme#MPILOT#pi", SK: sk}, {PK: "T#acme#MSTAT#plan", SK: sk}, {}}
	if it.Key != (store.Key{PK: "T#acme#MISSION#msn_1", SK: "MISSION"}) || it.GSI != want {
		t.Fatalf("mission keys %+v %+v", it.Key, it.GSI)
	}
	if k := mission.Links.KeyOf("acme", table.Values{"missionId": "msn_1", "taskId": "tsk_1"}); k != (store.Key{PK: "T#acme#MISSION#msn_1", SK: "TASK#tsk_1"}) {
		t.Fatalf("link key %+v", k)
	}
	if k := mission.Templates.KeyOf("acme", table.Values{"name": "repo-fix-v1"}); k != (store.Key{PK: "T#acme#MTPL#repo-fix-v1", SK: "MTPL"}) {
		t.Fatalf("template key %+v", k)
	}
}
