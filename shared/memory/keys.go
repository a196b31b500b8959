package memory

import (
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Where memories, episodes, fix patterns with their attempts and a tenant's
// embedder record live (shared/store/KEYS.md is generated from these).

// States in the sort key of the namespace indexes: live memories ("L")
// sort after superseded ones ("A", archived), so a reverse query lists the
// live ones first and a prefix query lists only them.
const (
	stateLive     = "L"
	stateArchived = "A"
)

// An episode is a memory of type "episode": both live in one item shape
// and share these keys; they differ in the index of live entities (and
// episodes have one more, by creator), so each has a table.
var (
	memoryPrimary = table.Key{PK: "MEM#{memId}", SK: "MEM", Pattern: "memory by id", Note: "TTL attribute from `ttl`"}
	memoryByNS    = table.Key{Index: store.GSI1, PK: "MEMNS#{ns}", SK: "{state}#{memId}",
		Pattern: "memories of a namespace, latest then superseded",
		Note:    "`<state>` is `L` (latest) or `A` (superseded); deleted memories leave the index"}
	memoryByNSType = table.Key{Index: store.GSI2, PK: "MEMNST#{ns}#{type}", SK: "{state}#{memId}",
		Pattern: "memories of a namespace × type", Note: "list_memories with type; list_episodes by namespace"}
)

var memories = table.Declare(table.Schema[vp.Memory]{
	Entity:  "memory",
	Primary: memoryPrimary,
	Indexes: []table.Key{memoryByNS, memoryByNSType,
		{Index: store.GSI3, PK: "MEMS", SK: "{liveMemId}", Pattern: "live memories", Note: "sparse: `<liveMemId>` is the id of a live memory; re-embedding"},
	},
	Fields:  memoryFields,
	Expires: memoryExpiry,
})

var episodes = table.Declare(table.Schema[vp.Memory]{
	Entity:  "episode",
	Primary: memoryPrimary,
	Indexes: []table.Key{memoryByNS, memoryByNSType,
		{Index: store.GSI3, PK: "EPIS", SK: "{liveMemId}", Pattern: "live episodes", Note: "sparse; list_episodes, re-embedding"},
		{Index: store.GSI4, PK: "EPIBY#{orch}", SK: "{liveMemId}", Pattern: "live episodes by creator", Note: "sparse"},
	},
	Fields:  memoryFields,
	Expires: memoryExpiry,
})

// memoryFields places a memory: a deleted one is in no index, a superseded
// one only in the namespace indexes (state A), a live one in all of them.
func memoryFields(m vp.Memory) table.Values {
	v := table.Values{"memId": m.ID, "type": m.Type}
	if m.DeletedAt != 0 {
		return v
	}
	v["ns"], v["state"] = m.Namespace, stateArchived
	if m.IsLatest {
		v["state"], v["liveMemId"], v["orch"] = stateLive, m.ID, m.CreatedBy
	}
	return v
}

// memoryExpiry rounds the ttl up to the second: the domain checks the
// milliseconds itself, the store only hides what is surely gone.
func memoryExpiry(m vp.Memory) int64 {
	if m.ExpiresAt <= 0 {
		return 0
	}
	return (m.ExpiresAt + 999) / 1000
}

// memoryTable is the table of m's shape.
func memoryTable(m vp.Memory) *table.Table[vp.Memory] {
	if m.Type == vp.MemoryTypeEpisode {
		return episodes
	}
	return memories
}

// liveOnly is the sort-key prefix of live memories in namespace index idx.
func liveOnly(idx store.Index) string {
	return memories.SK(idx, table.Values{"state": stateLive})
}

// memoryKey is the key of memory (or episode) id.
func memoryKey(tenant, id string) store.Key { return memories.KeyOf(tenant, table.Values{"memId": id}) }

var fixPatterns = table.Declare(table.Schema[vp.FixPattern]{
	Entity:  "fix pattern",
	Primary: table.Key{PK: "FIX#{fixId}", SK: "FIX", Pattern: "fix pattern by id", Note: "its attempts share the partition"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "FIXPROJ#{project}", SK: "{fixId}", Pattern: "fix patterns by project"},
		{Index: store.GSI2, PK: "FIXES", SK: "{fixId}", Pattern: "all fix patterns", Note: "list_fix_patterns; re-embedding"},
	},
	Fields: func(f vp.FixPattern) table.Values {
		return table.Values{"fixId": f.ID, "project": f.SourceProject}
	},
})

// Attempts live in their pattern's partition, so get_fix_pattern is one
// query.
var fixAttempts = table.Declare(table.Schema[vp.FixAttempt]{
	Entity:  "fix attempt",
	Primary: table.Key{PK: "FIX#{fixId}", SK: "ATT#{attemptId}", Pattern: "attempts of a fix pattern", Note: "newest first: ids are time-ordered"},
	Fields: func(a vp.FixAttempt) table.Values {
		return table.Values{"fixId": a.PatternID, "attemptId": a.ID}
	},
})

func fixKey(tenant, id string) store.Key { return fixPatterns.KeyOf(tenant, table.Values{"fixId": id}) }

// embedderRecord records which embedder made a tenant's vectors.
type embedderRecord struct {
	Embedder string `json:"embedder"`
	Since    int64  `json:"since"`
}

var embedderRecords = table.Declare(table.Schema[embedderRecord]{
	Entity:  "tenant embedder",
	Primary: table.Key{PK: "EMBEDDER", SK: "EMBEDDER", Pattern: "embedder of a tenant's vectors", Note: "a change enqueues a re-embed job"},
	Fields:  func(embedderRecord) table.Values { return nil },
})

// Tables describes this package's keys for KEYS.md. An episode's keys that
// every memory has are listed once, with the memory's.
func Tables() []table.Doc {
	mem, epi := memories.Doc(), episodes.Doc()
	var own []table.Key
	for _, k := range epi.Keys {
		if k != memoryPrimary && k != memoryByNS && k != memoryByNSType {
			own = append(own, k)
		}
	}
	epi.Keys = own
	return []table.Doc{mem, epi, fixPatterns.Doc(), fixAttempts.Doc(), embedderRecords.Doc()}
}

// LiveQueries are the queries of a tenant's live memories and live
// episodes, tenant-wide and ordered by id (so by creation time), for a
// reader that scans them all (the improvisation digest).
func LiveQueries(tenant string) []store.Query {
	return []store.Query{memories.Query(tenant, store.GSI3, nil), episodes.Query(tenant, store.GSI3, nil)}
}
