// Package search is the search port: a text (BM25) and vector index over
// documents the domain writes, with hybrid retrieval fused by Reciprocal Rank
// Fusion. search/local (SQLite FTS5 + exact cosine) and search/opensearch
// implement it and pass the same behaviour suite.
//
// The index is not the source of truth. It returns ids; the domain reads
// each hit back from the store by primary key and drops what is deleted,
// superseded, expired or not readable by the caller. Filters here are for
// ranking quality and speed; the store read is what enforces visibility —
// except the tenant, which every adapter must enforce itself.
package search

import (
	"context"
	"errors"
	"sort"
)

// Doc is one indexed document.
type Doc struct {
	Tenant    string
	ID        string
	Kind      string // "memory", "episode", "fixpattern", "message", "task", "briefing", "component"
	Namespace string // "" for kinds without namespaces
	Type      string // memory type, task status, component type... (filterable)
	Owner     string // createdBy / from / orchestrator (filterable)
	// Title is weighted above Text in BM25 (may be empty).
	Title string
	Text  string
	// CreatedAt is Unix ms; ExpiresAt Unix ms or 0 for never.
	CreatedAt int64
	ExpiresAt int64
}

// Vector is an embedding and the embedder that produced it. Vectors from
// different embedders or dimensions are never compared.
type Vector struct {
	Embedder string // e.g. "local-hash-v1/384", "bedrock/amazon.titan-embed-text-v2:0/1024"
	Values   []float32
}

// Filter narrows a query. Tenant is mandatory.
type Filter struct {
	Tenant string
	Kinds  []string
	// Namespaces the caller may read: exact names or prefixes ending in "/"
	// ("project/x/" matches project/x and project/x/...); "*" matches all.
	// Empty means no namespace restriction (kinds without namespaces).
	Namespaces []string
	Types      []string
	Owner      string
	// NowMS hides documents whose ExpiresAt has passed.
	NowMS int64
}

// Hit is one result, best first.
type Hit struct {
	ID    string
	Kind  string
	Score float64
}

// Index is the port.
type Index interface {
	// Upsert indexes documents' text synchronously: once it returns, Text
	// finds them.
	Upsert(ctx context.Context, docs ...Doc) error
	// SetVector attaches an embedding to an indexed document. It may drop
	// the document's vectors of other embedders (search/local does): the
	// domain re-embeds every document when its embedder changes.
	SetVector(ctx context.Context, tenant, id string, v Vector) error
	// Delete removes documents (text and vector); absent ids are ignored.
	Delete(ctx context.Context, tenant string, ids ...string) error
	// Text is BM25 full-text search.
	Text(ctx context.Context, query string, f Filter, k int) ([]Hit, error)
	// Vector is nearest-neighbour search by cosine similarity among vectors
	// of the same embedder.
	Vector(ctx context.Context, v Vector, f Filter, k int) ([]Hit, error)
	Close() error
}

// ErrNoTenant is returned for a filter or document without a tenant.
var ErrNoTenant = errors.New("search: tenant is required")

// RRFK is the constant of Reciprocal Rank Fusion (Cormack et al. use 60).
const RRFK = 60

// Fuse merges ranked lists with Reciprocal Rank Fusion: each hit scores
// sum(1 / (RRFK + rank)) over the lists it appears in (rank from 1).
func Fuse(k int, lists ...[]Hit) []Hit {
	score := map[string]float64{}
	kind := map[string]string{}
	for _, l := range lists {
		for i, h := range l {
			score[h.ID] += 1 / float64(RRFK+i+1)
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
