package main

import (
	"context"
	"path/filepath"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/search"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
)

// backend stores the benchmark documents and answers the three searches,
// each scoped to one conversation.
type backend interface {
	store(ctx context.Context, docs []doc) error
	text(ctx context.Context, conv, query string, k int) ([]string, error)
	vector(ctx context.Context, conv, query string, k int) ([]string, error)
	hybrid(ctx context.Context, conv, query string, k int) ([]string, error)
	close() error
}

const tenant = "bench"

func namespace(conv string) string { return "locomo/" + conv }

// indexBackend goes straight to the search port: search/local with the
// offline embedder, in process.
type indexBackend struct {
	idx  *searchlocal.Index
	emb  embed.Embedder
	opts search.HybridOptions
}

func openIndexBackend(ctx context.Context, dir string, emb embed.Embedder, vectorWeight float64) (backend, error) {
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dir, "search.db")})
	if err != nil {
		return nil, err
	}
	if vectorWeight <= 0 {
		vectorWeight = embed.FusionWeight(emb)
	}
	return &indexBackend{idx: idx, emb: emb, opts: search.HybridOptions{VectorWeight: vectorWeight}}, nil
}

func (b *indexBackend) close() error { return b.idx.Close() }

func (b *indexBackend) store(ctx context.Context, docs []doc) error {
	batch := make([]search.Doc, 0, len(docs))
	texts := make([]string, 0, len(docs))
	for _, d := range docs {
		batch = append(batch, search.Doc{Tenant: tenant, ID: d.ID, Kind: "memory", Namespace: namespace(d.Conv),
			Type: "conversation", Text: d.Text})
		texts = append(texts, d.Text)
	}
	if err := b.idx.Upsert(ctx, batch...); err != nil {
		return err
	}
	vs, err := b.emb.Embed(ctx, texts)
	if err != nil {
		return err
	}
	for i, d := range docs {
		if err := b.idx.SetVector(ctx, tenant, d.ID, search.Vector{Embedder: b.emb.Name(), Values: vs[i]}); err != nil {
			return err
		}
	}
	return nil
}

func (b *indexBackend) filter(conv string) search.Filter {
	return search.Filter{Tenant: tenant, Namespaces: []string{namespace(conv)}}
}

func ids(hits []search.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func (b *indexBackend) text(ctx context.Context, conv, query string, k int) ([]string, error) {
	hits, err := b.idx.Text(ctx, query, b.filter(conv), k)
	return ids(hits), err
}

func (b *indexBackend) queryVector(ctx context.Context, query string) (search.Vector, error) {
	vs, err := b.emb.Embed(ctx, []string{query})
	if err != nil {
		return search.Vector{}, err
	}
	return search.Vector{Embedder: b.emb.Name(), Values: vs[0]}, nil
}

func (b *indexBackend) vector(ctx context.Context, conv, query string, k int) ([]string, error) {
	v, err := b.queryVector(ctx, query)
	if err != nil {
		return nil, err
	}
	hits, err := b.idx.Vector(ctx, v, b.filter(conv), k)
	return ids(hits), err
}

func (b *indexBackend) hybrid(ctx context.Context, conv, query string, k int) ([]string, error) {
	v, err := b.queryVector(ctx, query)
	if err != nil {
		return nil, err
	}
	hits, err := search.Hybrid(ctx, b.idx, query, &v, b.filter(conv), k, b.opts)
	return ids(hits), err
}
