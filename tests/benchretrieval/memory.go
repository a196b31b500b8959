package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"path/filepath"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// memoryBackend stores and searches through the memory domain service —
// what the store_memory, text_search, recall and hybrid_search tools call —
// on the embedded stack the binary wires: the SQLite store, search/local,
// the store-backed job queue and the embedding worker, with the offline
// embedder. Vectors come from the embedding jobs, as in the product.
type memoryBackend struct {
	st    *sqlite.Store
	idx   *searchlocal.Index
	q     *storequeue.Queue
	svc   *memory.Service
	p     vp.Principal
	docOf map[string]string // memory id -> benchmark document id

	storeLat []time.Duration
}

func openMemoryBackend(ctx context.Context, dir string, emb embed.Embedder) (*memoryBackend, error) {
	if emb == nil {
		emb = embedlocal.New(embedlocal.Options{})
	}
	// The measured searches do not depend on durability; NORMAL keeps the
	// seeding of 2,760 memories quick.
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "vp.db"), Synchronous: "NORMAL"})
	if err != nil {
		return nil, err
	}
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dir, "search.db")})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, err := listing.NewSigner(key)
	if err != nil {
		return nil, err
	}
	q := storequeue.New(storequeue.Options{Store: st})
	svc := memory.New(memory.Options{Store: st, Index: idx, Embedder: emb, Queue: q, Cursors: signer})
	p := vp.Principal{Tenant: tenant, Orchestrators: []string{"bench"}, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}
	return &memoryBackend{st: st, idx: idx, q: q, svc: svc, p: p, docOf: map[string]string{}}, nil
}

func (b *memoryBackend) close() error {
	_ = b.idx.Close()
	return b.st.Close()
}

func (b *memoryBackend) store(ctx context.Context, docs []doc) error {
	for _, d := range docs {
		start := time.Now()
		res, err := b.svc.StoreMemory(ctx, b.p, memory.StoreInput{Namespace: namespace(d.Conv), Type: "observation", Content: d.Text})
		b.storeLat = append(b.storeLat, time.Since(start))
		if err != nil {
			return fmt.Errorf("store_memory %s: %w", d.ID, err)
		}
		b.docOf[res.MemoryID] = d.ID
	}
	// The embedding worker: batches until the queue is empty.
	for {
		n, err := jobs.ProcessEmbedJobs(ctx, jobs.EmbedderOptions{Queue: b.q, Memory: b.svc})
		if err != nil {
			return err
		}
		if n == 0 {
			break
		}
	}
	if dead, err := b.q.DeadLetters(ctx, 10); err != nil || len(dead) > 0 {
		return fmt.Errorf("embedding jobs dead-lettered: %d (%v)", len(dead), err)
	}
	return nil
}

func (b *memoryBackend) run(ctx context.Context, fn func(context.Context, vp.Principal, memory.SearchInput) (memory.SearchResult, error), conv, query string, k int) ([]string, error) {
	res, err := fn(ctx, b.p, memory.SearchInput{Query: query, Namespace: namespace(conv), Limit: k})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(res.Results))
	for i, h := range res.Results {
		out[i] = b.docOf[h.ID]
	}
	return out, nil
}

func (b *memoryBackend) text(ctx context.Context, conv, query string, k int) ([]string, error) {
	return b.run(ctx, b.svc.TextSearch, conv, query, k)
}

func (b *memoryBackend) vector(ctx context.Context, conv, query string, k int) ([]string, error) {
	return b.run(ctx, b.svc.Recall, conv, query, k)
}

func (b *memoryBackend) hybrid(ctx context.Context, conv, query string, k int) ([]string, error) {
	return b.run(ctx, b.svc.HybridSearch, conv, query, k)
}
