// Package opensearch implements the search port on OpenSearch (≥ 2.19)
// with github.com/opensearch-project/opensearch-go/v4:
//
//   - one index holds every tenant's documents; the tenant is a keyword
//     field and every query carries it as its first filter clause, with the
//     other filters (kind, namespace exact or prefix, type, owner, expiry)
//     beside it — inside the k-NN query too, where they apply during the
//     graph search;
//   - text is BM25 over "title" (boosted) and "text" with a Porter-stemming
//     analyzer, a multi_match OR of the query's words;
//   - each embedder has its own knn_vector field (HNSW, Lucene engine,
//     cosine), added to the mapping with its dimension the first time one
//     of its vectors arrives, so vectors of different embedders are never
//     compared;
//   - Hybrid is the "hybrid" query (text and k-NN) through a search
//     pipeline whose score-ranker processor fuses them by Reciprocal Rank
//     Fusion (rank constant 60; OpenSearch ≥ 2.19). A vector weight other
//     than 1 (search.HybridOptions) gets its own pipeline with
//     combination.parameters.weights, which needs a version whose
//     score-ranker processor documents them (3.x);
//   - writes go through _bulk with refresh=wait_for: once Upsert returns,
//     Text finds the documents.
//
// Bootstrap creates the index and the pipeline; it is idempotent.
//
// Unlike search/local, documents are not cut into passages: a long
// document scores as a whole.
package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	osgo "github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/vantagepeers/vantagepeers/shared/search"
)

// Options configures New.
type Options struct {
	// Client talks to the cluster (opensearchapi.NewClient; on AWS with a
	// SigV4 signer).
	Client *opensearchapi.Client
	// Index is the index name (default "vantagepeers-search").
	Index string
	// Pipeline is the name of the hybrid search pipeline (default
	// "vantagepeers-rrf"); weighted variants get a suffix.
	Pipeline string
	// TitleBoost weighs the title against the text (default 2).
	TitleBoost float64
	// Shards and Replicas of the index Bootstrap creates (default 1 and 1).
	Shards, Replicas int
	// Refresh is the refresh policy of writes (default "wait_for").
	Refresh string
	// BootstrapRetry is how long a failed bootstrap is remembered before
	// the next call tries again (default 5 s).
	BootstrapRetry time.Duration
}

// Index is the OpenSearch adapter.
type Index struct {
	c   *opensearchapi.Client
	o   Options
	mu  sync.Mutex
	dim map[string]int  // vector field -> dimension, as mapped
	pip map[string]bool // pipelines known to exist

	// The index is used only once bootstrapped: a write to a missing index
	// would have OpenSearch create it with dynamic mappings.
	bootMu     sync.Mutex
	booted     atomic.Bool
	bootErr    error
	bootFailed time.Time
}

var (
	_ search.Index    = (*Index)(nil)
	_ search.Hybrider = (*Index)(nil)
)

// New returns the adapter. Call Bootstrap at start to fail early; a call
// made before a bootstrap succeeded bootstraps first (see ready).
func New(o Options) (*Index, error) {
	if o.Client == nil {
		return nil, errors.New("search/opensearch: a client is required")
	}
	if o.Index == "" {
		o.Index = "vantagepeers-search"
	}
	if o.Pipeline == "" {
		o.Pipeline = "vantagepeers-rrf"
	}
	if o.TitleBoost <= 0 {
		o.TitleBoost = 2
	}
	if o.Shards <= 0 {
		o.Shards = 1
	}
	if o.Replicas < 0 {
		o.Replicas = 0
	} else if o.Replicas == 0 {
		o.Replicas = 1
	}
	if o.Refresh == "" {
		o.Refresh = "wait_for"
	}
	if o.BootstrapRetry <= 0 {
		o.BootstrapRetry = 5 * time.Second
	}
	return &Index{c: o.Client, o: o, dim: map[string]int{}, pip: map[string]bool{}}, nil
}

// Close releases nothing: the client belongs to the caller.
func (x *Index) Close() error { return nil }

func jsonBody(v any) io.Reader {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps, strings and numbers are marshalled
	}
	return bytes.NewReader(b)
}

// errType is the "type" of an OpenSearch error response, if err is one.
func errType(err error) (string, int) {
	var se *osgo.StructError
	if errors.As(err, &se) {
		return se.Err.Type, se.Status
	}
	return "", 0
}

// Bootstrap creates the index (settings, analyzer, mapping) when missing,
// and the hybrid search pipeline. Both are idempotent.
func (x *Index) Bootstrap(ctx context.Context) error {
	x.bootMu.Lock()
	defer x.bootMu.Unlock()
	return x.bootstrapLocked(ctx)
}

