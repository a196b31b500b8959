package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Search limits: the default number of results, and how many candidates
// each ranked list returns per wanted result (hits dropped by hydration and
// RRF fusion both need headroom).
const (
	DefaultSearchLimit = 10
	overFetch          = 3
	maxFetch           = 1000
)

// SearchInput is a search over memories.
type SearchInput struct {
	Query string
	// Namespace restricts to one namespace; empty searches every namespace
	// the token may read.
	Namespace string
	Limit     int
}

// MemoryHit is a memory with its relevance score (BM25, cosine or RRF).
type MemoryHit struct {
	vp.Memory
	Score float64 `json:"score"`
}

// SearchResult is what the memory and episode searches return, best first.
type SearchResult struct {
	Results []MemoryHit `json:"results"`
	Count   int         `json:"count"`
}

type mode uint8

const (
	modeText mode = iota
	modeVector
	modeHybrid
)

// TextSearch is BM25 full-text search over memories (text_search).
func (s *Service) TextSearch(ctx context.Context, p vp.Principal, in SearchInput) (SearchResult, error) {
	return s.searchMemories(ctx, "text_search", p, in, modeText, nil)
}

// Recall is semantic (vector) search over memories (recall).
func (s *Service) Recall(ctx context.Context, p vp.Principal, in SearchInput) (SearchResult, error) {
	return s.searchMemories(ctx, "recall", p, in, modeVector, nil)
}

// HybridSearch fuses BM25 and vector results with Reciprocal Rank Fusion,
// k = 60 (hybrid_search).
func (s *Service) HybridSearch(ctx context.Context, p vp.Principal, in SearchInput) (SearchResult, error) {
	return s.searchMemories(ctx, "hybrid_search", p, in, modeHybrid, nil)
}

// SearchEpisodesByKeyword is BM25 search restricted to episodes.
func (s *Service) SearchEpisodesByKeyword(ctx context.Context, p vp.Principal, in SearchInput) (SearchResult, error) {
	return s.searchMemories(ctx, "search_episodes_by_keyword", p, in, modeText, []string{vp.MemoryTypeEpisode})
}

// SearchEpisodesBySemantic is vector search restricted to episodes.
func (s *Service) SearchEpisodesBySemantic(ctx context.Context, p vp.Principal, in SearchInput) (SearchResult, error) {
	return s.searchMemories(ctx, "search_episodes_by_semantic", p, in, modeVector, []string{vp.MemoryTypeEpisode})
}

func (s *Service) searchMemories(ctx context.Context, op string, p vp.Principal, in SearchInput, md mode, types []string) (SearchResult, error) {
	tenant, err := tenantOf(op, p)
	if err != nil {
		return SearchResult{}, err
	}
	if err := checkQuery(op, in.Query); err != nil {
		return SearchResult{}, err
	}
	if err := vp.CheckNamespace(op, "namespace", in.Namespace, false); err != nil {
		return SearchResult{}, err
	}
	limit := clampSearchLimit(in.Limit)
	f := search.Filter{Tenant: tenant, Kinds: []string{KindMemory}, Types: types, NowMS: s.nowMS()}
	if in.Namespace != "" {
		if err := p.MayRead(op, "namespace", in.Namespace); err != nil {
			return SearchResult{}, err
		}
		f.Namespaces = []string{in.Namespace}
	} else if f.Namespaces = readableNamespaces(p); len(f.Namespaces) == 0 {
		// An empty result would read as "nothing matches"; the truth is that
		// this token may look nowhere, and its holder can fix that.
		return SearchResult{}, vp.E(op, vp.KindForbidden, "namespace", "this token may read no namespace, so there is nothing it can search: "+
			"create a token with --read (for example --read 'workspace,alice'), or ask an admin for read access").WithScope(vp.ScopeFull)
	}
	keep := func(m vp.Memory, now int64) bool {
		return m.Live(now) && p.CanRead(m.Namespace) &&
			(in.Namespace == "" || m.Namespace == in.Namespace) &&
			(types == nil || slices.Contains(types, m.Type))
	}
	var qv *search.Vector
	res := SearchResult{Results: []MemoryHit{}}
	seen := map[string]bool{}
	for fetch := limit * overFetch; ; fetch *= 4 {
		hits, err := s.rank(ctx, op, in.Query, &qv, f, md, min(fetch, maxFetch))
		if err != nil {
			return SearchResult{}, err
		}
		fresh := hits[:0:0]
		for _, h := range hits {
			if !seen[h.ID] {
				seen[h.ID] = true
				fresh = append(fresh, h)
			}
		}
		got, err := hydrate(ctx, s, tenant, fresh, limit-len(res.Results), memoryKey, func(m vp.Memory) bool { return keep(m, f.NowMS) })
		if err != nil {
			return SearchResult{}, records.Err(op, err)
		}
		for _, g := range got {
			res.Results = append(res.Results, MemoryHit{Memory: g.v, Score: g.score})
		}
		if len(res.Results) >= limit || len(hits) < min(fetch, maxFetch) || fetch >= maxFetch {
			break
		}
	}
	res.Count = len(res.Results)
	return res, nil
}

