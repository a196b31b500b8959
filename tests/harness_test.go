package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
	"github.com/vantagepeers/vantagepeers/tests/nodeclient"
)

// masterToken is the fixed VP_MASTER_TOKEN of the test server.
const masterToken = "e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0e2e0"

// Globals set up once by TestMain.
var (
	repoRoot string // the module root
	testsDir string // this folder (node scripts run from here)
	workDir  string // temporary folder for this run
	binPath  string // the built vantagepeers binary
	srv      *server
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	var err error
	if testsDir, err = os.Getwd(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	repoRoot = filepath.Dir(testsDir)
	if workDir, err = os.MkdirTemp("", "vp-e2e-"); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	keep := os.Getenv("VP_E2E_KEEP") == "1"
	defer func() {
		if keep {
			fmt.Fprintln(os.Stderr, "e2e: kept", workDir)
			return
		}
		_ = os.RemoveAll(workDir)
	}()

	binPath = filepath.Join(workDir, "vantagepeers")
	args := []string{"build", "-o", binPath}
	if os.Getenv("VP_E2E_RACE") == "1" {
		args = append(args, "-race")
	}
	args = append(args, "./functions/vantagepeers")
	build := exec.Command("go", args...)
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go %s: %v\n%s", strings.Join(args, " "), err, out)
		return 1
	}

	srv, err = startServer(filepath.Join(workDir, "data"), map[string]string{"VP_MASTER_TOKEN": masterToken})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	code := m.Run()

	// The server must shut down cleanly on SIGTERM and must not have logged
	// an internal error (a tool panic, a failed store call) during the run.
	if err := srv.stop(15 * time.Second); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: FAIL: server shutdown:", err)
		code = 1
	}
	if bad := srv.errorLines(); len(bad) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: FAIL: the server logged %d ERROR line(s):\n%s\n", len(bad), strings.Join(bad, "\n"))
		code = 1
	}
	return code
}

// ---- the server process ----

type server struct {
	cmd     *exec.Cmd
	dataDir string
	addr    string // 127.0.0.1:PORT
	url     string // http://127.0.0.1:PORT/mcp
	stdout  *testproc.Output
	logPath string
	done    chan struct{}
	waitErr error
}

