package memory

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestKeysUnchanged pins the key strings written before the keys were
// declared: existing data must still be read.
func TestKeysUnchanged(t *testing.T) {
	k := func(pk, sk string) store.Key { return store.Key{PK: pk, SK: sk} }
	none := store.Key{}
	tests := []struct {
		name    string
		item    func() (store.Item, error)
		key     store.Key
		gsi     [store.NumGSI]store.Key
		expires int64
	}{
		{"live note", func() (store.Item, error) {
			return memoryItem("op", "acme", vp.Memory{ID: "mem_1", Namespace: "project/vp", Type: "note", CreatedBy: "bob", IsLatest: true, ExpiresAt: 1001})
		}, k("T#acme#MEM#mem_1", "MEM"), [4]store.Key{k("T#acme#MEMNS#project/vp", "L#mem_1"), k("T#acme#MEMNST#project/vp#note", "L#mem_1"), k("T#acme#MEMS", "mem_1"), none}, 2},
		{"live episode", func() (store.Item, error) {
			return memoryItem("op", "acme", vp.Memory{ID: "mem_2", Namespace: "g", Type: vp.MemoryTypeEpisode, CreatedBy: "bob", IsLatest: true})
		}, k("T#acme#MEM#mem_2", "MEM"), [4]store.Key{k("T#acme#MEMNS#g", "L#mem_2"), k("T#acme#MEMNST#g#episode", "L#mem_2"), k("T#acme#EPIS", "mem_2"), k("T#acme#EPIBY#bob", "mem_2")}, 0},
		{"superseded episode", func() (store.Item, error) {
			return memoryItem("op", "acme", vp.Memory{ID: "mem_3", Namespace: "g", Type: vp.MemoryTypeEpisode, CreatedBy: "bob"})
		}, k("T#acme#MEM#mem_3", "MEM"), [4]store.Key{k("T#acme#MEMNS#g", "A#mem_3"), k("T#acme#MEMNST#g#episode", "A#mem_3"), none, none}, 0},
		{"deleted note", func() (store.Item, error) {
			return memoryItem("op", "acme", vp.Memory{ID: "mem_4", Namespace: "g", Type: "note", CreatedBy: "bob", DeletedAt: 5})
		}, k("T#acme#MEM#mem_4", "MEM"), [4]store.Key{}, 0},
		{"fix pattern", func() (store.Item, error) {
			return fixItem("op", "acme", vp.FixPattern{ID: "fix_1", SourceProject: "web"})
		}, k("T#acme#FIX#fix_1", "FIX"), [4]store.Key{k("T#acme#FIXPROJ#web", "fix_1"), k("T#acme#FIXES", "fix_1"), none, none}, 0},
		{"fix attempt", func() (store.Item, error) {
			return attemptItem("op", "acme", vp.FixAttempt{ID: "fxa_1", PatternID: "fix_1"})
		}, k("T#acme#FIX#fix_1", "ATT#fxa_1"), [4]store.Key{}, 0},
		{"embedder record", func() (store.Item, error) {
			return embedderRecords.Item("op", "acme", embedderRecord{Embedder: "local"})
		}, k("T#acme#EMBEDDER", "EMBEDDER"), [4]store.Key{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it, err := tc.item()
			if err != nil {
				t.Fatal(err)
			}
			if it.Key != tc.key || it.GSI != tc.gsi || it.ExpiresAt != tc.expires {
				t.Fatalf("item = %+v %+v ttl %d,\nwant %+v %+v ttl %d", it.Key, it.GSI, it.ExpiresAt, tc.key, tc.gsi, tc.expires)
			}
		})
	}
	if got := liveOnly(store.GSI2); got != "L#" {
		t.Fatalf("live prefix = %q", got)
	}
	if got := fixAttempts.SK(store.Primary, nil); got != "ATT#" {
		t.Fatalf("attempt prefix = %q", got)
	}
}
