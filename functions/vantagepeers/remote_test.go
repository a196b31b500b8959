package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// startServe runs `vantagepeers serve` on a free port with the master
// token given, and returns its base URL once /health answers.
func startServe(t *testing.T, master string) string {
	t.Helper()
	t.Setenv("VP_MASTER_TOKEN", master)
	t.Setenv("VP_PUBLIC_BASE_URL", "")
	t.Setenv("PUBLIC_BASE_URL", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		errc <- run(ctx, []string{"serve", "--addr", addr, "--data-dir", filepath.Join(t.TempDir(), "data"), "--log-level", "error"},
			strings.NewReader(""), io.Discard, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	base := "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r, err := http.Get(base + "/health"); err == nil {
			_ = r.Body.Close()
			return base
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// whoami calls the whoami tool on mcpURL with token, and returns its
// result as JSON text, or the error of the connection.
func whoami(ctx context.Context, mcpURL, token string) (string, error) {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: mcpURL, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		return "", err
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "whoami", Arguments: map[string]any{}})
	if err != nil {
		return "", err
	}
	if res.IsError {
		return "", errors.New("whoami answered an error")
	}
	b, _ := json.Marshal(res.StructuredContent)
	return string(b), nil
}

// connect --remote --url mints the agent token through the deployment's
// admin API (the master token on stdin, never in a flag) and prints the
// same configuration as on a local data dir; the token works on /mcp,
// token --url lists and revokes it, and a wrong admin token gets the
// server's reason. No local data dir is created.
func TestRemoteConnectAndTokenThroughTheAdminAPI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	master := strings.Repeat("cd", 32)
	base := startServe(t, master)
	mcpURL := base + "/mcp"
	local := filepath.Join(t.TempDir(), "never")
	cli := func(stdin string, args ...string) (string, string, error) {
		var out, errb bytes.Buffer
		// the positional arguments last: flags after them are not read
		err := run(ctx, append([]string{args[0], args[1], "--data-dir", local}, args[2:]...), strings.NewReader(stdin), &out, &errb)
		return out.String(), errb.String(), err
	}

	out, _, err := cli(master+"\n", "connect", "claude-code", "--as", "alice", "--remote", "--url", mcpURL)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Type, URL string
			Headers   map[string]string
		} `json:"mcpServers"`
	}
	mustJSON(t, out, &cfg)
	e := cfg.MCPServers["vantagepeers"]
	if e.Type != "http" || e.URL != mcpURL || !strings.HasPrefix(e.Headers["Authorization"], "Bearer ") {
		t.Fatalf("connect --remote printed %s", out)
	}
	agent := strings.TrimPrefix(e.Headers["Authorization"], "Bearer ")
	who, err := whoami(ctx, mcpURL, agent)
	if err != nil || !strings.Contains(who, `"alice"`) || strings.Contains(who, `"admin":true`) {
		t.Fatalf("the minted token on /mcp: %v %s", err, who)
	}

	// codex (stdio by default) is configured over HTTP for a deployment.
	if out, _, err := cli(master, "connect", "codex", "--as", "bob", "--remote", "--url", mcpURL); err != nil || !strings.Contains(out, `url = "`+mcpURL+`"`) {
		t.Fatalf("connect codex --remote: %v\n%s", err, out)
	}

	// token create|list|revoke --url.
	secret, _, err := cli(master, "token", "create", "--url", mcpURL, "--tenant", "default", "--as", "carol", "--read", "project/x", "--label", "remote")
	if err != nil || len(strings.TrimSpace(secret)) != 64 {
		t.Fatalf("token create --url: %v %q", err, secret)
	}
	secret = strings.TrimSpace(secret)
	if who, err := whoami(ctx, mcpURL, secret); err != nil || !strings.Contains(who, `"carol"`) {
		t.Fatalf("the created token on /mcp: %v %s", err, who)
	}
	list, _, err := cli(master, "token", "list", "--url", mcpURL)
	var carol string
	for _, l := range strings.Split(list, "\n") {
		if strings.Contains(l, "carol") && strings.Contains(l, "active") && strings.HasSuffix(strings.TrimSpace(l), "remote") {
			carol = strings.Fields(l)[0]
		}
	}
	if err != nil || carol == "" || !strings.Contains(list, "alice") || !strings.Contains(list, "bob") {
		t.Fatalf("token list --url: %v\n%s", err, list)
	}
	if out, _, err := cli(master, "token", "revoke", "--url", mcpURL, carol); err != nil || out != "revoked "+carol+"\n" {
		t.Fatalf("token revoke --url: %v %q", err, out)
	}
	if _, err := whoami(ctx, mcpURL, secret); err == nil {
		t.Fatal("a token revoked through --url still works on /mcp")
	}
	if list, _, _ := cli(master, "token", "list", "--url", mcpURL, "--tenant", "default"); !strings.Contains(list, carol) || !strings.Contains(list, "revoked") {
		t.Fatalf("token list --url after the revocation:\n%s", list)
	}

	// A wrong admin token, and an agent token, get the server's reason.
	for _, c := range []struct{ token, reason string }{
		{strings.Repeat("0", 64), "the token is not valid"},
		{agent, "only the master token may call the admin endpoints"},
	} {
		for _, args := range [][]string{
			{"connect", "cursor", "--as", "dave", "--remote", "--url", mcpURL},
			{"token", "list", "--url", mcpURL},
			{"token", "revoke", "--url", mcpURL, carol},
		} {
			if _, _, err := cli(c.token, args...); err == nil || !strings.Contains(err.Error(), c.reason) {
				t.Errorf("%v with a refused admin token: %v, want %q", args, err, c.reason)
			}
		}
	}
	// No token on stdin, or a terminal (a device) instead of a pipe.
	if _, _, err := cli("", "token", "list", "--url", mcpURL); err == nil || !strings.Contains(err.Error(), "master) token on stdin: empty") {
		t.Errorf("an empty stdin: %v", err)
	}
	dev, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	if err := run(ctx, []string{"token", "list", "--url", mcpURL, "--data-dir", local}, dev, io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "stdin is a terminal") {
		t.Errorf("a device on stdin: %v", err)
	}
	if _, err := os.Stat(local); !os.IsNotExist(err) {
		t.Errorf("a remote command touched the local data dir: %v", err)
	}
}

