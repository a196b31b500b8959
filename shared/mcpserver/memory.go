package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/uimarker"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type storeMemoryIn struct {
	Namespace string        `json:"namespace" jsonschema:"global, project/NAME, orchestrator/NAME or workspace/ID; case-sensitive"`
	Type      string        `json:"type" jsonschema:"fact|decision|feedback|project|architecture|note|warning|procedure|episode|observation|user|reference"`
	Content   string        `json:"content"`
	CreatedBy string        `json:"createdBy,omitempty"`
	Relations []vp.Relation `json:"relations,omitempty"`
	IsLatest  *bool         `json:"isLatest,omitempty" jsonschema:"default true; false stores it archived"`
	TTL       string        `json:"ttl,omitempty" jsonschema:"expiry, e.g. 2026-07-01T00:00:00Z"`
	Episode   *vp.Episode   `json:"episode,omitempty" jsonschema:"only with type episode"`
}

type memoryIDIn struct {
	MemoryID string `json:"memoryId"`
}

type listMemoriesIn struct {
	listing.Params
	Namespace         string `json:"namespace"`
	Type              string `json:"type,omitempty"`
	IncludeSuperseded bool   `json:"includeSuperseded,omitempty" jsonschema:"also superseded ones, after the latest"`
}

type searchIn struct {
	Query     string `json:"query"`
	Namespace string `json:"namespace,omitempty"`
	Limit     int    `json:"limit,omitempty" jsonschema:"default 10, max 100"`
}

func (in searchIn) input() memory.SearchInput {
	return memory.SearchInput{Query: in.Query, Namespace: in.Namespace, Limit: in.Limit}
}

// MemoryTools are the tools of memories, episodes and fix patterns over
// mem; none when mem is nil (no search index).
func MemoryTools(mem *memory.Service) Toolset {
	if mem == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) {
		s.addMemoryTools(m, mem)
		s.addEpisodeTools(m, mem)
		s.addFixPatternTools(m, mem)
	}}
}

func (s *server) addMemoryTools(m *mcp.Server, mem *memory.Service) {
	add(s, m, tool{Name: "store_memory", Title: "Store memory", Core: true, Annotations: write,
		Limits:      memory.StoreInput{}.Limits(),
		Description: "Store a memory for the team; keyword search finds it at once, semantic search within ~1 s. To replace an outdated one add relation {targetId, type:updates}. Example: {\"namespace\":\"project/vp\",\"type\":\"decision\",\"content\":\"Rate limiting lives in the gateway.\"}"},
		func(ctx context.Context, p vp.Principal, in storeMemoryIn) (memory.StoreResult, error) {
			return mem.StoreMemory(ctx, p, memory.StoreInput{Namespace: in.Namespace, Type: in.Type, Content: in.Content,
				CreatedBy: in.CreatedBy, Relations: in.Relations, IsLatest: in.IsLatest, TTL: in.TTL, Episode: in.Episode})
		})

	add(s, m, tool{Name: "get_memory", Title: "Get memory", Annotations: readOnly,
		Description: "Fetch a memory; isLatest is false once superseded or deleted. Example: {\"memoryId\":\"mem_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in memoryIDIn) (vp.Memory, error) {
			return mem.GetMemory(ctx, p, in.MemoryID)
		})

	add(s, m, tool{Name: "list_memories", Title: "List memories", Annotations: readOnly,
		Description: "List a namespace's latest memories, newest first. " +
			"Example: {\"namespace\":\"project/vp\",\"type\":\"decision\"}"},
		func(ctx context.Context, p vp.Principal, in listMemoriesIn) (listing.Page[any], error) {
			return mem.ListMemories(ctx, p, memory.ListInput{Namespace: in.Namespace, Type: in.Type, IncludeSuperseded: in.IncludeSuperseded, Params: in.Params})
		})

	add(s, m, tool{Name: "soft_delete_memory", Title: "Soft-delete memory", Annotations: destructive,
		Description: "Delete a wrong memory: it leaves searches and lists at once (kept for audit); to supersede one, use an updates relation. Example: {\"memoryId\":\"mem_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in memoryIDIn) (memory.DeleteResult, error) {
			return mem.SoftDeleteMemory(ctx, p, in.MemoryID)
		})

	add(s, m, tool{Name: "recall", Title: "Recall memories", Marker: markMemories, UI: uimarker.KindMemoryQuote, Core: true, Annotations: readOnly,
		Limits:      memory.SearchInput{}.Limits(),
		Description: "Semantic search over the memories you may read, best first with a score: finds notes by meaning. Example: {\"query\":\"auth in middleware\",\"limit\":5}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.Recall(ctx, p, in.input())
		})

	add(s, m, tool{Name: "text_search", Title: "Text search memories", Annotations: readOnly,
		Description: "Keyword (BM25) search over the memories you may read, best first: for exact names, ids, error messages, rare terms. Example: {\"query\":\"ECONNRESET deploy\"}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.TextSearch(ctx, p, in.input())
		})

	add(s, m, tool{Name: "hybrid_search", Title: "Hybrid search memories", Marker: markMemories, UI: uimarker.KindMemoryQuote, Core: true, Annotations: readOnly,
		Limits:      memory.SearchInput{}.Limits(),
		Description: "Keyword + semantic search over the memories you may read, fused (RRF): the best default search. Example: {\"query\":\"payments deploy error\"}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.HybridSearch(ctx, p, in.input())
		})
}
