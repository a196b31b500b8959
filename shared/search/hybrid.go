package search

import (
	"context"
	"sort"
)

// Hybrider is implemented by adapters that run hybrid retrieval natively
// (OpenSearch's hybrid query with an RRF pipeline); Hybrid uses it.
type Hybrider interface {
	Hybrid(ctx context.Context, query string, v *Vector, f Filter, k int, o HybridOptions) ([]Hit, error)
}

// HybridDepth is how many candidates each list (text, vector) brings to
// the fusion at least.
const HybridDepth = 50

// HybridOptions tunes Hybrid. The zero value is plain RRF of both lists.
type HybridOptions struct {
	// VectorWeight multiplies the vector list's RRF contributions (the text
	// list's weight is 1). 0 means 1. Use embed.FusionWeight(embedder): an
	// embedder that measures shared words rather than meaning (embed/local)
	// mostly repeats BM25's ranking with more noise, and deserves less.
	VectorWeight float64
	// Depth is the number of candidates per list (default HybridDepth, and
	// never fewer than k).
	Depth int
}

// Hybrid is hybrid retrieval: the best max(k, Depth) hits of Text and of
// Vector fused by Reciprocal Rank Fusion (k = 60), best k returned. With v
// nil (no embedder, or the query could not be embedded) it is Text. An
// index that implements Hybrider answers natively.
func Hybrid(ctx context.Context, idx Index, query string, v *Vector, f Filter, k int, o HybridOptions) ([]Hit, error) {
	if h, ok := idx.(Hybrider); ok {
		return h.Hybrid(ctx, query, v, f, k, o)
	}
	if k <= 0 {
		return nil, nil
	}
	depth := max(k, o.Depth)
	if o.Depth <= 0 {
		depth = max(k, HybridDepth)
	}
	text, err := idx.Text(ctx, query, f, depth)
	if err != nil {
		return nil, err
	}
	if v == nil || len(v.Values) == 0 {
		if len(text) > k {
			text = text[:k]
		}
		return text, nil
	}
	vec, err := idx.Vector(ctx, *v, f, depth)
	if err != nil {
		return nil, err
	}
	w := o.VectorWeight
	if w <= 0 {
		w = 1
	}
	return FuseWeighted(k, []float64{1, w}, text, vec), nil
}

// FuseWeighted is Fuse with a weight per list: each hit scores
// sum(weight / (RRFK + rank)). Missing weights are 1.
func FuseWeighted(k int, weights []float64, lists ...[]Hit) []Hit {
	score := map[string]float64{}
	kind := map[string]string{}
	for li, l := range lists {
		w := 1.0
		if li < len(weights) {
			w = weights[li]
		}
		for i, h := range l {
			score[h.ID] += w / float64(RRFK+i+1)
			kind[h.ID] = h.Kind
		}
	}
	out := make([]Hit, 0, len(score))
	for id, s := range score {
		out = append(out, Hit{ID: id, Kind: kind[id], Score: s})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	if len(out) > k {
		out = out[:k]
	}
	return out
}