// connect --remote --write writes the host's file as a local connect does,
// refuses an existing entry without --force, and leaves no live token
// behind when it refuses.
func TestRemoteConnectWriteBehavesAsLocally(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	master := strings.Repeat("ef", 32)
	mcpURL := startServe(t, master) + "/mcp"
	t.Chdir(t.TempDir())
	local := filepath.Join(t.TempDir(), "never")
	args := []string{"connect", "claude-code", "--as", "alice", "--remote", "--url", mcpURL, "--write", "--data-dir", local}
	if err := run(ctx, args, strings.NewReader(master), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(".mcp.json")
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(".mcp.json"); fi.Mode().Perm() != 0o600 {
		t.Errorf(".mcp.json has mode %v; it holds a token", fi.Mode().Perm())
	}
	var cfg struct {
		MCPServers map[string]struct{ Headers map[string]string } `json:"mcpServers"`
	}
	mustJSON(t, string(raw), &cfg)
	if who, err := whoami(ctx, mcpURL, strings.TrimPrefix(cfg.MCPServers["vantagepeers"].Headers["Authorization"], "Bearer ")); err != nil || !strings.Contains(who, `"alice"`) {
		t.Fatalf("the written token on /mcp: %v %s", err, who)
	}
	if err := run(ctx, args, strings.NewReader(master), io.Discard, io.Discard); err == nil {
		t.Fatal("a second --write replaced the entry")
	}
	if after, _ := os.ReadFile(".mcp.json"); !bytes.Equal(raw, after) {
		t.Fatal("a refused --write changed .mcp.json")
	}
	var list bytes.Buffer
	if err := run(ctx, []string{"token", "list", "--url", mcpURL, "--data-dir", local}, strings.NewReader(master), &list, io.Discard); err != nil {
		t.Fatal(err)
	}
	active := 0
	for _, l := range strings.Split(list.String(), "\n") {
		if strings.Contains(l, " alice ") && strings.Contains(l, " active ") {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("after a refused --write, %d active tokens of alice (want the first only):\n%s", active, list.String())
	}
	if err := run(ctx, append(args, "--force"), strings.NewReader(master), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	if forced, _ := os.ReadFile(".mcp.json"); bytes.Equal(raw, forced) {
		t.Fatal("--force did not replace the entry")
	}
}
