package embed

// FusionWeighter is implemented by embedders whose vectors deserve another
// weight than BM25 when hybrid search fuses the two rankings.
type FusionWeighter interface {
	// FusionWeight is the weight of the vector ranking in Reciprocal Rank
	// Fusion, BM25's being 1.
	FusionWeight() float64
}

// FusionWeight is e's weight in hybrid fusion: 1 (an equal say with BM25)
// unless e says otherwise.
func FusionWeight(e Embedder) float64 {
	if w, ok := e.(FusionWeighter); ok {
		if x := w.FusionWeight(); x > 0 {
			return x
		}
	}
	return 1
}

// QueryTerm is a word or expression that query expansion adds to the
// keyword side of a search, weighted against the query's own words (1).
type QueryTerm struct {
	Text   string
	Weight float64
}

// QueryExpander is implemented by embedders that know which words mean
// the same as a query's (embed/concept, from WordNet): hybrid search adds
// them to its keyword query, so that a paraphrase of the query's words
// matches. It belongs with the embedder because the expansion and the
// fusion weight were chosen together, on the same data.
type QueryExpander interface {
	// ExpandQuery returns the terms to add to query, without the query's
	// own words; nil when it knows none. It must be cheap and never fail.
	ExpandQuery(query string) []QueryTerm
}

// ExpandQuery is e's expansion of query, nil when e expands nothing.
func ExpandQuery(e Embedder, query string) []QueryTerm {
	if x, ok := e.(QueryExpander); ok {
		return x.ExpandQuery(query)
	}
	return nil
}
