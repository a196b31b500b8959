package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type storeEpisodeIn struct {
	Namespace string `json:"namespace" jsonschema:"where to file it, e.g. orchestrator/<you> or project/<name>"`
	CreatedBy string `json:"createdBy,omitempty" jsonschema:"author orchestrator; defaults to you"`
	vp.Episode
}

type listEpisodesIn struct {
	listing.Params
	Namespace    string `json:"namespace,omitempty" jsonschema:"only episodes of this namespace"`
	Orchestrator string `json:"orchestrator,omitempty" jsonschema:"only episodes this orchestrator recorded"`
}

func (s *server) addEpisodeTools(m *mcp.Server) {
	mem := s.opts.Memory
	if mem == nil {
		return
	}
	add(s, m, tool{Name: "store_episode", Annotations: write,
		Limits: limits{
			"context": maxLen(vp.MaxEpisodeFieldBytes), "goal": maxLen(vp.MaxEpisodeFieldBytes),
			"action": maxLen(vp.MaxEpisodeFieldBytes), "outcome": maxLen(vp.MaxEpisodeFieldBytes),
			"insight": maxLen(vp.MaxEpisodeFieldBytes), "namespace": maxLen(vp.MaxNamespaceBytes),
		},
		Description: "Record an episode after a failure, a non-obvious pitfall or a pattern that worked: context, goal, action, outcome, " +
			"insight and severity (low, medium, high, critical; minor = low, major = high). Stored as a memory of type episode. " +
			"Example: {\"namespace\":\"orchestrator/tau\",\"context\":\"Deploying schema\",\"goal\":\"Add a vector index\"," +
			"\"action\":\"Deployed the index alone\",\"outcome\":\"Deploy failed\",\"insight\":\"Ship the index with its field\",\"severity\":\"major\"}"},
		func(ctx context.Context, p vp.Principal, in storeEpisodeIn) (memory.StoreResult, error) {
			return mem.StoreEpisode(ctx, p, memory.EpisodeInput{Namespace: in.Namespace, CreatedBy: in.CreatedBy, Episode: in.Episode})
		})

	add(s, m, tool{Name: "get_episode", Annotations: readOnly,
		Description: "Fetch one episode by its memoryId, with its structured payload. Example: {\"memoryId\":\"mem_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in memoryIDIn) (vp.Memory, error) {
			return mem.GetEpisode(ctx, p, in.MemoryID)
		})

	add(s, m, tool{Name: "list_episodes", Annotations: readOnly,
		Description: "Browse episodes newest first, optionally of one namespace and/or one orchestrator. Paginated: {items, nextCursor?}; " +
			"pass nextCursor back as cursor. Example: {\"orchestrator\":\"tau\",\"limit\":10}"},
		func(ctx context.Context, p vp.Principal, in listEpisodesIn) (listing.Page[any], error) {
			return mem.ListEpisodes(ctx, p, memory.ListEpisodesInput{Namespace: in.Namespace, Orchestrator: in.Orchestrator, Params: in.Params})
		})

	add(s, m, tool{Name: "search_episodes_by_keyword", Annotations: readOnly,
		Description: "Keyword (BM25) search restricted to episodes: find past incidents by exact terms. " +
			"Example: {\"query\":\"vector index deploy\",\"limit\":5}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.SearchEpisodesByKeyword(ctx, p, in.input())
		})

	add(s, m, tool{Name: "search_episodes_by_semantic", Annotations: readOnly,
		Description: "Semantic search restricted to episodes, ranked by similarity: check before repeating a task that failed before. " +
			"Example: {\"query\":\"schema deploy failed because of an index\",\"limit\":5}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.SearchEpisodesBySemantic(ctx, p, in.input())
		})
}