// ready bootstraps the index if no bootstrap has succeeded yet, so that a
// function that started while OpenSearch was unreachable recovers when it
// comes back. A failure is remembered for BootstrapRetry: calls meanwhile
// fail at once instead of each waiting on OpenSearch.
func (x *Index) ready(ctx context.Context) error {
	if x.booted.Load() {
		return nil
	}
	x.bootMu.Lock()
	defer x.bootMu.Unlock()
	if x.booted.Load() {
		return nil
	}
	if x.bootErr != nil && time.Since(x.bootFailed) < x.o.BootstrapRetry {
		return x.bootErr
	}
	return x.bootstrapLocked(ctx)
}

func (x *Index) bootstrapLocked(ctx context.Context) (err error) {
	defer func() {
		x.booted.Store(err == nil)
		x.bootErr, x.bootFailed = err, time.Now()
	}()
	resp, err := x.c.Indices.Exists(ctx, opensearchapi.IndicesExistsReq{Indices: []string{x.o.Index}})
	switch {
	case err == nil:
	case resp != nil && resp.StatusCode == http.StatusNotFound:
		_, err := x.c.Indices.Create(ctx, opensearchapi.IndicesCreateReq{Index: x.o.Index, Body: jsonBody(indexBody(x.o.Shards, x.o.Replicas))})
		if t, _ := errType(err); err != nil && t != "resource_already_exists_exception" {
			return fmt.Errorf("search/opensearch: create index %s: %w", x.o.Index, err)
		}
	default:
		return fmt.Errorf("search/opensearch: index %s: %w", x.o.Index, err)
	}
	return x.ensurePipeline(ctx, x.o.Pipeline, nil)
}

// request is a plain request for the APIs opensearchapi lacks (search
// pipelines).
type request struct {
	path string
	body io.Reader
}

func (r request) GetRequest(method string) (*http.Request, error) {
	req, err := http.NewRequest(method, r.path, r.body)
	if err != nil {
		return nil, err
	}
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

func (x *Index) ensurePipeline(ctx context.Context, name string, weights []float64) error {
	x.mu.Lock()
	known := x.pip[name]
	x.mu.Unlock()
	if known {
		return nil
	}
	var ack struct {
		Acknowledged bool `json:"acknowledged"`
	}
	resp, err := osgo.Do(ctx, x.c.Client, http.MethodPut, request{path: "/_search/pipeline/" + url.PathEscape(name), body: jsonBody(pipelineBody(weights))}, &ack)
	if err == nil && resp.IsError() {
		err = osgo.ParseError(resp)
	}
	if err != nil {
		return fmt.Errorf("search/opensearch: search pipeline %s: %w", name, err)
	}
	x.mu.Lock()
	x.pip[name] = true
	x.mu.Unlock()
	return nil
}

// bulk sends NDJSON actions; items failing with an ignored error type (or
// status) are not errors.
func (x *Index) bulk(ctx context.Context, op string, lines []any, ignore func(item opensearchapi.BulkRespItem) bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
	}
	res, err := x.c.Bulk(ctx, opensearchapi.BulkReq{Index: x.o.Index, Body: &buf, Params: opensearchapi.BulkParams{Refresh: x.o.Refresh}})
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if !res.Errors {
		return nil
	}
	var errs []error
	for _, m := range res.Items {
		for _, it := range m {
			if it.Error == nil || ignore != nil && ignore(it) {
				continue
			}
			errs = append(errs, fmt.Errorf("%s: %s: %s: %s", op, it.ID, it.Error.Type, it.Error.Reason))
		}
	}
	return errors.Join(errs...)
}

// Upsert implements search.Index: one bulk request of partial updates with
// doc_as_upsert, so fields are replaced and vectors already attached stay.
func (x *Index) Upsert(ctx context.Context, docs ...search.Doc) error {
	if len(docs) == 0 {
		return nil
	}
	if err := x.ready(ctx); err != nil {
		return err
	}
	lines := make([]any, 0, 2*len(docs))
	for _, d := range docs {
		if d.Tenant == "" {
			return search.ErrNoTenant
		}
		if d.ID == "" {
			return errors.New("search/opensearch.Upsert: empty document id")
		}
		lines = append(lines,
			obj{"update": obj{"_id": docID(d.Tenant, d.ID)}},
			obj{"doc": source(d), "doc_as_upsert": true})
	}
	return x.bulk(ctx, "search/opensearch.Upsert", lines, nil)
}

