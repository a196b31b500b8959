package httpapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// post sends an MCP initialize to /mcp with bearer (none when "").
func postInit(t *testing.T, url, bearer string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp
}

// TestFailedBearersAreLimitedPerAddress: an address that presents token
// after unknown token (each a store read) is answered 401 thirty times a
// minute, then 429 naming the limit with Retry-After; a valid token from
// the same address is never slowed by those failures, and a request
// without any token (an MCP client's discovery) still gets its 401.
func TestFailedBearersAreLimitedPerAddress(t *testing.T) {
	f := start(t)
	statuses := map[int]int{}
	for range 40 {
		resp := postInit(t, f.url, auth.NewSecret())
		statuses[resp.StatusCode]++
		if resp.StatusCode == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
			t.Fatal("a 429 without Retry-After")
		}
	}
	if statuses[http.StatusUnauthorized] != 30 || statuses[http.StatusTooManyRequests] != 10 {
		t.Fatalf("40 unknown tokens from one address: %v, want 30 × 401 then 10 × 429", statuses)
	}
	for _, tok := range []string{f.alice, f.master} {
		if resp := postInit(t, f.url, tok); resp.StatusCode != http.StatusOK {
			t.Errorf("a valid token from the limited address: %d, want 200", resp.StatusCode)
		}
	}
	if resp := postInit(t, f.url, ""); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("no token from the limited address: %d, want 401 (discovery)", resp.StatusCode)
	}
}
