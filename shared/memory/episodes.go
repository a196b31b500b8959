package memory

import (
	"context"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Episodes are memories of type "episode" whose content is rendered from a
// structured payload (context, goal, action, outcome, insight, severity):
// they are found by every memory search as well as by the episode tools.

// EpisodeInput is an episode to store.
type EpisodeInput struct {
	Namespace string
	CreatedBy string
	vp.Episode
}

// StoreEpisode stores an episode as a memory of type "episode" (then
// embedded like any memory).
func (s *Service) StoreEpisode(ctx context.Context, p vp.Principal, in EpisodeInput) (StoreResult, error) {
	const op = "store_episode"
	e, err := checkEpisode(op, in.Episode)
	if err != nil {
		return StoreResult{}, err
	}
	return s.storeMemory(ctx, op, p, StoreInput{
		Namespace: in.Namespace, Type: vp.MemoryTypeEpisode, Content: renderEpisode(e),
		CreatedBy: in.CreatedBy, Episode: &e,
	})
}

// renderEpisode is the searchable text of an episode.
func renderEpisode(e vp.Episode) string {
	var b strings.Builder
	for _, f := range [][2]string{
		{"Context", e.Context}, {"Goal", e.Goal}, {"Action", e.Action}, {"Outcome", e.Outcome}, {"Insight", e.Insight},
	} {
		b.WriteString(f[0])
		b.WriteString(": ")
		b.WriteString(f[1])
		b.WriteString("\n")
	}
	b.WriteString("Severity: ")
	b.WriteString(e.Severity)
	return b.String()
}

// RemedyGetMemory is the remedy of asking for a memory as an episode: read
// it as the memory it is.
const RemedyGetMemory = "memory.get"

// GetEpisode returns one episode (a memory of type "episode").
func (s *Service) GetEpisode(ctx context.Context, p vp.Principal, id string) (vp.Memory, error) {
	const op = "get_episode"
	m, err := s.getMemory(ctx, op, "memoryId", p, id)
	if err != nil {
		return vp.Memory{}, err
	}
	if m.Type != vp.MemoryTypeEpisode {
		return vp.Memory{}, vp.Errorf(op, vp.KindNotFound, "memoryId", "memory %q is a %q memory, not an episode", id, m.Type).WithRemedy(RemedyGetMemory)
	}
	return m, nil
}

// ListEpisodesInput filters list_episodes.
type ListEpisodesInput struct {
	Namespace    string
	Orchestrator string
	Params       listing.Params
}

var episodeLiteKeys = []string{"namespace", "createdBy", "type"}

// ListEpisodes lists live episodes, newest first, optionally of one
// namespace and/or one orchestrator (their creator). Without a namespace it
// lists the episodes of every namespace the token may read.
func (s *Service) ListEpisodes(ctx context.Context, p vp.Principal, in ListEpisodesInput) (listing.Page[any], error) {
	const op = "list_episodes"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckNamespace(op, "namespace", in.Namespace, false); err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckName(op, "orchestrator", in.Orchestrator, false); err != nil {
		return listing.Page[any]{}, err
	}
	if in.Namespace != "" {
		if err := p.MayRead(op, "namespace", in.Namespace); err != nil {
			return listing.Page[any]{}, err
		}
	}
	orch := vp.NormalizeOrchestrator(in.Orchestrator)
	var q store.Query
	switch {
	case orch != "":
		q = episodes.Query(tenant, store.GSI4, table.Values{"orch": orch})
	case in.Namespace != "":
		q = episodes.Query(tenant, store.GSI2, table.Values{"ns": in.Namespace, "type": vp.MemoryTypeEpisode})
		q.SKPrefix = liveOnly(q.Index)
	default:
		q = episodes.Query(tenant, store.GSI3, nil)
	}
	q.Reverse = true
	now := s.nowMS()
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + in.Namespace + "\x00" + orch, Params: in.Params, Query: q,
		LiteKeys: episodeLiteKeys,
	}, func(it store.Item) (vp.Memory, bool, error) {
		m, err := records.Decode[vp.Memory](op, it)
		if err != nil {
			return m, false, err
		}
		keep := m.Type == vp.MemoryTypeEpisode && m.Live(now) && p.CanRead(m.Namespace) &&
			(in.Namespace == "" || m.Namespace == in.Namespace) && (orch == "" || m.CreatedBy == orch)
		return m, keep, nil
	})
}
