package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestFirstHour is a new user's ten minutes, from an empty data directory:
// the first `vantagepeers serve` prints a ready Claude Code configuration
// with an agent token (the master token apart, labelled admin, not in the
// configuration); `vantagepeers connect` gives two more agents theirs, alice
// over HTTP and bob over stdio; and the two coordinate with the official
// TypeScript MCP client (clients/firsthour.mjs): a presence, a message, a
// task bob claims and completes, and alice sees it done.
func TestFirstHour(t *testing.T) {
	requireNode(t)
	dir := filepath.Join(t.TempDir(), "data")
	// Asking for help first must not use up the first start.
	if out, err := exec.Command(binPath, "token", "--help", "--data-dir", dir).CombinedOutput(); err != nil {
		t.Fatalf("token --help: %v\n%s", err, out)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("token --help created the data dir (%v)", err)
	}

	s, err := startServer(dir, map[string]string{"USER": "carol"}) // no VP_MASTER_TOKEN: a real first start
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.stop(15 * time.Second); err != nil {
			t.Error(err)
		}
		if bad := s.errorLines(); len(bad) > 0 {
			t.Errorf("the server logged ERROR lines:\n%s", strings.Join(bad, "\n"))
		}
	}()
	greeting := waitFor(t, s, "ADMIN token")
	master := regexp.MustCompile(`(?m)^  ([0-9a-f]{64})$`).FindStringSubmatch(greeting)
	if master == nil {
		t.Fatalf("the first start shows no admin token on a line of its own:\n%s", greeting)
	}
	first := firstJSON(t, greeting)
	var code struct {
		MCPServers map[string]struct {
			Type, URL string
			Headers   map[string]string
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(first), &code); err != nil {
		t.Fatalf("the first start's configuration is not JSON (%v):\n%s", err, greeting)
	}
	entry := code.MCPServers["vantagepeers"]
	if entry.Type != "http" || entry.URL != s.url || strings.Contains(first, master[1]) {
		t.Fatalf("first-start configuration %+v: want an http entry on %s without the master token", entry, s.url)
	}
	// The printed agent token works as that agent, not as an admin.
	who := decode[map[string]any](t, callToolOn(t, s, strings.TrimPrefix(entry.Headers["Authorization"], "Bearer "), "whoami", map[string]any{}))
	if who["orchestratorId"] != "carol" || who["admin"] != false {
		t.Fatalf("the first-start token: whoami %v, want carol, not admin", who)
	}

	alice := connectOut(t, dir, "claude-code", "--as", "alice", "--url", s.url)
	bob := connectOut(t, dir, "claude-code", "--as", "bob", "--stdio")
	var cfg struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	entries := map[string]json.RawMessage{}
	for name, out := range map[string]string{"alice": alice, "bob": bob} {
		if err := json.Unmarshal([]byte(out), &cfg); err != nil {
			t.Fatalf("connect --as %s printed no JSON (%v):\n%s", name, err, out)
		}
		entries[name] = cfg.MCPServers["vantagepeers"]
	}
	runClientOn(t, s, "firsthour.mjs", "firsthour", entries)
}

// waitFor waits until the server's stdout holds needle and returns it.
func waitFor(t *testing.T, s *server, needle string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if out := s.stdout.String(); strings.Contains(out, needle) {
			time.Sleep(50 * time.Millisecond) // the rest of the greeting
			return s.stdout.String()
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("the server printed no %q within 20s:\n%s\n%s", needle, s.stdout.String(), s.logTail())
	return ""
}

// firstJSON is the first top-level JSON object in text.
func firstJSON(t *testing.T, text string) string {
	t.Helper()
	start := strings.Index(text, "{")
	if start < 0 {
		t.Fatalf("no JSON in:\n%s", text)
	}
	dec := json.NewDecoder(strings.NewReader(text[start:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("bad JSON (%v) in:\n%s", err, text)
	}
	return string(raw)
}

// connectOut runs `vantagepeers connect` on the data dir and returns what it
// printed on stdout (the configuration).
func connectOut(t *testing.T, dataDir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binPath, append(append([]string{"connect"}, args...), "--data-dir", dataDir)...)
	cmd.Env = childEnv(nil)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("connect %v: %v\n%s", args, err, errb.String())
	}
	if !strings.Contains(errb.String(), "shown once") {
		t.Errorf("connect %v: stderr %q does not say the token is shown once", args, errb.String())
	}
	return out.String()
}

// callToolOn calls a tool on the server s over raw HTTP with token.
func callToolOn(t *testing.T, s *server, token, name string, args any) *toolResult {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	req, err := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r rpcResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || r.Result == nil {
		t.Fatalf("%s: HTTP %d, %v %+v", name, resp.StatusCode, err, r.Error)
	}
	return r.Result
}