// Delete implements search.Index; absent ids are ignored.
func (x *Index) Delete(ctx context.Context, tenant string, ids ...string) error {
	if tenant == "" {
		return search.ErrNoTenant
	}
	if err := x.ready(ctx); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	lines := make([]any, 0, len(ids))
	for _, id := range ids {
		lines = append(lines, obj{"delete": obj{"_id": docID(tenant, id)}})
	}
	return x.bulk(ctx, "search/opensearch.Delete", lines, func(it opensearchapi.BulkRespItem) bool {
		return it.Status == http.StatusNotFound
	})
}

// ensureVectorField maps the embedder's knn_vector field with dim
// dimensions, once per process; a field already mapped with another
// dimension is search.ErrDimension.
func (x *Index) ensureVectorField(ctx context.Context, field string, dim int) error {
	x.mu.Lock()
	have, ok := x.dim[field]
	x.mu.Unlock()
	if ok {
		if have != dim {
			return fmt.Errorf("search/opensearch: %w: field %s holds %d dimensions, got %d", search.ErrDimension, field, have, dim)
		}
		return nil
	}
	_, err := x.c.Indices.Mapping.Put(ctx, opensearchapi.MappingPutReq{Indices: []string{x.o.Index}, Body: jsonBody(vectorMapping(field, dim))})
	if err != nil {
		if t, _ := errType(err); t == "illegal_argument_exception" || t == "mapper_parsing_exception" {
			return fmt.Errorf("search/opensearch: %w: %v", search.ErrDimension, err)
		}
		return fmt.Errorf("search/opensearch: map %s: %w", field, err)
	}
	x.mu.Lock()
	x.dim[field] = dim
	x.mu.Unlock()
	return nil
}

