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
