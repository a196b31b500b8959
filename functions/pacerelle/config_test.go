package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/pacerelle/localstate"
)

// TestConfig: a flag wins over its variable; variables fill what flags
// leave out; defaults apply; a missing required value is a usage error
// naming the variable and the flag.
func TestConfig(t *testing.T) {
	home, _ := os.UserHomeDir()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want Config
		err  string
	}{
		{name: "variables", env: map[string]string{"PACERELLE_AGENT_ID": "bot", "PACERELLE_AGENT_TOKEN": "t1", "PACERELLE_BASE_URL": "http://x"},
			want: Config{AgentID: "bot", Token: "t1", BaseURL: "http://x", StoreRoot: filepath.Join(home, ".pacerelle", "mcp"), LogLevel: "info"}},
		{name: "flags win", args: []string{"--agent-id", "bob", "--token", "t2", "--store-root", "/s", "--ws-url", "ws://w", "--no-e2ee"},
			env:  map[string]string{"PACERELLE_AGENT_ID": "bot", "PACERELLE_AGENT_TOKEN": "t1", "PACERELLE_STORE_ROOT": "/env"},
			want: Config{AgentID: "bob", Token: "t2", StoreRoot: "/s", BaseURL: DefaultBaseURL, WSURL: "ws://w", NoE2EE: true, LogLevel: "info"}},
		{name: "no agent", env: map[string]string{"PACERELLE_AGENT_TOKEN": "t1"}, err: "PACERELLE_AGENT_ID or pass --agent-id"},
		{name: "no token", args: []string{"--agent-id", "bot"}, err: "PACERELLE_AGENT_TOKEN or pass --token"},
		{name: "stray argument", args: []string{"--agent-id", "bot", "--token", "t", "extra"}, err: `unexpected argument "extra"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseConfig(c.args, func(k string) string { return c.env[k] }, &bytes.Buffer{})
			if c.err != "" {
				var ue errUsage
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want a usage error with %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("got %+v, %v\nwant %+v", got, err, c.want)
			}
		})
	}
}

// TestMissingRequiredExits2: the built binary exits with status 2 and
// names what is missing; the token is not in the state folder afterwards.
func TestMissingRequiredExits2(t *testing.T) {
	bin := buildBridge(t)
	cmd := exec.Command(bin)
	cmd.Env = []string{"HOME=" + t.TempDir(), "PACERELLE_AGENT_ID=bot"}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(string(out), "PACERELLE_AGENT_TOKEN") {
		t.Fatalf("exit %v, output %q", err, out)
	}
}

func buildBridge(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "pacerelle")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestDamagedStateRefused: a bridge whose state file was damaged does not
// start, says why, and leaves the file as it was.
func TestDamagedStateRefused(t *testing.T) {
	cfg := Config{AgentID: "bot", Token: "t", StoreRoot: t.TempDir(), BaseURL: "http://127.0.0.1:1"}
	b, err := Open(cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	path := b.file.Path()
	_ = b.Close()
	data, _ := os.ReadFile(path)
	data[len(data)-1] ^= 1
	_ = os.WriteFile(path, data, 0o600)
	if _, err := Open(cfg, slog.New(slog.DiscardHandler)); !errors.Is(err, localstate.ErrCorrupt) || !strings.Contains(err.Error(), "left untouched") {
		t.Fatalf("damaged state: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, data) {
		t.Fatal("the state file was replaced")
	}
}
