package opensearch_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	osgo "github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/opensearch"
)

// TestProtocolBootstrapAfterOutage: an adapter whose bootstrap failed
// (OpenSearch down at start) writes nothing — a write to a missing index
// would create it with dynamic mappings — fails fast while the failure is
// fresh, and bootstraps then writes once OpenSearch answers again.
func TestProtocolBootstrapAfterOutage(t *testing.T) {
	var mu sync.Mutex
	down := true
	count := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		key := r.Method + " " + r.URL.Path
		if strings.HasPrefix(r.URL.Path, "/_search/pipeline/") {
			key = r.Method + " pipeline"
		}
		count[key]++
		w.Header().Set("Content-Type", "application/json")
		switch {
		case down:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":{"type":"cluster_block_exception","reason":"down"},"status":503}`)
		case key == "HEAD /vp-test":
			w.WriteHeader(http.StatusOK)
		case key == "PUT pipeline":
			_, _ = io.WriteString(w, `{"acknowledged":true}`)
		case key == "POST /vp-test/_bulk":
			_, _ = io.WriteString(w, `{"took":1,"errors":false,"items":[]}`)
		default:
			http.Error(w, `{"error":{"type":"illegal_argument_exception"},"status":400}`, http.StatusBadRequest)
		}
	}))
	defer srv.Close()
	seen := func(key string) int { mu.Lock(); defer mu.Unlock(); return count[key] }

	c, err := opensearchapi.NewClient(opensearchapi.Config{Client: osgo.Config{Addresses: []string{srv.URL}, DisableRetry: true}})
	if err != nil {
		t.Fatal(err)
	}
	x, err := opensearch.New(opensearch.Options{Client: c, Index: "vp-test", BootstrapRetry: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	doc := search.Doc{Tenant: "acme/task", ID: "tsk_1", Kind: "task", Title: "rotate the logs"}
	if err := x.Bootstrap(ctx); err == nil {
		t.Fatal("bootstrap succeeded against a down cluster")
	}
	if err := x.Upsert(ctx, doc); err == nil {
		t.Fatal("a write went through without a bootstrap")
	}
	if _, err := x.Text(ctx, "logs", search.Filter{Tenant: "acme/task"}, 5); err == nil {
		t.Fatal("a search went through without a bootstrap")
	}
	if n := seen("HEAD /vp-test"); n != 1 {
		t.Errorf("the fresh failure was retried: %d index checks, want 1", n)
	}
	if n := seen("POST /vp-test/_bulk"); n != 0 {
		t.Fatalf("%d bulk requests reached a cluster with no bootstrapped index", n)
	}

	mu.Lock()
	down = false
	mu.Unlock()
	time.Sleep(150 * time.Millisecond)
	if err := x.Upsert(ctx, doc); err != nil {
		t.Fatalf("after the outage: %v", err)
	}
	if err := x.Upsert(ctx, doc); err != nil {
		t.Fatal(err)
	}
	if h, p, b := seen("HEAD /vp-test"), seen("PUT pipeline"), seen("POST /vp-test/_bulk"); h != 2 || p != 1 || b != 2 {
		t.Errorf("after the outage: %d index checks, %d pipeline puts, %d bulks; want 2, 1, 2 (one bootstrap, then writes)", h, p, b)
	}
}
