package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/gitguard"
	"github.com/vantagepeers/vantagepeers/shared/gitguard/gitguardtest"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// vpServer is `vantagepeers serve` started from a freshly built binary on
// a data directory of its own.
type vpServer struct {
	bin, dataDir, mcpURL string
}

func startBuiltServer(t *testing.T) vpServer {
	t.Helper()
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	s := vpServer{bin: filepath.Join(t.TempDir(), "vantagepeers"), dataDir: filepath.Join(t.TempDir(), "data")}
	build := exec.Command("go", "build", "-o", s.bin, "./functions/vantagepeers")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	var logs bytes.Buffer
	cmd := exec.Command(s.bin, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), "VP_DATA_DIR="+s.dataDir, "VP_MASTER_TOKEN="+strings.Repeat("ab", 32))
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if r, err := http.Get("http://" + addr + "/health"); err == nil {
			_ = r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", logs.String())
		}
	}
	s.mcpURL = "http://" + addr + "/mcp"
	return s
}

// token mints an agent's token with the binary, as an operator would.
func (s vpServer) token(t *testing.T, agent string) string {
	t.Helper()
	rd, wr := auth.DefaultGrants(agent)
	cmd := exec.Command(s.bin, "token", "create", "--tenant", "default", "--as", agent,
		"--read", strings.Join(rd, ","), "--write", strings.Join(wr, ","), "--label", "guard e2e")
	cmd.Env = append(os.Environ(), "VP_DATA_DIR="+s.dataDir)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create --as %s: %v", agent, err)
	}
	return strings.TrimSpace(string(out))
}

// call calls a tool with token and returns its structured result.
func (s vpServer) call(t *testing.T, token, tool string, args map[string]any) map[string]any {
	t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "guard-e2e"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.mcpURL, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %s", tool, err, toolText(res))
	}
	var out map[string]any
	b, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(b, &out)
	return out
}

func (s vpServer) tools(t *testing.T, token string) []string {
	t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "guard-e2e"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: s.mcpURL, HTTPClient: &http.Client{Transport: bearer{token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// The guard end to end, as issue 23 asks: a real repository with a
// pre-commit hook of its own, the embedded server built and started as a
// binary, the hook installed by that binary; bob's commit touching
// alice's exclusive paths is refused with her name, the expiry and her
// reason, and the same commit is accepted once she releases; the hook
// that was there runs every time.
func TestGuardEndToEndWithTheEmbeddedServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary")
	}
	s := startBuiltServer(t)
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	if names := s.tools(t, alice); !slices.Contains(names, "check_paths") || !slices.Contains(names, "reserve_paths") {
		t.Skip("the server has no reserve_paths/check_paths yet: the reservations capability (branch reservations) is not merged")
	}

	dir := gitguardtest.NewRepo(t)
	marker := filepath.Join(t.TempDir(), "theirs ran")
	hook := filepath.Join(dir, ".git", "hooks", "pre-commit")
	gitguardtest.WriteFile(t, hook, "#!/bin/sh\necho run >> '"+marker+"'\n")
	if err := os.Chmod(hook, 0o755); err != nil {
		t.Fatal(err)
	}
	inst := exec.Command(s.bin, "guard", "install", "--project", "web", "--url", s.mcpURL)
	inst.Dir = filepath.Join(dir)
	if out, err := inst.CombinedOutput(); err != nil || !strings.Contains(string(out), gitguard.ChainedName) {
		t.Fatalf("guard install: %v\n%s", err, out)
	}

	res := s.call(t, alice, "reserve_paths", map[string]any{"project": "web", "paths": []string{"src/api/**"},
		"exclusive": true, "ttlMinutes": 30, "reason": "refactoring the API"})
	// bob's shared reservation elsewhere, and carol's shared one on the same
	// paths, refuse nothing: only others' exclusive reservations do.
	s.call(t, s.token(t, "carol"), "reserve_paths", map[string]any{"project": "web", "paths": []string{"docs/**"}, "exclusive": false})
	id := reservationID(res)
	if id == "" {
		t.Fatalf("reserve_paths answered %v: no reservation id", res)
	}

	bobEnv := []string{"VP_TOKEN=" + bob, "PATH=" + filepath.Dir(s.bin) + string(os.PathListSeparator) + os.Getenv("PATH")}
	ok, out := gitguardtest.CommitFile(t, dir, "src/api/users.go", bobEnv...)
	if ok {
		t.Fatalf("bob's commit into alice's exclusive paths was made:\n%s", out)
	}
	t.Logf("git commit, refused:\n%s", out)
	for _, want := range []string{"alice holds src/api/** exclusively until 20", "(in 30 min)", "refactoring the API"} {
		if !strings.Contains(out, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, out)
		}
	}
	start := time.Now()
	if ok, out := gitguardtest.CommitFile(t, dir, "docs/readme.md", bobEnv...); !ok {
		t.Fatalf("bob's commit outside alice's paths was refused:\n%s", out)
	}
	t.Logf("a checked commit took %v (git add, commit, the hook and one check_paths over HTTP)", time.Since(start))
	// Names the glob language cannot write reach the real parser as globs.
	if ok, out := gitguardtest.CommitFile(t, dir, "pages/[id] {x}.tsx", bobEnv...); !ok {
		t.Fatalf("bob's commit of pages/[id] {x}.tsx was refused:\n%s", out)
	}
	if ok, out := gitguardtest.CommitFile(t, dir, "src/api/[id].go", bobEnv...); ok || !strings.Contains(out, "alice holds") {
		t.Fatalf("bob's commit of src/api/[id].go: made %v:\n%s", ok, out)
	}

	s.call(t, alice, "release_paths", map[string]any{"project": "web", "reservationIds": []string{id}})
	if ok, out := gitguardtest.CommitFile(t, dir, "src/api/users.go", bobEnv...); !ok {
		t.Fatalf("bob's commit after alice released was refused:\n%s", out)
	}
	if res := s.call(t, alice, "list_reservations", map[string]any{"project": "web", "holder": "alice"}); len(res["items"].([]any)) != 0 {
		t.Fatalf("alice still holds %v", res["items"])
	}
	if runs := gitguardtest.ReadLog(t, marker); len(runs) != 5 {
		t.Fatalf("the repository's own hook ran %d times for 5 commits", len(runs))
	}
}