// knownDim is the dimension of a vector field, reading the mapping when
// this process has not seen the field; 0 when the field does not exist.
func (x *Index) knownDim(ctx context.Context, field string) (int, error) {
	x.mu.Lock()
	d, ok := x.dim[field]
	x.mu.Unlock()
	if ok {
		return d, nil
	}
	res, err := x.c.Indices.Mapping.Get(ctx, &opensearchapi.MappingGetReq{Indices: []string{x.o.Index}})
	if err != nil {
		return 0, fmt.Errorf("search/opensearch: read mapping: %w", err)
	}
	for _, idx := range res.GetIndices() {
		var m struct {
			Properties map[string]struct {
				Type      string `json:"type"`
				Dimension int    `json:"dimension"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(idx.Mappings, &m); err != nil {
			return 0, fmt.Errorf("search/opensearch: read mapping: %w", err)
		}
		if p, ok := m.Properties[field]; ok && p.Type == "knn_vector" {
			x.mu.Lock()
			x.dim[field] = p.Dimension
			x.mu.Unlock()
			return p.Dimension, nil
		}
	}
	return 0, nil
}

// SetVector implements search.Index. A document that is not indexed is
// ignored (its update fails with document_missing_exception).
func (x *Index) SetVector(ctx context.Context, tenant, id string, v search.Vector) error {
	if tenant == "" {
		return search.ErrNoTenant
	}
	if err := x.ready(ctx); err != nil {
		return err
	}
	if v.Embedder == "" {
		return errors.New("search/opensearch.SetVector: empty embedder name")
	}
	if len(v.Values) == 0 {
		return fmt.Errorf("search/opensearch.SetVector: %w (empty vector)", search.ErrDimension)
	}
	field := vectorField(v.Embedder)
	if err := x.ensureVectorField(ctx, field, len(v.Values)); err != nil {
		return err
	}
	if isZero(v.Values) {
		// Lucene's cosine refuses the zero vector (the embedding of a text
		// without words): it has no direction and is near nothing, so the
		// document simply has no vector.
		return nil
	}
	lines := []any{
		obj{"update": obj{"_id": docID(tenant, id)}},
		obj{"doc": obj{field: v.Values}},
	}
	return x.bulk(ctx, "search/opensearch.SetVector", lines, func(it opensearchapi.BulkRespItem) bool {
		return it.Error.Type == "document_missing_exception"
	})
}

// Text implements search.Index.
func (x *Index) Text(ctx context.Context, query string, f search.Filter, k int) ([]search.Hit, error) {
	if f.Tenant == "" {
		return nil, search.ErrNoTenant
	}
	if err := x.ready(ctx); err != nil {
		return nil, err
	}
	q := queryText(query)
	if q == "" {
		return nil, search.ErrEmptyQuery
	}
	if k <= 0 {
		return nil, nil
	}
	return x.search(ctx, "search/opensearch.Text", searchBody(textQuery(q, f, x.o.TitleBoost), k), "", scoreAsIs)
}

// Vector implements search.Index. Score is the cosine similarity
// (OpenSearch scores cosinesimil as (1 + cos) / 2).
func (x *Index) Vector(ctx context.Context, v search.Vector, f search.Filter, k int) ([]search.Hit, error) {
	if f.Tenant == "" {
		return nil, search.ErrNoTenant
	}
	if err := x.ready(ctx); err != nil {
		return nil, err
	}
	if k <= 0 {
		return nil, nil
	}
	if len(v.Values) == 0 {
		return nil, fmt.Errorf("search/opensearch.Vector: %w (empty vector)", search.ErrDimension)
	}
	field := vectorField(v.Embedder)
	dim, err := x.knownDim(ctx, field)
	if err != nil {
		return nil, err
	}
	if dim == 0 {
		return nil, nil // no vector of this embedder yet
	}
	if dim != len(v.Values) {
		return nil, fmt.Errorf("search/opensearch.Vector: %w: %s holds %d dimensions, got %d", search.ErrDimension, v.Embedder, dim, len(v.Values))
	}
	if isZero(v.Values) {
		return nil, nil // near nothing
	}
	return x.search(ctx, "search/opensearch.Vector", searchBody(knnQuery(field, v.Values, f, k), k), "", cosine)
}

func isZero(v []float32) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// Hybrid implements search.Hybrider: one "hybrid" query of the text and
// k-NN queries, each with the tenant and filter clauses, fused by the RRF
// search pipeline. Each sub-query brings max(k, Depth) candidates.
func (x *Index) Hybrid(ctx context.Context, query string, v *search.Vector, f search.Filter, k int, o search.HybridOptions) ([]search.Hit, error) {
	if f.Tenant == "" {
		return nil, search.ErrNoTenant
	}
	if err := x.ready(ctx); err != nil {
		return nil, err
	}
	q := queryText(query)
	if q == "" {
		return nil, search.ErrEmptyQuery
	}
	if k <= 0 {
		return nil, nil
	}
	depth := o.Depth
	if depth <= 0 {
		depth = search.HybridDepth
	}
	depth = max(depth, k)
	if v == nil || len(v.Values) == 0 {
		return x.Text(ctx, query, f, k)
	}
	field := vectorField(v.Embedder)
	dim, err := x.knownDim(ctx, field)
	if err != nil {
		return nil, err
	}
	if dim == 0 || isZero(v.Values) {
		return x.Text(ctx, query, f, k) // no vectors yet, or a query vector near nothing: BM25 alone
	}
	if dim != len(v.Values) {
		return nil, fmt.Errorf("search/opensearch.Hybrid: %w: %s holds %d dimensions, got %d", search.ErrDimension, v.Embedder, dim, len(v.Values))
	}
	pipeline, weights := x.o.Pipeline, []float64(nil)
	if w := o.VectorWeight; w > 0 && w != 1 {
		pipeline = x.o.Pipeline + "-v" + strconv.FormatFloat(w, 'f', -1, 64)
		weights = []float64{1, w}
	}
	if err := x.ensurePipeline(ctx, pipeline, weights); err != nil {
		return nil, err
	}
	body := searchBody(obj{"hybrid": obj{
		"pagination_depth": depth,
		"queries": []any{
			textQuery(q, f, x.o.TitleBoost),
			knnQuery(field, v.Values, f, depth),
		},
	}}, k)
	return x.search(ctx, "search/opensearch.Hybrid", body, pipeline, scoreAsIs)
}

func scoreAsIs(s float32) float64 { return float64(s) }
func cosine(s float32) float64    { return 2*float64(s) - 1 }

func (x *Index) search(ctx context.Context, op string, body obj, pipeline string, score func(float32) float64) ([]search.Hit, error) {
	res, err := x.c.Search(ctx, &opensearchapi.SearchReq{
		Indices: []string{x.o.Index},
		Body:    jsonBody(body),
		Params:  opensearchapi.SearchParams{SearchPipeline: pipeline},
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	hits := make([]search.Hit, 0, len(res.Hits.Hits))
	for _, h := range res.Hits.Hits {
		var src struct {
			ID   string `json:"id"`
			Kind string `json:"kind"`
		}
		if err := json.Unmarshal(h.Source, &src); err != nil || src.ID == "" {
			return nil, fmt.Errorf("%s: hit %s without an id in _source", op, h.ID)
		}
		hits = append(hits, search.Hit{ID: src.ID, Kind: src.Kind, Score: score(h.Score)})
	}
	return hits, nil
}

// IndexName is the index the adapter writes to.
func (x *Index) IndexName() string { return x.o.Index }

// String describes the adapter.
func (x *Index) String() string {
	return "opensearch(" + strings.Join([]string{x.o.Index, x.o.Pipeline}, ", ") + ")"
}
