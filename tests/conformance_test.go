package tests

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// TestConformanceSuite runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in package.json) against a
// binary built with -tags conformance, for each requirement set. A scenario
// (or check) failing and not in conformance-<set>.yml fails the test, and so
// does a listed one that now passes: the suite's --expected-failures rules.
//
// Opt-in (VP_CONFORMANCE=1) until two unstable verdicts are understood:
// server-sse-multiple-streams (2025-11-25) warns "no session ID" in this
// harness though it passed by hand, and tools-list (2026-07-28) failed once
// in three runs.
func TestConformanceSuite(t *testing.T) {
	if os.Getenv("VP_CONFORMANCE") != "1" {
		t.Skip("opt-in: VP_CONFORMANCE=1 runs the official conformance suite")
	}
	node := requireNode(t)
	cli := filepath.Join(testsDir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	if _, err := os.Stat(cli); err != nil {
		t.Fatalf("the conformance suite is not installed (run scripts/test-deps.sh): %v", err)
	}
	bin := filepath.Join(t.TempDir(), "vantagepeers-conformance")
	build := exec.Command("go", "build", "-tags", "conformance", "-o", bin, "./functions/vantagepeers")
	build.Dir = repoRoot
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags conformance: %v\n%s", err, out)
	}
	port, err := testproc.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dataDir := t.TempDir()
	var logs bytes.Buffer
	serve := exec.Command(bin, "serve", "--data-dir", dataDir, "--addr", addr)
	serve.Env = childEnv(map[string]string{"VP_MASTER_TOKEN": masterToken})
	serve.Stdout, serve.Stderr = &logs, &logs
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(os.Interrupt); _ = serve.Wait() })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if r, err := http.Get("http://" + addr + "/health"); err == nil {
			_ = r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start:\n%s", logs.String())
		}
	}
	token := createTokenOn(t, &server{dataDir: dataDir}, "default", "conformance")
	// The suite sends no credentials; this proxy adds the agent's token, as a
	// host does after sign-in.
	target, _ := url.Parse("http://" + addr)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer "+token)
		rp.ServeHTTP(w, r)
	}))
	defer proxy.Close()
	for _, set := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(set, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			start := time.Now()
			cmd := exec.CommandContext(ctx, node, "--import", "./clients/conformance-node20.mjs", cli, "server",
				"--url", proxy.URL+"/mcp", "--requirements", set,
				"--expected-failures", "conformance-"+set+".yml", "-o", outDir(t))
			cmd.Dir = testsDir
			out, err := cmd.CombinedOutput()
			t.Logf("conformance %s: %s", set, time.Since(start).Round(time.Millisecond))
			if err != nil {
				t.Fatalf("conformance --requirements %s: %v\n%s", set, err, out)
			}
		})
	}
}

// outDir is where the suite writes each scenario's checks.json: kept under
// VP_CONFORMANCE_OUT when set, for reading a failure.
func outDir(t *testing.T) string {
	if d := os.Getenv("VP_CONFORMANCE_OUT"); d != "" {
		return filepath.Join(d, filepath.Base(t.Name()))
	}
	return t.TempDir()
}
