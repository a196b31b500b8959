package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// Asking any command for help answers on stdout, exits 0 and never creates
// the data directory (which would use up its first-start message).
func TestHelpNeverInitialisesTheDataDir(t *testing.T) {
	cmds := [][]string{
		{"serve"}, {"stdio"}, {"connect"}, {"connect", "claude-code"}, {"connect", "codex", "--as", "alice"},
		{"token"}, {"token", "create"}, {"token", "list"}, {"token", "revoke"},
		{"admin"}, {"admin", "clients"}, {"admin", "elevate"}, {"admin", "audit"},
		{"jobs"}, {"jobs", "list"}, {"jobs", "run", "outbox"},
		{"outbox"}, {"outbox", "dead"}, {"github"}, {"github", "set"}, {"github", "show"},
		{"deploykey"}, {"deploykey", "set", "VP_DEPLOY_KEY_X"}, {"deploykey", "show"}, {"loggroups"}, {"loggroups", "allow", "/ecs/*"},
	}
	for _, cmd := range cmds {
		for _, h := range []string{"--help", "-h"} {
			t.Run(strings.Join(cmd, "_")+h, func(t *testing.T) {
				dir := filepath.Join(t.TempDir(), "data")
				t.Setenv("VP_DATA_DIR", dir)
				var out, errb bytes.Buffer
				args := append(append([]string{}, cmd...), h)
				if err := run(context.Background(), args, nil, &out, &errb); err != nil {
					t.Fatalf("%v: %v (stderr %s)", args, err, errb.String())
				}
				if !strings.Contains(out.String(), "vantagepeers "+cmd[0]) {
					t.Errorf("%v printed %q, want the help of %s", args, out.String(), cmd[0])
				}
				if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
					t.Fatalf("%v created the data dir (%v)", args, err)
				}
			})
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "help"}, nil, &out, io.Discard); err != nil || !strings.Contains(out.String(), "--ttl") {
		t.Fatalf("token help: %v %q", err, out.String())
	}
}

