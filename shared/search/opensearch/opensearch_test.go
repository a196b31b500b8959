package opensearch_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	osgo "github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/opensearch"
	"github.com/vantagepeers/vantagepeers/shared/search/searchtest"
)

var ctx = context.Background()

func open(t *testing.T) (*opensearch.Index, *fake) {
	t.Helper()
	f := newFake(t)
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	c, err := opensearchapi.NewClient(opensearchapi.Config{Client: osgo.Config{Addresses: []string{srv.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := opensearch.New(opensearch.Options{Client: c, Index: "vp-test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := x.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	return x, f
}

// TestOpenSearchProtocolBehaviour runs the port's behaviour suite against
// the adapter talking to the checking fake.
func TestOpenSearchProtocolBehaviour(t *testing.T) {
	searchtest.Run(t, func(t *testing.T) search.Index {
		x, _ := open(t)
		return x
	})
}

func TestOpenSearchProtocolBootstrap(t *testing.T) {
	x, f := open(t)
	if err := x.Bootstrap(ctx); err != nil {
		t.Fatalf("second Bootstrap: %v", err)
	}
	creates := 0
	for _, r := range f.last("/vp-test") {
		if r.Method == "PUT" {
			creates++
		}
	}
	if creates != 1 {
		t.Errorf("index created %d times, want 1 (Bootstrap is idempotent)", creates)
	}
	if _, ok := f.pipelines["vantagepeers-rrf"]; !ok {
		t.Errorf("pipeline not created: %v", f.pipelines)
	}
	if _, err := opensearch.New(opensearch.Options{}); err == nil {
		t.Error("New without a client accepted")
	}
}

// body decodes a recorded JSON body.
func body(t *testing.T, r recorded) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatalf("%s: %v", r.Body, err)
	}
	return m
}

func at(m any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, _ := m.(map[string]any)
			m = mm[k]
		case int:
			s, _ := m.([]any)
			if k >= len(s) {
				return nil
			}
			m = s[k]
		}
	}
	return m
}

func TestOpenSearchProtocolRequests(t *testing.T) {
	x, f := open(t)
	docs := []search.Doc{
		{Tenant: "acme", ID: "m1", Kind: "memory", Namespace: "project/x", Type: "note", Owner: "ana", Title: "Deploy", Text: "Rotate the keys", ExpiresAt: 5000},
		{Tenant: "acme", ID: "m2", Kind: "memory", Namespace: "project/x/sub", Type: "decision", Owner: "bob", Text: "Keys rotated weekly"},
	}
	if err := x.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	// Bulk: NDJSON of update actions with doc_as_upsert, refresh=wait_for.
	bulks := f.last("/_bulk")
	if len(bulks) != 1 || !strings.Contains(bulks[0].Query, "refresh=wait_for") {
		t.Fatalf("bulk requests %v", bulks)
	}
	lines := bytes.Split(bytes.TrimSuffix(bulks[0].Body, []byte("\n")), []byte("\n"))
	if len(lines) != 4 {
		t.Fatalf("bulk has %d lines, want 4: %s", len(lines), bulks[0].Body)
	}
	var action, doc map[string]any
	_ = json.Unmarshal(lines[0], &action)
	_ = json.Unmarshal(lines[1], &doc)
	if at(action, "update", "_id") != "4:acme:m1" || doc["doc_as_upsert"] != true || at(doc, "doc", "tenant") != "acme" || at(doc, "doc", "expires_at") != 5000.0 {
		t.Errorf("bulk lines %s / %s", lines[0], lines[1])
	}

	v := search.Vector{Embedder: "local-hash-v1/4", Values: []float32{1, 0, 0, 0}}
	if err := x.SetVector(ctx, "acme", "m1", v); err != nil {
		t.Fatal(err)
	}
	maps := f.last("/_mapping")
	if len(maps) != 1 || maps[0].Method != "PUT" {
		t.Fatalf("mapping requests %v", maps)
	}
	var field string
	for k := range at(body(t, maps[0]), "properties").(map[string]any) {
		field = k
	}
	if !strings.HasPrefix(field, "vec_local_hash_v1_4_") {
		t.Errorf("vector field %q", field)
	}
	if at(body(t, maps[0]), "properties", field, "dimension") != 4.0 {
		t.Errorf("mapping %s", maps[0].Body)
	}

	filter := search.Filter{Tenant: "acme", Kinds: []string{"memory"}, Namespaces: []string{"project/x/", "other"}, Types: []string{"note", "decision"}, Owner: "ana", NowMS: 1000}
	hits, err := x.Text(ctx, `rotate "keys" AND (NOT)`, filter, 5)
	if err != nil || len(hits) != 1 || hits[0].ID != "m1" || hits[0].Kind != "memory" {
		t.Fatalf("Text: %v %v", hits, err)
	}
	searches := f.last("/_search")
	q := body(t, searches[len(searches)-1])
	if at(q, "size") != 5.0 || at(q, "query", "bool", "must", 0, "multi_match", "query") != "rotate keys" {
		t.Errorf("text query %s", searches[len(searches)-1].Body)
	}
	if at(q, "query", "bool", "must", 0, "multi_match", "fields", 0) != "title^2" {
		t.Errorf("title boost: %v", at(q, "query", "bool", "must", 0, "multi_match", "fields"))
	}
	fl := at(q, "query", "bool", "filter").([]any)
	want := []string{
		`{"term":{"tenant":"acme"}}`,
		`{"terms":{"kind":["memory"]}}`,
		`{"terms":{"type":["note","decision"]}}`,
		`{"term":{"owner":"ana"}}`,
		`{"bool":{"minimum_should_match":1,"should":[{"term":{"namespace":"project/x"}},{"prefix":{"namespace":"project/x/"}},{"term":{"namespace":"other"}}]}}`,
		`{"bool":{"minimum_should_match":1,"should":[{"term":{"expires_at":0}},{"range":{"expires_at":{"gt":1000}}}]}}`,
	}
	if len(fl) != len(want) {
		t.Fatalf("filter clauses %v", fl)
	}
	for i, c := range fl {
		got, _ := json.Marshal(c)
		if string(got) != want[i] {
			t.Errorf("filter clause %d = %s, want %s", i, got, want[i])
		}
	}

	hits, err = x.Vector(ctx, search.Vector{Embedder: "local-hash-v1/4", Values: []float32{0.5, 0, 0, 0}}, filter, 3)
	if err != nil || len(hits) != 1 || hits[0].ID != "m1" || hits[0].Score < 0.999 {
		t.Fatalf("Vector: %v %v", hits, err)
	}
	searches = f.last("/_search")
	q = body(t, searches[len(searches)-1])
	knn := at(q, "query", "knn", field)
	if at(knn, "k") != 3.0 || len(at(knn, "vector").([]any)) != 4 {
		t.Errorf("knn query %s", searches[len(searches)-1].Body)
	}
	kf, _ := json.Marshal(at(knn, "filter", "bool", "filter", 0))
	if string(kf) != want[0] {
		t.Errorf("knn filter starts with %s, want the tenant term", kf)
	}

	hits, err = search.Hybrid(ctx, x, "keys", &v, search.Filter{Tenant: "acme"}, 2, search.HybridOptions{})
	if err != nil || len(hits) != 2 || hits[0].ID != "m1" {
		t.Fatalf("Hybrid: %v %v", hits, err)
	}
	searches = f.last("/_search")
	last := searches[len(searches)-1]
	if !strings.Contains(last.Query, "search_pipeline=vantagepeers-rrf") {
		t.Errorf("hybrid query params %q", last.Query)
	}
	q = body(t, last)
	if at(q, "query", "hybrid", "pagination_depth") != float64(search.HybridDepth) ||
		at(q, "query", "hybrid", "queries", 0, "bool", "filter", 0, "term", "tenant") != "acme" ||
		at(q, "query", "hybrid", "queries", 1, "knn", field, "filter", "bool", "filter", 0, "term", "tenant") != "acme" {
		t.Errorf("hybrid query %s", last.Body)
	}
	// A weighted fusion gets its own pipeline, with weights summing to 1.
	if _, err := search.Hybrid(ctx, x, "keys", &v, search.Filter{Tenant: "acme"}, 2, search.HybridOptions{VectorWeight: 0.25}); err != nil {
		t.Fatal(err)
	}
	p, ok := f.pipelines["vantagepeers-rrf-v0.25"]
	if !ok {
		t.Fatalf("weighted pipeline missing: %v", f.pipelines)
	}
	if ws := at(p, "parameters", "weights").([]any); ws[0] != 0.8 || ws[1] != 0.2 {
		t.Errorf("weights %v, want [0.8 0.2]", ws)
	}
	// Without a vector, hybrid is text.
	if hits, err := search.Hybrid(ctx, x, "weekly", nil, search.Filter{Tenant: "acme"}, 2, search.HybridOptions{}); err != nil || len(hits) != 1 || hits[0].ID != "m2" {
		t.Errorf("hybrid without a vector: %v %v", hits, err)
	}
	if _, err := search.Hybrid(ctx, x, "?!", &v, search.Filter{Tenant: "acme"}, 2, search.HybridOptions{}); !errors.Is(err, search.ErrEmptyQuery) {
		t.Errorf("hybrid of an empty query: %v", err)
	}

	// Delete: bulk delete actions; an absent id is not an error.
	if err := x.Delete(ctx, "acme", "m2", "absent"); err != nil {
		t.Fatal(err)
	}
	bulks = f.last("/_bulk")
	if !bytes.Contains(bulks[len(bulks)-1].Body, []byte(`{"delete":{"_id":"4:acme:absent"}}`)) {
		t.Errorf("delete bulk %s", bulks[len(bulks)-1].Body)
	}
}

func TestOpenSearchProtocolErrors(t *testing.T) {
	x, f := open(t)
	if err := x.Upsert(ctx, search.Doc{Tenant: "t", ID: "a", Text: "x"}); err != nil {
		t.Fatal(err)
	}
	// A server error surfaces with its type.
	f.mu.Lock()
	f.index = "renamed"
	f.mu.Unlock()
	_, err := x.Text(ctx, "x", search.Filter{Tenant: "t"}, 5)
	if err == nil || !strings.Contains(err.Error(), "index_not_found_exception") {
		t.Errorf("Text on a missing index: %v", err)
	}
}

func TestOpenSearchProtocolZeroVector(t *testing.T) {
	x, _ := open(t)
	if err := x.Upsert(ctx, search.Doc{Tenant: "t", ID: "empty", Text: ""}); err != nil {
		t.Fatal(err)
	}
	zero := search.Vector{Embedder: "e/2", Values: []float32{0, 0}}
	if err := x.SetVector(ctx, "t", "empty", zero); err != nil {
		t.Fatalf("zero vector: %v", err)
	}
	if hits, err := x.Vector(ctx, zero, search.Filter{Tenant: "t"}, 5); err != nil || len(hits) != 0 {
		t.Fatalf("zero query: %v %v", hits, err)
	}
}
