package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// memorySourcesDoctrine is the seed's VP-Sources answer-footer doctrine,
// carried by the memory search tools' descriptions (advisory only).
const memorySourcesDoctrine = " VP-Sources doctrine: MUST be called before any factual claim about fleet state, audits, dette tooling, " +
	"mission/task/client status, incident history, doctrine references. Cite returned ids in the answer footer as " +
	"`VP-Sources: recall(\"<query>\")→[ids] | none-needed:<reason>`. "

type storeMemoryIn struct {
	Namespace string        `json:"namespace" jsonschema:"scope path, case-sensitive: global, project/<name>, orchestrator/<name>, workspace/<id>"`
	Type      string        `json:"type" jsonschema:"fact, decision, feedback, project, architecture, note, warning, procedure, episode, observation, user or reference"`
	Content   string        `json:"content" jsonschema:"the memory text, at most 100000 bytes"`
	CreatedBy string        `json:"createdBy,omitempty" jsonschema:"author orchestrator; defaults to you"`
	Relations []vp.Relation `json:"relations,omitempty" jsonschema:"links to earlier memories; an updates relation supersedes its target (it leaves searches and lists)"`
	IsLatest  *bool         `json:"isLatest,omitempty" jsonschema:"default true; false stores the memory already archived"`
	TTL       string        `json:"ttl,omitempty" jsonschema:"ISO 8601 date-time with zone after which the memory is gone, e.g. 2026-07-01T00:00:00Z"`
	Episode   *vp.Episode   `json:"episode,omitempty" jsonschema:"structured payload, only with type episode (store_episode is simpler)"`
}

type memoryIDIn struct {
	MemoryID string `json:"memoryId" jsonschema:"the memoryId store_memory returned"`
}

type listMemoriesIn struct {
	listing.Params
	Namespace         string `json:"namespace" jsonschema:"the namespace to list"`
	Type              string `json:"type,omitempty" jsonschema:"only memories of this type"`
	IncludeSuperseded bool   `json:"includeSuperseded,omitempty" jsonschema:"also list memories superseded by an updates relation (after the latest ones)"`
}

type searchIn struct {
	Query     string `json:"query" jsonschema:"what to look for, in natural language or keywords"`
	Namespace string `json:"namespace,omitempty" jsonschema:"search one namespace; omit to search every namespace you may read"`
	Limit     int    `json:"limit,omitempty" jsonschema:"how many results, default 10, at most 100"`
}

func (in searchIn) input() memory.SearchInput {
	return memory.SearchInput{Query: in.Query, Namespace: in.Namespace, Limit: in.Limit}
}

func (s *server) addMemoryTools(m *mcp.Server) {
	mem := s.opts.Memory
	if mem == nil {
		return
	}
	add(s, m, tool{Name: "store_memory", Core: true, Annotations: write,
		Limits: limits{
			"content": maxLen(vp.MaxMemoryContentBytes), "namespace": maxLen(vp.MaxNamespaceBytes),
			"createdBy": maxLen(vp.MaxNameBytes), "relations": maxItems(vp.MaxRelations),
			"relations[].targetId": maxLen(vp.MaxNameBytes), "episode.context": maxLen(vp.MaxEpisodeFieldBytes),
			"episode.goal": maxLen(vp.MaxEpisodeFieldBytes), "episode.action": maxLen(vp.MaxEpisodeFieldBytes),
			"episode.outcome": maxLen(vp.MaxEpisodeFieldBytes), "episode.insight": maxLen(vp.MaxEpisodeFieldBytes),
		},
		Description: "Store a typed, namespaced memory the team can recall later: a decision, fact, feedback, procedure... " +
			"Keyword search finds it at once; semantic search within about a second. To replace an outdated memory, " +
			"add a relation {targetId, type: updates}: the old one leaves every search and list. " +
			"Example: {\"namespace\":\"project/vp\",\"type\":\"decision\",\"content\":\"Rate limiting lives in the gateway.\"}"},
		func(ctx context.Context, p vp.Principal, in storeMemoryIn) (memory.StoreResult, error) {
			return mem.StoreMemory(ctx, p, memory.StoreInput{Namespace: in.Namespace, Type: in.Type, Content: in.Content,
				CreatedBy: in.CreatedBy, Relations: in.Relations, IsLatest: in.IsLatest, TTL: in.TTL, Episode: in.Episode})
		})

	add(s, m, tool{Name: "get_memory", Annotations: readOnly,
		Description: "Fetch one memory by id with its full content, relations and state (isLatest false when superseded or deleted). " +
			"Example: {\"memoryId\":\"mem_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in memoryIDIn) (vp.Memory, error) {
			return mem.GetMemory(ctx, p, in.MemoryID)
		})

	add(s, m, tool{Name: "list_memories", Annotations: readOnly,
		Description: "Browse the latest memories of one namespace, newest first, optionally of one type. Paginated: {items, nextCursor?}; " +
			"pass nextCursor back as cursor. To find memories by meaning use recall or hybrid_search instead. " +
			"Example: {\"namespace\":\"project/vp\",\"type\":\"decision\",\"limit\":20}"},
		func(ctx context.Context, p vp.Principal, in listMemoriesIn) (listing.Page[any], error) {
			return mem.ListMemories(ctx, p, memory.ListInput{Namespace: in.Namespace, Type: in.Type, IncludeSuperseded: in.IncludeSuperseded, Params: in.Params})
		})

	add(s, m, tool{Name: "soft_delete_memory", Annotations: destructive,
		Description: "Delete a wrong or obsolete memory: it leaves every search and list at once; the row is kept for audit. " +
			"To replace a memory with a newer version, prefer store_memory with an updates relation. Example: {\"memoryId\":\"mem_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in memoryIDIn) (memory.DeleteResult, error) {
			return mem.SoftDeleteMemory(ctx, p, in.MemoryID)
		})

	add(s, m, tool{Name: "recall", Core: true, Annotations: readOnly,
		Limits: limits{
			"query": maxLen(vp.MaxQueryBytes), "namespace": maxLen(vp.MaxNamespaceBytes), "limit": between(1, vp.MaxSearchLimit),
		},
		Description: "Semantic search over memories: finds what the team knows by meaning, best first, with a similarity score. " +
			"Use at the start of a task. Omit namespace to search every namespace you may read." + memorySourcesDoctrine +
			"Example: {\"query\":\"how do we handle auth in middleware\",\"namespace\":\"project/vp\",\"limit\":5}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.Recall(ctx, p, in.input())
		})

	add(s, m, tool{Name: "text_search", Annotations: readOnly,
		Description: "Keyword (BM25) search over memories: best for exact names, ids, error messages and rare terms." + memorySourcesDoctrine +
			"Example: {\"query\":\"ECONNRESET deploy\",\"namespace\":\"global\",\"limit\":10}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.TextSearch(ctx, p, in.input())
		})

	add(s, m, tool{Name: "hybrid_search", Core: true, Annotations: readOnly,
		Limits: limits{
			"query": maxLen(vp.MaxQueryBytes), "namespace": maxLen(vp.MaxNamespaceBytes), "limit": between(1, vp.MaxSearchLimit),
		},
		Description: "Keyword and semantic search over memories fused by Reciprocal Rank Fusion: the best default when unsure." + memorySourcesDoctrine +
			"Example: {\"query\":\"deployment error on the payments service\",\"limit\":10}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.HybridSearch(ctx, p, in.input())
		})
}
