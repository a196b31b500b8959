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
