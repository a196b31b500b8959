package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type storeEpisodeIn struct {
	Namespace string `json:"namespace" jsonschema:"e.g. orchestrator/NAME or project/NAME"`
	CreatedBy string `json:"createdBy,omitempty"`
	vp.Episode
}

type listEpisodesIn struct {
	listing.Params
	Namespace    string `json:"namespace,omitempty"`
	Orchestrator string `json:"orchestrator,omitempty" jsonschema:"the recorder"`
}

func (s *server) addEpisodeTools(m *mcp.Server, mem *memory.Service) {
	add(s, m, tool{Name: "store_episode", Title: "Store episode", Annotations: write,
		Limits:      memory.EpisodeInput{}.Limits(),
		Description: "Record an episode (a memory) after a failure, a pitfall or a pattern that worked. Example: {\"namespace\":\"orchestrator/carol\",\"context\":\"deploy\",\"goal\":\"add an index\",\"action\":\"deployed it alone\",\"outcome\":\"failed\",\"insight\":\"ship it with its field\",\"severity\":\"high\"}"},
		func(ctx context.Context, p vp.Principal, in storeEpisodeIn) (memory.StoreResult, error) {
			return mem.StoreEpisode(ctx, p, memory.EpisodeInput{Namespace: in.Namespace, CreatedBy: in.CreatedBy, Episode: in.Episode})
		})

	add(s, m, tool{Name: "get_episode", Title: "Get episode", Annotations: readOnly,
		Description: "Fetch an episode with its payload. Example: {\"memoryId\":\"mem_01jd...\"}"},
		func(ctx context.Context, p vp.Principal, in memoryIDIn) (vp.Memory, error) {
			return mem.GetEpisode(ctx, p, in.MemoryID)
		})

	add(s, m, tool{Name: "list_episodes", Title: "List episodes", Annotations: readOnly,
		Description: "List episodes, newest first. Example: {\"orchestrator\":\"carol\"}"},
		func(ctx context.Context, p vp.Principal, in listEpisodesIn) (listing.Page[any], error) {
			return mem.ListEpisodes(ctx, p, memory.ListEpisodesInput{Namespace: in.Namespace, Orchestrator: in.Orchestrator, Params: in.Params})
		})

	add(s, m, tool{Name: "search_episodes_by_keyword", Title: "Search episodes by keyword", Annotations: readOnly,
		Description: "Keyword (BM25) search over episodes: past incidents by exact terms. Example: {\"query\":\"index deploy\"}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.SearchEpisodesByKeyword(ctx, p, in.input())
		})

	add(s, m, tool{Name: "search_episodes_by_semantic", Title: "Search episodes by meaning", Annotations: readOnly,
		Description: "Semantic search over episodes: check before repeating a task that failed. Example: {\"query\":\"schema deploy failed\"}"},
		func(ctx context.Context, p vp.Principal, in searchIn) (memory.SearchResult, error) {
			return mem.SearchEpisodesBySemantic(ctx, p, in.input())
		})
}
