package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
)

// connect codex --http prints the shell line that gives Codex its token
// after the TOML (which names VP_TOKEN only), and --write prints the same
// line: without it the agent cannot connect.
func TestConnectCodexHTTPPrintsTheTokenExport(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	t.Chdir(t.TempDir())
	t.Setenv("CODEX_HOME", filepath.Join(t.TempDir(), "codex"))
	export := regexp.MustCompile(`(?m)^export VP_TOKEN=([0-9a-f]{64})$`)
	for _, write := range []bool{false, true} {
		args := []string{"connect", "codex", "--as", "erin", "--http", "--data-dir", dir}
		if write {
			args = append(args, "--write")
		}
		var out, errb bytes.Buffer
		if err := run(ctx, args, nil, &out, &errb); err != nil {
			t.Fatalf("%v: %v %s", args, err, errb.String())
		}
		m := export.FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("%v printed no export VP_TOKEN line on stdout:\n%s", args, out.String())
		}
		if !write && !strings.Contains(out.String()[:strings.Index(out.String(), m[0])], `bearer_token_env_var = "VP_TOKEN"`) {
			t.Fatalf("the export line does not follow the TOML:\n%s", out.String())
		}
		a, err := openApp(ctx, dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := a.Tokens.Resolve(ctx, m[1])
		_ = a.Close()
		if err != nil || p.DefaultOrchestrator() != "erin" {
			t.Fatalf("the exported token: %+v, %v", p, err)
		}
	}
}

// A --write that the file refuses mints no token at all.
func TestConnectWriteRefusedMintsNoToken(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	t.Chdir(t.TempDir())
	t.Setenv("CODEX_HOME", filepath.Join(t.TempDir(), "codex"))
	for _, host := range []string{"claude-code", "codex"} {
		args := []string{"connect", host, "--as", "alice", "--write", "--data-dir", dir}
		if err := run(ctx, args, nil, io.Discard, io.Discard); err != nil {
			t.Fatal(err)
		}
		before := listTokens(t, dir)
		if err := run(ctx, args, nil, io.Discard, io.Discard); err == nil {
			t.Fatalf("%s: a second --write was accepted", host)
		}
		if after := listTokens(t, dir); after != before {
			t.Fatalf("%s: a refused --write changed the tokens:\nbefore\n%s\nafter\n%s", host, before, after)
		}
		if n := strings.Count(before, "\n"); n < 2 || strings.Contains(before, "revoked") {
			t.Fatalf("%s: token list:\n%s", host, before)
		}
	}
}

func listTokens(t *testing.T, dir string) string {
	t.Helper()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "list", "--data-dir", dir}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// The first-start hint names the binary as the user ran it
// (hostconfig.CommandName).
func TestFirstStartHintNamesTheBinary(t *testing.T) {
	a, err := openApp(context.Background(), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	var out bytes.Buffer
	if err := printFirstStart(context.Background(), &out, a, "http://127.0.0.1:1/mcp", "./bin/vantagepeers"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "\n  ./bin/vantagepeers connect claude-code --as ") {
		t.Fatalf("the first start names the binary otherwise:\n%s", out.String())
	}
}

// Over stdio with a refused VP_TOKEN every request gets the reason, not
// only initialize: a real exchange of JSON-RPC lines.
func TestStdioRefusedTokenAnswersEveryRequest(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secret, tok := revokedToken(t, dir)
	t.Setenv("VP_TOKEN", secret)
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":"three","method":"tools/call","params":{"name":"get_status","arguments":{}}}`,
	}, "\n") + "\n"
	var out bytes.Buffer
	if err := run(ctx, []string{"stdio", "--data-dir", dir, "--log-level", "error"}, strings.NewReader(in), &out, io.Discard); err != nil {
		t.Fatalf("stdio: %v", err)
	}
	var ids []string
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var resp struct {
			ID    any `json:"id"`
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal(sc.Bytes(), &resp); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		if resp.Error == nil || resp.Error.Code != mcpserver.CodeUnauthorized || !strings.Contains(resp.Error.Message, "VP_TOKEN was refused: token "+tok.ID+" was revoked") {
			t.Fatalf("answer %s; want the refusal", sc.Text())
		}
		ids = append(ids, fmt.Sprint(resp.ID))
	}
	if strings.Join(ids, ",") != "1,2,three" {
		t.Fatalf("answered ids %v; want 1, 2, three (one per request, none for the notification)", ids)
	}
}

// Flags after a positional argument are read in every command: an
// unknown one is named (status 2), never taken for an argument.
func TestFlagsAfterPositionalArguments(t *testing.T) {
	for _, args := range [][]string{
		{"token", "revoke", "tok_x"}, {"admin", "elevate", "c1"}, {"admin", "clerk-map", "u1", "--tenant", "t", "acme"},
		{"jobs", "run", "outbox"}, {"outbox", "retry", "dl_1"}, {"outbox", "discard", "a", "--tenant", "t", "b"},
		{"deploykey", "set", "VP_DEPLOY_KEY_X"}, {"loggroups", "allow", "/ecs/x"}, {"pacerelle", "send", "hello"},
		{"errors", "group", "x"}, {"github", "show", "x"}, {"okf", "validate", "x"}, {"guard", "check", "x"},
		{"connect", "codex", "x"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			status, out, errOut, created := runStatus(t, append(args, "--no-such-flag")...)
			if status != 2 || !strings.Contains(errOut, "flag provided but not defined: -no-such-flag") || out != "" || created {
				t.Fatalf("%v --no-such-flag: status %d, stdout %q, stderr %q, data dir created %v; want 2 and the flag named",
					args, status, out, errOut, created)
			}
		})
	}
	dir := filepath.Join(t.TempDir(), "d")
	var errb bytes.Buffer
	err := run(context.Background(), []string{"token", "revoke", "tok_x", "--data-dir", dir}, nil, io.Discard, &errb)
	if err == nil || strings.Contains(err.Error(), "give the token id") {
		t.Fatalf("token revoke tok_x --data-dir D: %v", err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("--data-dir after the id was not read: %v", err)
	}
}