// startServer starts `vantagepeers serve` on a free port and waits for
// /health. env is added to a minimal environment (VP_MASTER_TOKEN is never
// inherited from the caller's).
func startServer(dataDir string, env map[string]string) (*server, error) {
	var lastErr error
	for try := 0; try < 3; try++ { // the free port can be taken before the server binds it
		s, err := startServerOnce(dataDir, env)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	return nil, lastErr
}

func startServerOnce(dataDir string, env map[string]string) (*server, error) {
	port, err := testproc.FreePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.CreateTemp(workDir, "server-*.log")
	if err != nil {
		return nil, err
	}
	s := &server{
		dataDir: dataDir,
		addr:    fmt.Sprintf("127.0.0.1:%d", port),
		stdout:  &testproc.Output{},
		logPath: logf.Name(),
		done:    make(chan struct{}),
	}
	s.url = "http://" + s.addr + "/mcp"
	s.cmd = exec.Command(binPath, "serve", "--data-dir", dataDir, "--addr", s.addr)
	s.cmd.Env = childEnv(env)
	s.cmd.Stdout = s.stdout
	s.cmd.Stderr = logf
	if err := s.cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		logf.Close()
		close(s.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.done:
			return nil, fmt.Errorf("vantagepeers serve exited early (%v):\n%s", s.waitErr, s.logTail())
		default:
		}
		resp, err := http.Get("http://" + s.addr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = s.stop(5 * time.Second)
	return nil, fmt.Errorf("vantagepeers serve did not answer /health on %s within 30s:\n%s", s.addr, s.logTail())
}

// stop sends SIGTERM and waits; it kills the process after timeout and
// reports an unclean exit.
func (s *server) stop(timeout time.Duration) error {
	select {
	case <-s.done:
		return fmt.Errorf("the server had already exited: %v\n%s", s.waitErr, s.logTail())
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
		if s.waitErr != nil {
			return fmt.Errorf("exit after SIGTERM: %v\n%s", s.waitErr, s.logTail())
		}
		return nil
	case <-time.After(timeout):
		_ = s.cmd.Process.Kill()
		<-s.done
		return fmt.Errorf("no exit within %v of SIGTERM; killed", timeout)
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// errorLines returns the ERROR-level lines of the server log.
func (s *server) errorLines() []string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return []string{err.Error()}
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `"level":"ERROR"`) {
			out = append(out, sc.Text())
		}
	}
	return out
}

// childEnv is a minimal environment for the binary: PATH, HOME and TMPDIR
// from ours plus extra.
func childEnv(extra map[string]string) []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	env = append(env, "VP_LOG_LEVEL=info")
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// ---- tenants and tokens ----

var tenantSeq atomic.Int64

// newTenant returns a tenant id unique to this test process, so that every
// scenario starts from an empty tenant even with -count=N.
func newTenant(name string) string {
	return fmt.Sprintf("%s-%d-%d", name, os.Getpid()%100000, tenantSeq.Add(1))
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// createToken runs `vantagepeers token create` against the running server's
// data dir (SQLite WAL lets a second process write) and returns the secret.
func createToken(t testing.TB, tenant, as string) string {
	t.Helper()
	return createTokenOn(t, srv, tenant, as)
}

// createTokenOn is createToken for the server s (one a test started with
// startServer, with the harness's masterToken).
func createTokenOn(t testing.TB, s *server, tenant, as string) string {
	t.Helper()
	cmd := exec.Command(binPath, "token", "create", "--data-dir", s.dataDir,
		"--tenant", tenant, "--as", as, "--read", "*", "--write", "*", "--label", "e2e "+t.Name())
	cmd.Env = childEnv(map[string]string{"VP_MASTER_TOKEN": masterToken})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("token create --tenant %s --as %s: %v\n%s", tenant, as, err, stderr.String())
	}
	secret := strings.TrimSpace(stdout.String())
	if !hex64.MatchString(secret) {
		t.Fatalf("token create printed %q on stdout, want 64 hex characters (stderr: %s)", stdout.String(), stderr.String())
	}
	return secret
}

// ---- node ----

// requireNode skips (or, with CI=true, fails) when node or the npm
// dependencies in tests/node_modules are missing.
func requireNode(t testing.TB) string {
	t.Helper()
	return nodeclient.Require(t, testsDir, "@modelcontextprotocol/sdk", "@modelcontextprotocol/inspector")
}

// summary is what every client script prints on stdout.
type summary = nodeclient.Summary

// runClient runs `node clients/<script> <scenario>` with VP_E2E_CONFIG and
// returns its summary. A non-zero exit, a failed check or an unparsable
// summary fails the test.
func runClient(t *testing.T, script, scenario string, cfg any) summary {
	t.Helper()
	return runClientOn(t, srv, script, scenario, cfg)
}

// runClientOn is runClient for a script that talks to the server s (whose
// log a failure shows).
func runClientOn(t *testing.T, srv *server, script, scenario string, cfg any) summary {
	t.Helper()
	return nodeclient.Run{Node: requireNode(t), Dir: testsDir, Script: script, Scenario: scenario, Config: cfg, ServerLog: srv.logTail}.Do(t)
}

// runInspector runs the MCP Inspector CLI against the test server.
func runInspector(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	return runInspectorOn(t, srv, args...)
}

// runInspectorOn runs the MCP Inspector CLI against the server s.
func runInspectorOn(t *testing.T, srv *server, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	requireNode(t)
	npx, lerr := exec.LookPath("npx")
	if lerr != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("npx is required in CI")
		}
		t.Skip("npx not found")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	full := append([]string{"--no-install", "mcp-inspector", "--cli", srv.url, "--transport", "http"}, args...)
	cmd := exec.CommandContext(ctx, npx, full...)
	cmd.Dir = testsDir
	cmd.WaitDelay = 5 * time.Second
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// ---- raw HTTP ----

// rpcResponse is a JSON-RPC response.
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  *toolResult     `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

type toolResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent"`
	IsError           bool            `json:"isError"`
	Tools             []struct {
		Name string `json:"name"`
	} `json:"tools"`
}