// toolText is the text of a tool's answer, for a failure's message.
func toolText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}

// reservationID is the id in reserve_paths' answer {reserved, reservation: {_id}}.
func reservationID(res map[string]any) string {
	if res["reserved"] != true {
		return ""
	}
	r, _ := res["reservation"].(map[string]any)
	id, _ := r["_id"].(string)
	return id
}

// The command line: guard check reads VP_TOKEN and checks the repository
// of the current directory; the exit status is 1 for a conflict, 0 for an
// unreachable server; --staged is required.
func TestGuardCommandLineAgainstFakeMCPServer(t *testing.T) {
	dir := gitguardtest.NewRepo(t)
	f := &gitguardtest.FakeReservations{Tokens: map[string]string{"tok-bob": "bob"}, Held: []gitguardtest.FakeReservation{
		{Project: "web", Conflict: gitguardtest.Conflict{ReservationID: "r1", Holder: "alice", Paths: []string{"*.go"}, Exclusive: true,
			ExpiresAt: time.Now().Add(time.Hour).UnixMilli(), Reason: "ports"}}}}
	u := f.Serve(t)
	gitguardtest.Stage(t, dir, "main.go")
	t.Chdir(dir)
	t.Setenv("VP_TOKEN", "tok-bob")
	status := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		s := exitStatus(&errb, run(context.Background(), args, strings.NewReader(""), &out, &errb))
		return s, out.String() + errb.String()
	}
	if s, out := status("guard", "check", "--staged", "--project", "web", "--url", u); s != 1 || !strings.Contains(out, "alice holds *.go") {
		t.Fatalf("conflict: exit %d, %q; want 1 naming alice", s, out)
	}
	if s, out := status("guard", "check", "--project", "web", "--url", u); s != 1 || !strings.Contains(out, "--staged is required") {
		t.Fatalf("without --staged: exit %d, %q", s, out)
	}
	if s, out := status("guard", "check", "--staged", "--project", "web", "--url", "http://127.0.0.1:1/mcp", "--timeout", "2s"); s != 0 || !strings.Contains(out, "warning") {
		t.Fatalf("unreachable: exit %d, %q; want 0 with a warning", s, out)
	}
	if s, out := status("guard", "install", "--project", "web"); s != 1 || !strings.Contains(out, "--url") {
		t.Fatalf("install without --url: exit %d, %q", s, out)
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "hooks", "pre-commit")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused install wrote a hook: %v", err)
	}
}
