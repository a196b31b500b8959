package local

import (
	"context"

	"github.com/vantagepeers/vantagepeers/shared/search"
)

// VectorExact is Vector scanning the float32 rows whatever the set's size
// (no int8 candidates), the reference the quantised scan is measured by.
func VectorExact(ctx context.Context, x *Index, v search.Vector, f search.Filter, k int) ([]search.Hit, error) {
	return x.vector(ctx, v, f, k, true)
}

// QueryTerms exposes queryTerms to the tests.
var QueryTerms = queryTerms

// LoadedTenants lists the tenants whose text index is in memory.
func LoadedTenants(x *Index) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []string
	for t := range x.texts {
		out = append(out, t)
	}
	return out
}

// LoadedEmbedders lists the embedders whose vectors of tenant are in memory.
func LoadedEmbedders(x *Index, tenant string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []string
	for k := range x.sets {
		if k.tenant == tenant {
			out = append(out, k.embedder)
		}
	}
	return out
}

// StoredVectors counts the rows of search_vectors made by embedder.
func StoredVectors(tb interface{ Fatal(...any) }, x *Index, embedder string) int {
	var n int
	if err := x.r.QueryRow(`SELECT count(*) FROM search_vectors WHERE embedder = ?`, embedder).Scan(&n); err != nil {
		tb.Fatal(err)
	}
	return n
}
