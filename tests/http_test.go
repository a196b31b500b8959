package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBadHTTP sends what well-behaved MCP clients never send, with a plain Go
// HTTP client, and checks that the answer is clear and the server survives.
func TestBadHTTP(t *testing.T) {
	whoami := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)

	t.Run("the scheme is case-insensitive (RFC 7235)", func(t *testing.T) {
		for _, scheme := range []string{"bearer", "BEARER", "bEaReR"} {
			if resp, body := post(t, "", whoami, map[string]string{"Authorization": scheme + " " + masterToken}); resp.StatusCode != http.StatusOK {
				t.Errorf("%s: HTTP %d, want 200: %s", scheme, resp.StatusCode, body)
			}
		}
	})
	t.Run("no or bad token: 401 invalid_token with resource_metadata", func(t *testing.T) {
		for _, tc := range []struct{ name, authorization string }{
			{"none", ""},
			{"unknown 64-hex token", "Bearer " + strings.Repeat("0", 64)},
			{"short token", "Bearer abc"},
			{"empty bearer", "Bearer "},
			{"basic scheme", "Basic " + masterToken},
		} {
			resp, body := post(t, "", whoami, map[string]string{"Authorization": tc.authorization})
			if resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("%s: HTTP %d, want 401: %s", tc.name, resp.StatusCode, body)
				continue
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("%s: Content-Type %q, want application/json", tc.name, ct)
			}
			var e struct {
				Error       string `json:"error"`
				Description string `json:"error_description"`
			}
			if err := json.Unmarshal(body, &e); err != nil || e.Error != "invalid_token" || e.Description == "" {
				t.Errorf("%s: body %s, want {\"error\":\"invalid_token\",\"error_description\":...}", tc.name, body)
			}
			wa := resp.Header.Get("WWW-Authenticate")
			want := `resource_metadata="http://` + srv.addr + `/.well-known/oauth-protected-resource"`
			if !strings.HasPrefix(wa, "Bearer ") || !strings.Contains(wa, want) {
				t.Errorf("%s: WWW-Authenticate %q, want Bearer ... %s", tc.name, wa, want)
			}
		}
		alive(t)
	})

	t.Run("X-VP-Tenant is for the master token only", func(t *testing.T) {
		tenant := newTenant("hdr")
		tok := createToken(t, tenant, "alice")
		resp, body := post(t, tok, whoami, map[string]string{"X-VP-Tenant": "default"})
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), "X-VP-Tenant") {
			t.Errorf("scoped token with X-VP-Tenant: HTTP %d %s, want 403 naming the header", resp.StatusCode, body)
		}
		resp, body = post(t, masterToken, whoami, map[string]string{"X-VP-Tenant": "Not A Tenant!"})
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "X-VP-Tenant") {
			t.Errorf("master with a malformed X-VP-Tenant: HTTP %d %s, want 400 naming the header", resp.StatusCode, body)
		}
		who := decode[struct{ Tenant string }](t, callTool(t, masterToken, tenant, "whoami", map[string]any{}))
		if who.Tenant != tenant {
			t.Errorf("master with X-VP-Tenant %s: whoami tenant %q", tenant, who.Tenant)
		}
	})

	t.Run("garbage JSON-RPC body: parse error -32700, server keeps serving", func(t *testing.T) {
		for _, body := range []string{`{garbage`, `not json at all`, `{"jsonrpc":"2.0","id":1,"method":`, "\x00\x01\x02"} {
			resp, got := post(t, masterToken, []byte(body), nil)
			r := rpcError(t, resp, got)
			if resp.StatusCode != http.StatusBadRequest || r.Error == nil || r.Error.Code != -32700 || string(r.ID) != "null" {
				t.Errorf("body %q: HTTP %d %s, want 400 with a JSON-RPC error -32700 and id null", body, resp.StatusCode, got)
			}
		}
		alive(t)
	})

	t.Run("unknown method: JSON-RPC error -32601", func(t *testing.T) {
		resp, got := post(t, masterToken, []byte(`{"jsonrpc":"2.0","id":3,"method":"no/such/method"}`), nil)
		r := rpcError(t, resp, got)
		if r.Error == nil || r.Error.Code != -32601 || !strings.Contains(r.Error.Message, "no/such/method") {
			t.Errorf("HTTP %d %s, want a JSON-RPC error -32601 naming the method", resp.StatusCode, got)
		}
		alive(t)
	})

	t.Run("invalid UTF-8 in content: clear error, nothing stored, server keeps serving", func(t *testing.T) {
		tenant := newTenant("utf8")
		resp, got := post(t, masterToken, invalidUTF8Send(), map[string]string{"X-VP-Tenant": tenant})
		var r rpcResponse
		if err := json.Unmarshal(got, &r); err != nil {
			t.Fatalf("HTTP %d %q: not a JSON-RPC response: %v", resp.StatusCode, got, err)
		}
		switch {
		case r.Error != nil: // refused at the transport: a parse error that says why
			if r.Error.Code != -32700 || !strings.Contains(r.Error.Message, "UTF-8") {
				t.Errorf("HTTP %d %s, want -32700 naming UTF-8", resp.StatusCode, got)
			}
		case r.Result != nil: // or refused by the tool, naming the field
			if !r.Result.IsError || !strings.Contains(r.Result.text(), "content") || !strings.Contains(r.Result.text(), "UTF-8") {
				t.Errorf("HTTP %d %s, want an isError result naming content and UTF-8", resp.StatusCode, got)
			}
		default:
			t.Errorf("HTTP %d %s: neither result nor error", resp.StatusCode, got)
		}
		// Nothing was stored with the bytes replaced by U+FFFD.
		inbox := decode[struct{ Messages []struct{ Content string } }](t, callTool(t, masterToken, tenant, "check_messages", map[string]any{"recipient": "bob"}))
		if len(inbox.Messages) != 0 {
			t.Errorf("the message was stored anyway: %q", inbox.Messages)
		}
		alive(t)
	})

	t.Run("body over 4 MiB: 413", func(t *testing.T) {
		big := fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{"pad":%q}}}`, strings.Repeat("a", 4<<20))
		resp, body := post(t, masterToken, big, nil)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("HTTP %d %.200s, want 413", resp.StatusCode, body)
		}
		alive(t)
	})

	t.Run("wrong Content-Type: 415", func(t *testing.T) {
		resp, body := post(t, masterToken, whoami, map[string]string{"Content-Type": "text/plain"})
		if resp.StatusCode != http.StatusUnsupportedMediaType {
			t.Errorf("HTTP %d %s, want 415", resp.StatusCode, body)
		}
	})

	t.Run("unknown tool: JSON-RPC error naming it", func(t *testing.T) {
		resp, body := post(t, masterToken, []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}`), nil)
		var r rpcResponse
		if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != http.StatusOK || r.Error == nil || !strings.Contains(r.Error.Message, "no_such_tool") {
			t.Errorf("HTTP %d %s, want a JSON-RPC error naming no_such_tool", resp.StatusCode, body)
		}
	})

	t.Run("health", func(t *testing.T) {
		resp, err := httpClient.Get("http://" + srv.addr + "/health")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		if h["status"] != "ok" || h["service"] != "vantagepeers" || h["storage"] != "sqlite" || h["transport"] != "streamable-http" {
			t.Errorf("/health = %v", h)
		}
	})
}

