package tests

// Known server bugs and rough edges found by the end-to-end tests. Each test
// asserts the behaviour we want; knownBug() skips it loudly until the bug is
// fixed (VP_E2E_KNOWN_BUGS=1 runs them as failures). When one is fixed,
// delete its knownBug() call so that it guards against regressions.

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A body that is not JSON gets HTTP 400 with a text/plain body
// ("malformed payload: unmarshaling jsonrpc message: ...") from the Go SDK's
// streamable handler, not a JSON-RPC error response {"jsonrpc":"2.0",
// "id":null,"error":{"code":-32700,...}}. Likewise an unknown method answers
// 400 text/plain `JSON RPC not handled: "x" unsupported` instead of -32601.
func TestKnownBugParseErrorIsNotJSONRPC(t *testing.T) {
	knownBug(t, "garbage JSON-RPC body / unknown method get a text/plain HTTP 400, not a JSON-RPC error (-32700 / -32601)")
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{garbage`, -32700},
		{`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`, -32601},
	} {
		resp, body := post(t, masterToken, []byte(tc.body), nil)
		var r rpcResponse
		if err := json.Unmarshal(body, &r); err != nil || r.Error == nil || r.Error.Code != tc.code {
			t.Errorf("POST %s: HTTP %d %s %q, want a JSON-RPC error with code %d",
				tc.body, resp.StatusCode, resp.Header.Get("Content-Type"), body, tc.code)
		}
	}
}

// Raw invalid UTF-8 bytes in a JSON string are silently replaced with
// U+FFFD by the JSON decoder before the domain sees them, so vp.CheckText's
// "is not valid UTF-8" check can never fire over MCP: the message is stored
// with altered content and no error is reported.
func TestKnownBugInvalidUTF8Accepted(t *testing.T) {
	knownBug(t, "invalid UTF-8 in content is accepted and silently rewritten to U+FFFD")
	tenant := newTenant("utf8bug")
	r, err := tryCallRaw(masterToken, invalidUTF8Send(), map[string]string{"X-VP-Tenant": tenant})
	if err != nil {
		// An HTTP 400 / JSON-RPC parse error that says so is fine too.
		if !strings.Contains(strings.ToLower(err.Error()), "utf-8") {
			t.Errorf("refused, but without saying why: %v", err)
		}
		return
	}
	if !r.IsError || !strings.Contains(r.text(), "content") || !strings.Contains(r.text(), "UTF-8") {
		inbox := decode[struct{ Messages []struct{ Content string } }](t, callTool(t, masterToken, tenant, "check_messages", map[string]any{"recipient": "bob"}))
		t.Errorf("send_message with bytes 0xff 0xfe in content: isError=%v %q; stored contents %q", r.IsError, r.text(), inbox.Messages)
	}
}

// The 401's WWW-Authenticate header points clients at
// /.well-known/oauth-protected-resource (RFC 9728), which answers 404.
func TestKnownBugResourceMetadata404(t *testing.T) {
	knownBug(t, "WWW-Authenticate resource_metadata points at /.well-known/oauth-protected-resource, which is 404")
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

// `vantagepeers token create` (and token list/revoke) on a fresh data dir
// creates the master token through openApp/EnsureMaster but never prints it;
// the next `serve` finds a stored master and prints nothing either, so the
// master token of that install is lost.
func TestKnownBugTokenCreateSwallowsMaster(t *testing.T) {
	knownBug(t, "token create on a fresh data dir creates a master token that is never shown")
	dir := filepath.Join(t.TempDir(), "fresh")
	cmd := exec.Command(binPath, "token", "create", "--data-dir", dir, "--tenant", "default", "--as", "alice")
	cmd.Env = childEnv(nil)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr.String())
	}
	s, err := startServer(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.stop(10 * time.Second) }()
	secretLine := regexp.MustCompile(`(?m)^  ([0-9a-f]{64})$`)
	if _, err := waitLine(s.stdout.String, secretLine, 2*time.Second); err != nil &&
		!strings.Contains(stderr.String(), "master") {
		t.Errorf("neither token create (stderr %q) nor the first serve (stdout %q) showed the master token", stderr.String(), s.stdout.String())
	}
}

// The channel and wildcard words are accepted as orchestrator ids: the
// master (or a '*' token) can create profiles named "broadcast" or "*" and
// send as "*". Such a profile receives every broadcast, yet can never be
// messaged directly (channel "broadcast" means everyone).
func TestKnownBugReservedOrchestratorIDs(t *testing.T) {
	knownBug(t, `"broadcast" and "*" are accepted as orchestrator ids (profiles, senders, broadcast recipients)`)
	tenant := newTenant("reserved")
	for _, id := range []string{"broadcast", "BROADCAST", "*"} {
		r := callTool(t, masterToken, tenant, "update_profile", map[string]any{"orchestratorId": id, "name": "x"})
		if !r.IsError || !strings.Contains(r.text(), "orchestratorId") {
			t.Errorf("update_profile orchestratorId %q: isError=%v %q, want an error naming orchestratorId", id, r.IsError, r.text())
		}
	}
	r := callTool(t, masterToken, tenant, "send_message", map[string]any{"from": "*", "channel": "bob", "content": "x"})
	if !r.IsError || !strings.Contains(r.text(), "from") {
		t.Errorf(`send_message from "*": isError=%v %q, want an error naming from`, r.IsError, r.text())
	}
}

// Recipients are case-folded ("Alice" delivers to alice) but the stored
// channel keeps the caller's spelling and the list_messages channel filter
// compares bytes, so {"channel":"alice"} misses a message sent to "Alice"
// (while the from filter is case-folded: {"from":"CAROL"} finds carol's).
func TestKnownBugChannelFilterCaseSensitive(t *testing.T) {
	knownBug(t, `list_messages {"channel":"alice"} misses messages sent to channel "Alice", though they were delivered to alice`)
	tenant := newTenant("chcase")
	sent := decode[struct{ MessageID string }](t, callTool(t, masterToken, tenant, "send_message",
		map[string]any{"from": "carol", "channel": "Alice", "content": "case"}))
	page := decode[struct {
		Items []struct {
			ID string `json:"_id"`
		}
	}](t, callTool(t, masterToken, tenant, "list_messages",
		map[string]any{"channel": "alice"}))
	if len(page.Items) != 1 || page.Items[0].ID != sent.MessageID {
		t.Errorf(`list_messages {"channel":"alice"} = %+v, want the message sent to "Alice" (%s)`, page.Items, sent.MessageID)
	}
}
