package tests

// Regression tests for bugs the end-to-end tests found and that were fixed
// (they started as known-bug tests in known_bugs_test.go).

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

// `vantagepeers token create` on a fresh data dir creates the master token;
// it used to be created silently, so that no command ever showed it. Now the
// token command shows it once (stderr), and it works.
func TestTokenCreateOnFreshDirShowsMaster(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fresh")
	cmd := exec.Command(binPath, "token", "create", "--data-dir", dir, "--tenant", "default", "--as", "alice")
	cmd.Env = childEnv(nil)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("token create: %v\n%s", err, stderr.String())
	}
	if !hex64.MatchString(strings.TrimSpace(stdout.String())) {
		t.Errorf("token create stdout = %q, want only the new token", stdout.String())
	}
	m := regexp.MustCompile(`(?m)^  ([0-9a-f]{64})$`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("token create on a fresh data dir did not show the master token on stderr:\n%s", stderr.String())
	}
	master := m[1]
	s, err := startServer(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.stop(10 * time.Second); err != nil {
			t.Error(err)
		}
	}()
	if strings.Contains(s.stdout.String(), master) {
		t.Errorf("serve showed the master token a second time:\n%s", s.stdout.String())
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+master)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r rpcResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Result == nil || r.Result.IsError ||
		!strings.Contains(string(r.Result.StructuredContent), `"admin":true`) {
		t.Errorf("whoami with the master token token create showed: HTTP %d %v %+v", resp.StatusCode, err, r.Result)
	}
}

// The channel and wildcard words used to be accepted as orchestrator ids:
// profiles named "broadcast" or "*" received every broadcast and could never
// be messaged directly, and "*" could send.
func TestReservedOrchestratorIDsRefused(t *testing.T) {
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
	// No profile was created, so a broadcast still reaches no one.
	peers := decode[struct{ Items []json.RawMessage }](t, callTool(t, masterToken, tenant, "list_peers", map[string]any{}))
	if len(peers.Items) != 0 {
		t.Errorf("list_peers after the refusals: %s", peers.Items)
	}
}

// Recipients are case-folded ("Alice" delivers to alice); the list_messages
// channel filter used to compare the caller's spelling byte for byte and
// missed such messages.
func TestChannelFilterFoldsCase(t *testing.T) {
	tenant := newTenant("chcase")
	sent := decode[struct{ MessageID string }](t, callTool(t, masterToken, tenant, "send_message",
		map[string]any{"from": "carol", "channel": "Alice", "content": "case"}))
	for _, filter := range []string{"alice", "Alice", "ALICE"} {
		page := decode[struct {
			Items []struct {
				ID string `json:"_id"`
			}
		}](t, callTool(t, masterToken, tenant, "list_messages", map[string]any{"channel": filter}))
		if len(page.Items) != 1 || page.Items[0].ID != sent.MessageID {
			t.Errorf(`list_messages {"channel":%q} = %+v, want the message sent to "Alice" (%s)`, filter, page.Items, sent.MessageID)
		}
	}
	inbox := decode[struct{ Messages []struct{ MessageID string } }](t, callTool(t, masterToken, tenant, "check_messages", map[string]any{"recipient": "alice"}))
	if len(inbox.Messages) != 1 || inbox.Messages[0].MessageID != sent.MessageID {
		t.Errorf("alice's inbox = %+v", inbox.Messages)
	}
}