// rpcError decodes a JSON-RPC error response (application/json).
func rpcError(t testing.TB, resp *http.Response, body []byte) rpcResponse {
	t.Helper()
	var r rpcResponse
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("HTTP %d: Content-Type %q, want application/json: %q", resp.StatusCode, ct, body)
	}
	if err := json.Unmarshal(body, &r); err != nil || r.JSONRPC != "2.0" {
		t.Errorf("HTTP %d: %q is not a JSON-RPC response (%v)", resp.StatusCode, body, err)
	}
	return r
}

// invalidUTF8Send is a send_message call whose content holds the raw bytes
// 0xff 0xfe (never valid UTF-8), as a buggy client could send them.
func invalidUTF8Send() []byte {
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"send_message","arguments":{"from":"alice","channel":"bob","content":"bad `)
	b.Write([]byte{0xff, 0xfe})
	b.WriteString(` bytes"}}}`)
	return b.Bytes()
}

// TestFirstStart: on a fresh data dir without VP_MASTER_TOKEN, serve prints
// the master token once, on a line of its own, and it works.
func TestFirstStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fresh")
	s, err := startServer(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	secretLine := regexp.MustCompile(`^  ([0-9a-f]{64})$`)
	secret, err := waitLine(s.stdout.String, secretLine, 10*time.Second)
	if err != nil {
		_ = s.stop(5 * time.Second)
		t.Fatalf("no master token line on stdout:\n%s", s.stdout.String())
	}
	if n := strings.Count(s.stdout.String(), secret); n < 1 {
		t.Errorf("stdout names the secret %d times", n)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode: %v %v, want 0700", fi.Mode().Perm(), err)
	}
	use := func(s *server) {
		t.Helper()
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
		req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+secret)
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r rpcResponse
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Result == nil || r.Result.IsError {
			t.Fatalf("whoami with the printed master token: HTTP %d, %v %+v", resp.StatusCode, err, r)
		}
		var who struct{ Admin bool }
		_ = json.Unmarshal(r.Result.StructuredContent, &who)
		if !who.Admin {
			t.Errorf("the printed master token is not admin: %s", r.Result.StructuredContent)
		}
	}
	use(s)
	if err := s.stop(10 * time.Second); err != nil {
		t.Fatal(err)
	}

	// Second start: the token is not shown again and still works.
	s2, err := startServer(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s2.stop(10 * time.Second); err != nil {
			t.Error(err)
		}
	}()
	use(s2)
	if strings.Contains(s2.stdout.String(), secret) || secretLine.MatchString(s2.stdout.String()) {
		t.Errorf("second start printed the master token again:\n%s", s2.stdout.String())
	}
}

