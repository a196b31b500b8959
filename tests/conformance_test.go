package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// conformanceSets are the requirement sets the suite runs, each against its
// baseline conformance-<set>.yml.
var conformanceSets = []string{"2025-11-25", "2026-07-28"}

// TestConformanceSuite runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, pinned in package.json) against a
// binary built with -tags conformance (its fixtures: shared/conformance),
// for both requirement sets at once. A scored scenario (or check) failing
// and not under server: in conformance-<set>.yml fails the test, and so
// does a listed one that now passes: the suite's --expected-failures rules.
// The suite does not judge the scenarios it runs but does not score
// (extensions, pending checks); this test does, against the file's
// unscored: list, by the same rules (judgeUnscored).
func TestConformanceSuite(t *testing.T) {
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
	target, _ := url.Parse("http://" + addr)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.FlushInterval = -1
	for _, set := range conformanceSets {
		// One token per set: the two runs share no per-token limit.
		token := createTokenOn(t, &server{dataDir: dataDir}, "default", "conformance-"+set)
		// The suite sends no credentials; this proxy adds the agent's
		// token, as a host does after sign-in.
		proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// Without full duplex, Go's server closes the request body once
			// the proxy writes the answer's header, which can come before
			// the Transport's last read of that body (its check for bytes
			// past Content-Length): that write fails, the Transport closes
			// the connection to serve mid-answer and the suite sees
			// "terminated" (tools-list: 2 runs in 25 failed so; 0 in 40).
			_ = http.NewResponseController(w).EnableFullDuplex()
			r.Header.Set("Authorization", "Bearer "+token)
			rp.ServeHTTP(w, r)
		}))
		t.Cleanup(proxy.Close)
		t.Run(set, func(t *testing.T) {
			t.Parallel() // the two sets together take the time of the longer
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			start, dir := time.Now(), outDir(t)
			cmd := exec.CommandContext(ctx, node, "--import", "./clients/conformance-node20.mjs", cli, "server",
				"--url", proxy.URL+"/mcp", "--requirements", set,
				"--expected-failures", "conformance-"+set+".yml", "-o", dir)
			cmd.Dir = testsDir
			out, err := cmd.CombinedOutput()
			results := readConformanceResults(t, dir)
			t.Logf("conformance %s: %s, %s", set, time.Since(start).Round(time.Millisecond), results.summary())
			if err != nil {
				t.Fatalf("conformance --requirements %s: %v\n%s", set, err, out)
			}
			judgeUnscored(t, "conformance-"+set+".yml", results, unscoredScenarios(t, node, cli, set))
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

type conformanceCheck struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// conformanceResults are the checks of each scenario run.
type conformanceResults map[string][]conformanceCheck

// resultDir is the suite's "server-<scenario>-<timestamp>" folder name.
var resultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d{2}-\d{2}T[0-9-]+Z$`)

func readConformanceResults(t *testing.T, dir string) conformanceResults {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("reading the suite's results: %v", err)
	}
	res := conformanceResults{}
	for _, e := range entries {
		m := resultDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			t.Fatalf("scenario %s: %v", m[1], err)
		}
		var checks []conformanceCheck
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Fatalf("scenario %s: checks.json: %v", m[1], err)
		}
		res[m[1]] = checks
	}
	if len(res) == 0 {
		t.Fatalf("the suite wrote no scenario results under %s", dir)
	}
	return res
}

func failed(c conformanceCheck) bool { return c.Status == "FAILURE" || c.Status == "WARNING" }

// summary counts scenarios without a failed check and checks that
// succeeded (INFO and SKIPPED checks count as neither).
func (r conformanceResults) summary() string {
	var clean, checks, ok int
	for _, cs := range r {
		bad := false
		for _, c := range cs {
			checks++
			if c.Status == "SUCCESS" {
				ok++
			}
			bad = bad || failed(c)
		}
		if !bad {
			clean++
		}
	}
	return fmt.Sprintf("scenarios %d/%d without a failed check, checks %d/%d succeeded", clean, len(r), ok, checks)
}

// baselineList reads the entries of one top-level list (server, unscored)
// of a baseline file: "- scenario" or "- scenario:check-id", comments cut.
func baselineList(t *testing.T, file, key string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(testsDir, file))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	var out []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if !strings.HasPrefix(line, " ") {
			in = strings.TrimSpace(line) == key+":"
			continue
		}
		if entry, ok := strings.CutPrefix(strings.TrimSpace(line), "- "); ok && in {
			out = append(out, strings.TrimSpace(entry))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// unscoredScenarios are the server scenarios `conformance list` names under
// "Run and reported, but never scored" for set.
func unscoredScenarios(t *testing.T, node, cli, set string) map[string]bool {
	t.Helper()
	cmd := exec.Command(node, "--import", "./clients/conformance-node20.mjs", cli, "list", "--requirements", set)
	cmd.Dir = testsDir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance list --requirements %s: %v\n%s", set, err, out)
	}
	_, tail, ok := strings.Cut(string(out), "never scored")
	if !ok {
		t.Fatalf("conformance list --requirements %s names no unscored scenarios:\n%s", set, out)
	}
	unscored := map[string]bool{}
	for _, m := range regexp.MustCompile(`- (\S+) \[server\]`).FindAllStringSubmatch(tail, -1) {
		unscored[m[1]] = true
	}
	return unscored
}

// judgeUnscored applies the suite's baseline rules to the scenarios it
// runs without scoring: a failed check of one is an error unless the file's
// unscored: list names the scenario (or scenario:check), and a listed one
// that passes is stale.
func judgeUnscored(t *testing.T, file string, results conformanceResults, unscored map[string]bool) {
	t.Helper()
	listed := map[string]bool{}
	for _, e := range baselineList(t, file, "unscored") {
		listed[e] = true
		scenario, check, perCheck := strings.Cut(e, ":")
		checks, ran := results[scenario]
		if !unscored[scenario] || !ran {
			t.Errorf("%s lists %q under unscored:, but the suite ran no such unscored scenario", file, e)
			continue
		}
		stale := true
		for _, c := range checks {
			if failed(c) && (!perCheck || c.ID == check) {
				stale = false
			}
		}
		if stale {
			t.Errorf("%s lists %q under unscored:, but it passes now: remove it", file, e)
		}
	}
	var unexpected []string
	for scenario, checks := range results {
		if !unscored[scenario] || listed[scenario] {
			continue
		}
		for _, c := range checks {
			if failed(c) && !listed[scenario+":"+c.ID] {
				unexpected = append(unexpected, scenario+":"+c.ID+" ("+c.Status+")")
			}
		}
	}
	sort.Strings(unexpected)
	for _, u := range unexpected {
		t.Errorf("unscored scenario check failed and is not under unscored: in %s: %s", file, u)
	}
}
