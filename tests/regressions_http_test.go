package tests

// Regression tests for the last two bugs the end-to-end tests found (both
// fixed).

import (
	"encoding/json"
	"net/http"
	"testing"
)

// The 401's WWW-Authenticate header points clients at
// /.well-known/oauth-protected-resource (RFC 9728), which `vantagepeers
// serve` answers with 404.
func TestResourceMetadataResolves(t *testing.T) {
	resp, err := httpClient.Get("http://" + srv.addr + "/.well-known/oauth-protected-resource")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var md struct {
		Resource string `json:"resource"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&md) != nil || md.Resource == "" {
		t.Errorf("GET /.well-known/oauth-protected-resource: HTTP %d, want 200 with RFC 9728 metadata naming the resource", resp.StatusCode)
	}
}

// JSON-RPC 2.0 (section 5): the error response's id "MUST be the same as the
// value of the id member in the Request Object"; only when the id cannot be
// read (parse error, invalid request) is it null. An unknown method in a
// well-formed request with id 3 gets -32601 with "id":null.
func TestMethodNotFoundKeepsID(t *testing.T) {
	resp, body := post(t, masterToken, []byte(`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`), nil)
	r := rpcError(t, resp, body)
	if r.Error == nil || r.Error.Code != -32601 || string(r.ID) != "3" {
		t.Errorf("HTTP %d %s, want -32601 with id 3", resp.StatusCode, body)
	}
}