func TestTTLTakesDaysOrDurations(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30d", 30 * 24 * time.Hour, true}, {"1d", 24 * time.Hour, true}, {"12h", 12 * time.Hour, true}, {"90m", 90 * time.Minute, true},
		{"0d", 0, false}, {"-3d", 0, false}, {"d", 0, false}, {"1.5d", 0, false}, {"abc", 0, false}, {"-1h", 0, false}, {"36501d", 0, false},
	} {
		var f ttlFlag
		err := f.Set(c.in)
		if (err == nil) != c.ok || f.d != c.want {
			t.Errorf("Set(%q) = %v, %v; want %v, ok=%v", c.in, f.d, err, c.want, c.ok)
		}
	}
	dir := t.TempDir()
	var out bytes.Buffer
	if err := run(context.Background(), []string{"token", "create", "--data-dir", dir, "--tenant", "acme", "--as", "a", "--ttl", "30d"}, nil, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	a, err := openApp(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	toks, _ := a.Tokens.List(context.Background(), "acme")
	if len(toks) != 1 {
		t.Fatalf("%d tokens", len(toks))
	}
	if got := time.Duration(toks[0].ExpiresAt-toks[0].CreatedAt) * time.Millisecond; got != 30*24*time.Hour {
		t.Fatalf("--ttl 30d: the token lives %v", got)
	}
}

// connect prints each host's own format, with an agent token that acts as
// the agent and reads and writes its default namespaces.
func TestConnectPrintsEachHostsConfiguration(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	bin, _ := os.Executable()
	hex64 := regexp.MustCompile(`[0-9a-f]{64}`)
	for _, c := range []struct {
		args  []string
		check func(t *testing.T, out string) string // returns the token
	}{
		{[]string{"claude-code", "--as", "alice"}, func(t *testing.T, out string) string {
			var cfg struct {
				MCPServers map[string]struct {
					Type, URL string
					Headers   map[string]string
				} `json:"mcpServers"`
			}
			mustJSON(t, out, &cfg)
			e := cfg.MCPServers["vantagepeers"]
			if e.Type != "http" || e.URL != "http://127.0.0.1:8787/mcp" || !strings.HasPrefix(e.Headers["Authorization"], "Bearer ") {
				t.Fatalf("claude-code http: %s", out)
			}
			return strings.TrimPrefix(e.Headers["Authorization"], "Bearer ")
		}},
		{[]string{"claude-code", "--as", "alice", "--stdio"}, func(t *testing.T, out string) string { return stdioConfig(t, out, bin, dir) }},
		{[]string{"claude-desktop", "--as", "alice"}, func(t *testing.T, out string) string { return stdioConfig(t, out, bin, dir) }},
		{[]string{"cursor", "--as", "alice", "--url", "http://10.0.0.1:9000/mcp"}, func(t *testing.T, out string) string {
			var cfg struct {
				MCPServers map[string]map[string]any `json:"mcpServers"`
			}
			mustJSON(t, out, &cfg)
			e := cfg.MCPServers["vantagepeers"]
			if e["url"] != "http://10.0.0.1:9000/mcp" || e["type"] != nil {
				t.Fatalf("cursor: %s", out)
			}
			return strings.TrimPrefix(e["headers"].(map[string]any)["Authorization"].(string), "Bearer ")
		}},
		{[]string{"codex", "--as", "alice"}, func(t *testing.T, out string) string {
			for _, want := range []string{"[mcp_servers.vantagepeers]\n", "command = \"" + bin + "\"", `args = ["stdio", "--data-dir", "` + dir + `"]`, "env = { VP_TOKEN = \""} {
				if !strings.Contains(out, want) {
					t.Fatalf("codex stdio lacks %q:\n%s", want, out)
				}
			}
			return hex64.FindString(out)
		}},
		{[]string{"codex", "--as", "alice", "--http"}, func(t *testing.T, out string) string {
			toml, export, _ := strings.Cut(out, "\n# Codex reads the token from the environment")
			if !strings.Contains(toml, `url = "http://127.0.0.1:8787/mcp"`) || !strings.Contains(toml, `bearer_token_env_var = "VP_TOKEN"`) || hex64.MatchString(toml) {
				t.Fatalf("codex http (the token goes in the environment, not the file):\n%s", out)
			}
			return regexp.MustCompile(`export VP_TOKEN=([0-9a-f]{64})\n`).FindString(export)[len("export VP_TOKEN="):][:64]
		}},
	} {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			args := append([]string{"connect"}, c.args...)
			args = append(args, "--data-dir", dir)
			if err := run(ctx, args, nil, &out, &errb); err != nil {
				t.Fatalf("%v: %v %s", args, err, errb.String())
			}
			secret := c.check(t, out.String())
			if secret == "" {
				return
			}
			a, err := openApp(ctx, dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			p, err := a.Tokens.Resolve(ctx, secret)
			if err != nil {
				t.Fatal(err)
			}
			if p.Admin || p.DefaultOrchestrator() != "alice" || !p.CanWrite("workspace/plan") || !p.CanWrite("orchestrator/alice") ||
				p.CanWrite("orchestrator/bob") || !p.CanRead("global") || p.CanWrite("global") {
				t.Fatalf("the agent token grants %+v", p)
			}
		})
	}
	for _, bad := range [][]string{{"connect"}, {"connect", "vim", "--as", "a"}, {"connect", "cursor"}, {"connect", "cursor", "--as", "a,b"},
		{"connect", "cursor", "--as", "a", "--http", "--stdio"}, {"connect", "claude-desktop", "--as", "a", "--http"}} {
		if err := run(ctx, append(bad, "--data-dir", dir), nil, io.Discard, io.Discard); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}

func stdioConfig(t *testing.T, out, bin, dir string) string {
	t.Helper()
	var cfg struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
			Env     map[string]string
		} `json:"mcpServers"`
	}
	mustJSON(t, out, &cfg)
	e := cfg.MCPServers["vantagepeers"]
	if e.Command != bin || strings.Join(e.Args, " ") != "stdio --data-dir "+dir || len(e.Env["VP_TOKEN"]) != 64 {
		t.Fatalf("stdio entry: %s", out)
	}
	return e.Env["VP_TOKEN"]
}

func mustJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("not JSON (%v):\n%s", err, s)
	}
}

