package storequeue

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// TestKeysUnchanged pins the key strings written before the keys were
// declared: queued jobs must still be found after an upgrade.
func TestKeysUnchanged(t *testing.T) {
	q := New(Options{Name: "jobs"})
	k := func(pk, sk string) store.Key { return store.Key{PK: pk, SK: sk} }
	tests := []struct {
		name string
		r    record
		key  store.Key
		gsi1 store.Key
	}{
		{"ready", record{ID: "job_1", Tenant: "acme", State: stateReady, AvailableAt: 42}, k("T#acme#JOB#job_1", "JOB"), k("Q#jobs#READY", "0000000000042#job_1")},
		{"dead", record{ID: "job_2", Tenant: "acme", State: stateDead, AvailableAt: 42, DeadAt: 43}, k("T#acme#JOB#job_2", "JOB"), k("Q#jobs#DEAD", "0000000000043#job_2")},
		{"no tenant", record{ID: "job_3", State: stateReady, AvailableAt: -5}, k("Q#jobs#JOB#job_3", "JOB"), k("Q#jobs#READY", "0000000000000#job_3")},
	}
	for _, tc := range tests {
		it := q.item(tc.r)
		if it.Key != tc.key || it.GSI != [store.NumGSI]store.Key{tc.gsi1} {
			t.Errorf("%s: item %+v %+v, want %+v gsi1 %+v", tc.name, it.Key, it.GSI, tc.key, tc.gsi1)
		}
		if q.key(tc.r.Tenant, tc.r.ID) != tc.key {
			t.Errorf("%s: key %+v", tc.name, q.key(tc.r.Tenant, tc.r.ID))
		}
	}
	if r, d := q.lane(laneReady), q.lane(laneDead); r.PK != "Q#jobs#READY" || d.PK != "Q#jobs#DEAD" || r.Index != store.GSI1 {
		t.Errorf("lanes %+v %+v", r, d)
	}
}