// TestConcurrentClients: many clients at once on one tenant; every message
// is delivered once and concurrent mark_as_read calls count each receipt
// exactly once.
func TestConcurrentClients(t *testing.T) {
	tenant := newTenant("conc")
	const senders, each = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, senders*each)
	for i := 0; i < senders; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				r, err := tryCallTool(masterToken, tenant, "send_message", map[string]any{
					"from": fmt.Sprintf("s%d", i), "channel": "sink", "content": fmt.Sprintf("m %d %d", i, j)})
				switch {
				case err != nil:
					errs <- fmt.Errorf("sender %d message %d: %v", i, j, err)
				case r.IsError:
					errs <- fmt.Errorf("sender %d message %d: %s", i, j, r.text())
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	inbox := decode[struct {
		Messages []struct{ ReceiptID, Content string }
		Count    int
		HasMore  bool
	}](t, callTool(t, masterToken, tenant, "check_messages", map[string]any{"recipient": "sink", "limit": 500}))
	if inbox.Count != senders*each || inbox.HasMore {
		t.Fatalf("sink has %d unread (hasMore %v), want %d", inbox.Count, inbox.HasMore, senders*each)
	}
	seen := map[string]bool{}
	var ids []string
	for _, m := range inbox.Messages {
		if seen[m.Content] {
			t.Errorf("message %q delivered twice", m.Content)
		}
		seen[m.Content] = true
		ids = append(ids, m.ReceiptID)
	}

	// Four clients mark the same receipts at once (100 ids per call at most).
	var mu sync.Mutex
	total := 0
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for start := 0; start < len(ids); start += 100 {
				r, err := tryCallTool(masterToken, tenant, "mark_as_read", map[string]any{"receiptIds": ids[start:min(start+100, len(ids))]})
				if err != nil {
					t.Errorf("mark_as_read: %v", err)
					return
				}
				if r.IsError {
					t.Errorf("mark_as_read: %s", r.text())
					return
				}
				var out struct{ Marked int }
				_ = json.Unmarshal(r.StructuredContent, &out)
				mu.Lock()
				total += out.Marked
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if total != len(ids) {
		t.Errorf("concurrent mark_as_read marked %d in total, want exactly %d", total, len(ids))
	}
	after := decode[struct{ Count int }](t, callTool(t, masterToken, tenant, "check_messages", map[string]any{"recipient": "sink"}))
	if after.Count != 0 {
		t.Errorf("%d unread after marking all", after.Count)
	}
}
