// Package nodeclient runs the project's Node.js MCP client scripts
// (tests/clients/*.mjs, built on the official TypeScript SDK) from Go tests
// and reads the JSON summary each prints on stdout. The end-to-end tests
// against the embedded server and those against the Lambda functions share
// it, so a script's contract is read in one place.
package nodeclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Summary is what every client script prints on stdout.
type Summary struct {
	Client     string            `json:"client"`
	Scenario   string            `json:"scenario"`
	OK         bool              `json:"ok"`
	Passed     int               `json:"passed"`
	Failed     int               `json:"failed"`
	Failures   []json.RawMessage `json:"failures"`
	Error      *string           `json:"error"`
	Facts      map[string]any    `json:"facts"`
	Checks     []string          `json:"checks"`
	DurationMS int64             `json:"durationMs"`
}

// Require returns the path of node, or skips t loudly (fails it with
// CI=true) when node or one of the npm packages is not installed in
// testsDir/node_modules.
func Require(t testing.TB, testsDir string, packages ...string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	for _, p := range packages {
		if err != nil {
			break
		}
		_, err = os.Stat(filepath.Join(testsDir, "node_modules", filepath.FromSlash(p), "package.json"))
	}
	if err == nil {
		return node
	}
	Missing(t, "node and the npm packages in tests/node_modules", err)
	return ""
}

// Missing skips t loudly, or fails it with CI=true, because what it needs
// (from scripts/test-deps.sh) is not installed.
func Missing(t testing.TB, need string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("missing %s, which CI requires (CI=true): %v — run scripts/test-deps.sh", need, err)
	}
	msg := "\n" +
		"################################################################\n" +
		"## SKIPPING %s: it needs %s\n" +
		"## (%v).\n" +
		"## Run scripts/test-deps.sh (or make test) to install them.\n" +
		"################################################################"
	fmt.Fprintf(os.Stderr, msg+"\n", t.Name(), need, err)
	t.Skipf(msg, t.Name(), need, err)
}

// Run is one run of a client script.
type Run struct {
	Node     string // from Require
	Dir      string // the tests folder: scripts are clients/<Script> below it
	Script   string
	Scenario string
	Config   any // JSON in VP_E2E_CONFIG
	// ServerLog, when set, is shown when the script prints no summary.
	ServerLog func() string
}

// Do runs the script and returns its summary. A non-zero exit, a failed
// check, no passed check, an error, a summary of another scenario or no
// summary at all fails t.
func (r Run) Do(t testing.TB) Summary {
	t.Helper()
	raw, err := json.Marshal(r.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.Node, filepath.Join("clients", r.Script), r.Scenario)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "VP_E2E_CONFIG="+string(raw))
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	var s Summary
	if err := json.Unmarshal(stdout.Bytes(), &s); err != nil {
		log := ""
		if r.ServerLog != nil {
			log = "\nserver log:\n" + r.ServerLog()
		}
		t.Fatalf("node %s %s: %v; no JSON summary on stdout (%v)\nstdout:\n%s\nstderr:\n%s%s",
			r.Script, r.Scenario, runErr, err, stdout.String(), stderr.String(), log)
	}
	t.Logf("node %s %s: %d checks passed, %d failed in %v", r.Script, r.Scenario, s.Passed, s.Failed, time.Since(start).Round(time.Millisecond))
	if runErr != nil || !s.OK || s.Failed != 0 || s.Error != nil {
		var b strings.Builder
		for _, f := range s.Failures {
			var c bytes.Buffer
			if json.Compact(&c, f) != nil {
				c.Write(f)
			}
			b.WriteString("  ")
			b.Write(c.Bytes())
			b.WriteString("\n")
		}
		errText := ""
		if s.Error != nil {
			errText = *s.Error
		}
		t.Fatalf("node %s %s failed (exit: %v)\nfailed checks:\n%s\nerror: %s\nstderr:\n%s",
			r.Script, r.Scenario, runErr, b.String(), errText, stderr.String())
	}
	if s.Passed == 0 {
		t.Fatalf("node %s %s passed no check", r.Script, r.Scenario)
	}
	if s.Client == "" || s.Scenario != r.Scenario {
		t.Fatalf("summary names scenario %q of client %q, want %q", s.Scenario, s.Client, r.Scenario)
	}
	return s
}
