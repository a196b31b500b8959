package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorder keeps the raw answers of /mcp as the client received them.
type recorder struct {
	mu      sync.Mutex
	authz   string
	answers []answer
}

type answer struct {
	method       string
	cacheControl string
	body         []byte
}

func (rc *recorder) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", rc.authz)
	var method string
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(b))
		var m struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(b, &m)
		method = m.Method
	}
	res, err := http.DefaultTransport.RoundTrip(r)
	if err != nil {
		return res, err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(b))
	rc.mu.Lock()
	rc.answers = append(rc.answers, answer{method: method, cacheControl: res.Header.Get("Cache-Control"), body: b})
	rc.mu.Unlock()
	return res, nil
}

// TestCallerDependentResultsAreNotCacheable: on the 2026-07-28 wire
// (negotiated by the Go SDK client), tools/list, resources/list, the
// resource templates, resources/read of a view and tool results are
// marked cacheScope "private" with ttlMs 0 in the raw JSON, and every
// answer of /mcp carries Cache-Control: private, no-store.
func TestCallerDependentResultsAreNotCacheable(t *testing.T) {
	f := start(t)
	rc := &recorder{authz: "Bearer " + f.alice}
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: f.url + "/mcp", HTTPClient: &http.Client{Transport: rc}}, &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ProtocolVersion; v != "2026-07-28" {
		t.Fatalf("negotiated %s, want 2026-07-28", v)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	res, err := cs.ListResources(ctx, nil)
	if err != nil || len(res.Resources) == 0 {
		t.Fatalf("resources/list: %v", err)
	}
	if _, err := cs.ListResourceTemplates(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: res.Resources[0].URI}); err != nil {
		t.Fatalf("resources/read %s: %v", res.Resources[0].URI, err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{"tools/list": false, "resources/list": false, "resources/templates/list": false, "resources/read": false}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for _, a := range rc.answers {
		if a.cacheControl != "private, no-store" {
			t.Errorf("%s: Cache-Control %q, want private, no-store", a.method, a.cacheControl)
		}
		if _, ok := marked[a.method]; !ok {
			continue
		}
		var rpc struct {
			Result map[string]json.RawMessage `json:"result"`
		}
		if err := json.Unmarshal(a.body, &rpc); err != nil || rpc.Result == nil {
			t.Fatalf("%s: %v %.200s", a.method, err, a.body)
		}
		if string(rpc.Result["cacheScope"]) != `"private"` || string(rpc.Result["ttlMs"]) != "0" {
			t.Errorf("%s: cacheScope %s ttlMs %s, want \"private\" and 0", a.method, rpc.Result["cacheScope"], rpc.Result["ttlMs"])
		}
		marked[a.method] = true
	}
	for m, seen := range marked {
		if !seen {
			t.Errorf("no answer to %s was recorded", m)
		}
	}
}