// rank runs the ranked queries of mode md. The query vector is computed
// once (qv caches it across calls). Hybrid retrieval is search.Hybrid (RRF,
// k = 60, the vector list weighted by embed.FusionWeight; native on
// adapters that implement it). Vector hits with a similarity of zero or
// less are dropped from vector search: they share nothing with the query.
func (s *Service) rank(ctx context.Context, op, query string, qv **search.Vector, f search.Filter, md mode, k int) ([]search.Hit, error) {
	noWords := vp.Errorf(op, vp.KindInvalid, "query", "%q has no searchable words; search for words", query)
	switch md {
	case modeText:
		hits, err := s.idx.Text(ctx, query, f, k)
		if errors.Is(err, search.ErrEmptyQuery) {
			return nil, noWords
		}
		if err != nil {
			return nil, vp.Wrap(op, vp.KindInternal, err)
		}
		return hits, nil
	case modeHybrid:
		v, err := s.queryVector(ctx, f.Tenant, query, qv)
		if err != nil {
			if ctx.Err() != nil {
				return nil, vp.Wrap(op, vp.KindInternal, err)
			}
			// The embedder is unavailable: hybrid search degrades to BM25.
			s.log.WarnContext(ctx, "query not embedded; hybrid search returns keyword results only", "op", op, "err", err)
		}
		hits, err := search.Hybrid(ctx, s.idx, query, v, f, k, search.HybridOptions{VectorWeight: embed.FusionWeight(s.emb)})
		switch {
		case errors.Is(err, search.ErrEmptyQuery) && v == nil:
			return nil, noWords
		case errors.Is(err, search.ErrEmptyQuery):
			return s.vectorHits(ctx, op, *v, f, k) // no words BM25 knows: the vector side still ranks
		case err != nil:
			return nil, vp.Wrap(op, vp.KindInternal, err)
		}
		return hits, nil
	}
	v, err := s.queryVector(ctx, f.Tenant, query, qv)
	if err != nil {
		return nil, vp.Wrap(op, vp.KindInternal, err)
	}
	if v == nil {
		return nil, noWords
	}
	return s.vectorHits(ctx, op, *v, f, k)
}

func (s *Service) vectorHits(ctx context.Context, op string, v search.Vector, f search.Filter, k int) ([]search.Hit, error) {
	hits, err := s.idx.Vector(ctx, v, f, k)
	if err != nil {
		return nil, vp.Wrap(op, vp.KindInternal, err)
	}
	kept := hits[:0]
	for _, h := range hits {
		if h.Score > 0 {
			kept = append(kept, h)
		}
	}
	return kept, nil
}

// queryVector embeds the query (once: *qv caches it). It returns nil for a
// query the embedder maps to the zero vector (no words it knows).
func (s *Service) queryVector(ctx context.Context, tenant, query string, qv **search.Vector) (*search.Vector, error) {
	if *qv != nil {
		return *qv, nil
	}
	if err := s.ensureEmbedderMarker(ctx, tenant); err != nil {
		s.log.WarnContext(ctx, "checking the tenant's embedder marker", "tenant", tenant, "err", err)
	}
	vs, err := s.emb.Embed(ctx, []string{query})
	if err == nil && len(vs) != 1 {
		err = fmt.Errorf("embedder %s returned %d vectors for one query", s.emb.Name(), len(vs))
	}
	if err != nil {
		return nil, err
	}
	zero := true
	for _, x := range vs[0] {
		if x != 0 {
			zero = false
			break
		}
	}
	if zero {
		return nil, nil
	}
	*qv = &search.Vector{Embedder: s.emb.Name(), Values: vs[0]}
	return *qv, nil
}

func checkQuery(op, q string) error {
	return SearchInput{}.Limits().Query.Text(op, q, true)
}

func clampSearchLimit(n int) int {
	switch {
	case n <= 0:
		return DefaultSearchLimit
	case float64(n) > SearchInput{}.Limits().Limit.Max:
		return int(SearchInput{}.Limits().Limit.Max)
	}
	return n
}

// readableNamespaces turns the principal's read prefixes into a search
// filter: "*" stays "*", a prefix p matches p itself and p/... . Empty when
// the principal may read nothing.
func readableNamespaces(p vp.Principal) []string {
	if p.Admin {
		return []string{vp.Wildcard}
	}
	var out []string
	for _, pre := range p.ReadPrefixes {
		pre = strings.TrimSuffix(strings.TrimSpace(pre), "/")
		switch {
		case pre == vp.Wildcard:
			return []string{vp.Wildcard}
		case pre != "":
			out = append(out, pre, pre+"/")
		}
	}
	return out
}

type hydrated[T any] struct {
	v     T
	score float64
}

// hydrate reads hits back from the store by primary key, in rank order, and
// keeps up to want of those keep accepts. Reads go in concurrent rounds of
// about the number still wanted, so the usual case (no hit dropped) is one
// round of want reads.
func hydrate[T any](ctx context.Context, s *Service, tenant string, hits []search.Hit, want int, key func(tenant, id string) store.Key, keep func(T) bool) ([]hydrated[T], error) {
	var out []hydrated[T]
	for len(hits) > 0 && len(out) < want {
		n := min(len(hits), want-len(out)+2)
		round := hits[:n]
		hits = hits[n:]
		vals := make([]*T, n)
		errs := make([]error, n)
		read := func(i int) {
			it, err := s.st.Get(ctx, key(tenant, round[i].ID))
			if errors.Is(err, store.ErrNotFound) {
				return // expired, or an orphan document of a failed write
			}
			if err != nil {
				errs[i] = err
				return
			}
			v, err := records.Decode[T]("search", it)
			if err != nil {
				errs[i] = err
				return
			}
			vals[i] = &v
		}
		if n == 1 {
			read(0)
		} else {
			var wg sync.WaitGroup
			sem := make(chan struct{}, 8)
			for i := range round {
				wg.Add(1)
				sem <- struct{}{}
				go func() {
					defer wg.Done()
					read(i)
					<-sem
				}()
			}
			wg.Wait()
		}
		for i, h := range round {
			if errs[i] != nil {
				return nil, errs[i]
			}
			if vals[i] != nil && keep(*vals[i]) && len(out) < want {
				out = append(out, hydrated[T]{v: *vals[i], score: h.Score})
			}
		}
	}
	return out, nil
}
