// Package opensearchtest is a stand-in OpenSearch endpoint for tests that
// wire functions to a search index (Lambda start-up, the scheduler's
// indexing): it answers what the adapter asks at start, accepts bulk
// writes and answers searches with a fixed body. The adapter's own
// protocol — query DSL, bulk bodies, k-NN — is tested against a checking
// fake in shared/search/opensearch; no OpenSearch server can run here.
package opensearchtest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// Options configures New.
type Options struct {
	// Service is the SigV4 signing name every request must carry: "es"
	// (a domain, the default) or "aoss" (serverless).
	Service string
	// SearchResponse is the body of every _search (default: no hits).
	SearchResponse string
}

// StandIn is a running stand-in, closed when the test ends.
type StandIn struct {
	URL string

	mu          sync.Mutex
	requests    []string
	bulks       []string
	unavailable bool
}

// The index and pipeline the adapter uses by default.
const (
	index        = "/vantagepeers-search"
	pipelinePath = "/_search/pipeline/"
	noHits       = `{"took":1,"timed_out":false,"hits":{"total":{"value":0,"relation":"eq"},"hits":[]}}`
)

// New starts a stand-in. Requests not signed for the service get 403,
// requests it does not know 400 (so a test that needs more notices).
func New(t testing.TB, o Options) *StandIn {
	t.Helper()
	if o.Service == "" {
		o.Service = "es"
	}
	if o.SearchResponse == "" {
		o.SearchResponse = noHits
	}
	s := &StandIn{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path)
		unavailable := s.unavailable
		s.mu.Unlock()
		auth := r.Header.Get("Authorization")
		if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 ") || !strings.Contains(auth, "/"+o.Service+"/aws4_request") {
			http.Error(w, `{"error":{"type":"security_exception","reason":"not SigV4-signed for `+o.Service+`"},"status":403}`, http.StatusForbidden)
			return
		}
		if unavailable {
			http.Error(w, `{"error":{"type":"cluster_block_exception"},"status":503}`, http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == http.MethodHead && r.URL.Path == index:
			w.WriteHeader(http.StatusOK)
		case r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, pipelinePath):
			_, _ = io.WriteString(w, `{"acknowledged":true}`)
		case r.Method == http.MethodPost && r.URL.Path == index+"/_search":
			_, _ = io.WriteString(w, o.SearchResponse)
		case r.Method == http.MethodPost && r.URL.Path == index+"/_bulk":
			b, _ := io.ReadAll(r.Body)
			s.mu.Lock()
			s.bulks = append(s.bulks, string(b))
			s.mu.Unlock()
			_, _ = io.WriteString(w, `{"took":1,"errors":false,"items":[]}`)
		default:
			http.Error(w, `{"error":{"type":"illegal_argument_exception","reason":"not in the stand-in"},"status":400}`, http.StatusBadRequest)
		}
	}))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests returns "METHOD /path" of every request so far, and forgets them.
func (s *StandIn) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.requests
	s.requests = nil
	return r
}

// Bulks returns the bodies of every bulk request so far, concatenated.
func (s *StandIn) Bulks() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.bulks, "")
}

// SetUnavailable makes every signed request fail with 503 (or not).
func (s *StandIn) SetUnavailable(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unavailable = down
}