func (r *toolResult) text() string {
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

var httpClient = &http.Client{Timeout: 30 * time.Second}

// post sends body to /mcp as an MCP client would (minus the SDK).
func post(t testing.TB, token string, body []byte, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	resp, b, err := tryPost(token, body, header)
	if err != nil {
		t.Fatal(err)
	}
	return resp, b
}

func tryPost(token string, body []byte, header map[string]string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, srv.url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("POST %s: %w", srv.url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the response: %w", err)
	}
	return resp, b, nil
}

var rpcID atomic.Int64

// callTool calls a tool over raw HTTP (as the master token, in tenant when
// not empty) and returns the tool result; a transport or JSON-RPC error
// fails the test. Use tryCallTool from other goroutines.
func callTool(t testing.TB, token, tenant, name string, args any) *toolResult {
	t.Helper()
	r, err := tryCallTool(token, tenant, name, args)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func tryCallTool(token, tenant, name string, args any) (*toolResult, error) {
	body, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": rpcID.Add(1), "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args},
	})
	if err != nil {
		return nil, err
	}
	var hdr map[string]string
	if tenant != "" {
		hdr = map[string]string{"X-VP-Tenant": tenant}
	}
	return tryCallRaw(token, body, hdr)
}

// tryCallRaw posts a ready-made tools/call body and decodes the tool result.
func tryCallRaw(token string, body []byte, hdr map[string]string) (*toolResult, error) {
	resp, b, err := tryPost(token, body, hdr)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("tools/call: HTTP %d: %s", resp.StatusCode, b)
	}
	var r rpcResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("tools/call: the response is not JSON-RPC: %v: %s", err, b)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("tools/call: JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	if r.Result == nil {
		return nil, fmt.Errorf("tools/call: no result: %s", b)
	}
	return r.Result, nil
}

// decode unmarshals a successful tool result's structured content.
func decode[T any](t testing.TB, r *toolResult) T {
	t.Helper()
	var v T
	if r.IsError {
		t.Fatalf("tool error: %s", r.text())
	}
	if err := json.Unmarshal(r.StructuredContent, &v); err != nil {
		t.Fatalf("decoding %s: %v", r.StructuredContent, err)
	}
	return v
}

// alive asserts that the server still answers a tool call and /health.
func alive(t testing.TB) {
	t.Helper()
	who := decode[struct {
		Tenant string `json:"tenant"`
	}](t, callTool(t, masterToken, "", "whoami", map[string]any{}))
	if who.Tenant != "default" {
		t.Fatalf("whoami after the bad request: tenant %q", who.Tenant)
	}
	resp, err := httpClient.Get("http://" + srv.addr + "/health")
	if err != nil {
		t.Fatalf("/health after the bad request: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/health after the bad request: HTTP %d", resp.StatusCode)
	}
}

var errNoLine = errors.New("no line matched")

// waitLine waits until read() contains a line matching re.
func waitLine(read func() string, re *regexp.Regexp, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		for _, l := range strings.Split(read(), "\n") {
			if m := re.FindStringSubmatch(l); m != nil {
				if len(m) > 1 {
					return m[1], nil
				}
				return m[0], nil
			}
		}
		if time.Now().After(deadline) {
			return "", errNoLine
		}
		time.Sleep(20 * time.Millisecond)
	}
}
