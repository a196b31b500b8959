package awsapp_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/search/opensearch/opensearchtest"
)

// TestMCPFunctionServesOKF: with a search index the mcp function builds
// the OKF service, and its handler mounts the signed download route, which
// refuses an unsigned request before reading anything.
func TestMCPFunctionServesOKF(t *testing.T) {
	srv := opensearchtest.New(t, opensearchtest.Options{Service: "aoss"})
	a, _, err := load(t, awsenv.FuncMCP, map[string]string{awsenv.EnvSearchEndpoint: srv.URL, awsenv.EnvSearchService: "aoss",
		awsenv.EnvQueueURL: "https://sqs.us-east-1.amazonaws.com/123456789012/jobs", awsenv.EnvMasterHash: strings.Repeat("ab", 32), awsenv.EnvCursorKey: master},
		awsapp.StaticSecrets{})
	if err != nil || a.OKF == nil {
		t.Fatalf("load: %v (okf %v)", err, a != nil && a.OKF != nil)
	}
	rec := httptest.NewRecorder()
	a.MCPHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/okf/download?t=acme&ns=x&sha=y&exp=1&sig=z", nil))
	if rec.Code != http.StatusForbidden {
		t.Fatalf("unsigned download answered %d %s", rec.Code, rec.Body.String())
	}
}