// --write adds the server to the host's file, keeps what else is there,
// and never replaces an entry silently.
func TestConnectWriteMergesAndNeverOverwritesSilently(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	t.Chdir(t.TempDir())
	t.Setenv("CODEX_HOME", filepath.Join(t.TempDir(), "codex"))
	if err := os.WriteFile(".mcp.json", []byte(`{"mcpServers":{"other":{"command":"x"}},"keep":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		host, path string
	}{{"claude-code", ".mcp.json"}, {"cursor", filepath.Join(".cursor", "mcp.json")}, {"codex", filepath.Join(os.Getenv("CODEX_HOME"), "config.toml")}} {
		t.Run(c.host, func(t *testing.T) {
			args := []string{"connect", c.host, "--as", "alice", "--write", "--data-dir", dir}
			if err := run(ctx, args, nil, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			before, _ := os.ReadFile(c.path)
			if fi, _ := os.Stat(c.path); fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %v; it holds a token", c.path, fi.Mode().Perm())
			}
			if err := run(ctx, args, nil, io.Discard, io.Discard); err == nil {
				t.Fatalf("a second --write replaced the entry in %s", c.path)
			}
			after, _ := os.ReadFile(c.path)
			if !bytes.Equal(before, after) {
				t.Fatalf("a refused --write changed %s", c.path)
			}
			if c.host == "codex" {
				return
			}
			if err := run(ctx, append(args, "--force"), nil, io.Discard, io.Discard); err != nil {
				t.Fatal(err)
			}
			forced, _ := os.ReadFile(c.path)
			if bytes.Equal(before, forced) {
				t.Fatal("--force did not replace the entry")
			}
		})
	}
	raw, _ := os.ReadFile(".mcp.json")
	var doc map[string]any
	mustJSON(t, string(raw), &doc)
	servers := doc["mcpServers"].(map[string]any)
	if servers["other"] == nil || doc["keep"] == nil || servers["vantagepeers"] == nil {
		t.Fatalf("--write lost what was in .mcp.json: %s", raw)
	}
}

// A refused VP_TOKEN does not end the stdio process (the host would show
// only "connection closed"): every request, initialize included, gets a
// JSON-RPC error saying why. Tested with the Go SDK client over pipes.
func TestStdioWithARefusedTokenSaysWhy(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	secret, tok := revokedToken(t, dir)
	for _, c := range []struct{ name, token, want string }{
		{"revoked", secret, "token " + tok.ID + " was revoked on"},
		{"unknown", auth.NewSecret(), "not known to this server"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Setenv("VP_TOKEN", c.token)
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				done <- run(ctx, []string{"stdio", "--data-dir", dir, "--log-level", "error"}, inR, outW, io.Discard)
				outW.Close()
			}()
			client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
			_, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
			if err == nil || !strings.Contains(err.Error(), "VP_TOKEN was refused: ") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("initialize: %v; want the refusal %q", err, c.want)
			}
			inW.Close()
			if err := <-done; err != nil {
				t.Fatalf("stdio exited with %v after its stdin closed; want a clean exit", err)
			}
		})
	}
}

// After a serve started with VP_MASTER_TOKEN, a command on the same data
// dir without it mints no second master token (which the server would
// refuse) and prints nothing but its own result.
func TestCommandsAfterVPMasterTokenMintNoSecondMaster(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	master := auth.NewSecret()
	t.Setenv("VP_MASTER_TOKEN", master)
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.newMaster != "" || !a.fresh {
		t.Fatalf("with VP_MASTER_TOKEN: newMaster %q, fresh %v", a.newMaster, a.fresh)
	}
	_ = a.Close()
	t.Setenv("VP_MASTER_TOKEN", "")
	var out, errb bytes.Buffer
	if err := run(ctx, []string{"token", "create", "--data-dir", dir, "--tenant", "acme", "--as", "a"}, nil, &out, &errb); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(errb.String(), "master") || len(strings.Fields(out.String())) != 1 {
		t.Fatalf("token create after VP_MASTER_TOKEN: stdout %q, stderr %q", out.String(), errb.String())
	}
	a, err = openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if p, err := a.Tokens.Resolve(ctx, master); err != nil || !p.Admin {
		t.Fatalf("the VP_MASTER_TOKEN master no longer resolves without the variable: %v", err)
	}
}

// A first start that cannot listen still shows the master token it
// created: it exists nowhere else.
func TestFirstStartOnABusyPortStillShowsTheMaster(t *testing.T) {
	t.Setenv("VP_MASTER_TOKEN", "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var out bytes.Buffer
	err = run(context.Background(), []string{"serve", "--data-dir", t.TempDir(), "--addr", ln.Addr().String(), "--log-level", "error"}, nil, &out, io.Discard)
	if err == nil || !regexp.MustCompile(`ADMIN \(master\) token[\s\S]*\n  [0-9a-f]{64}\n`).MatchString(out.String()) {
		t.Fatalf("serve on a busy port: %v; stdout %q", err, out.String())
	}
}

// revokedToken is a token of alice in dir's store, revoked.
func revokedToken(t *testing.T, dir string) (string, auth.Token) {
	t.Helper()
	ctx := context.Background()
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	secret, tok, err := a.Tokens.Create(ctx, auth.Spec{Tenant: "default", ActsAs: []string{"alice"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Tokens.Revoke(ctx, tok.ID); err != nil {
		t.Fatal(err)
	}
	return secret, tok
}
