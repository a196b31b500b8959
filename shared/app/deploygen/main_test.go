package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// TestGeneratedFileIsCurrent: the CDK stack reads the routes and the
// schedules from deploy_gen.go; it must be what the tables say now.
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := source()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", "awsenv", genFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("shared/awsenv/%s is stale: run go generate ./shared/awsenv", genFile)
	}
}

// TestFunctionTable: awsenv.Functions is the one list of Lambda functions;
// the other places that name them must agree with it.
func TestFunctionTable(t *testing.T) {
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	names := awsenv.FunctionNames()
	byName := map[string]awsenv.Function{}
	for _, f := range awsenv.Functions() {
		if _, dup := byName[f.Name]; dup {
			t.Errorf("function %s is in the table twice", f.Name)
		}
		byName[f.Name] = f
		if _, err := os.Stat(filepath.Join(root, f.Dir, "main.go")); err != nil {
			t.Errorf("%s: no entry point %s/main.go", f.Name, f.Dir)
		}
		if f.MemoryMB < 128 || f.Timeout <= 0 {
			t.Errorf("%s: memory %d MB, timeout %v", f.Name, f.MemoryMB, f.Timeout)
		}
	}
	// Every directory under functions/ but the local binaries (vantagepeers,
	// and the Pacerelle stdio MCP server) is a function.
	entries, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && e.Name() != "vantagepeers" && e.Name() != "pacerelle" {
			dirs = append(dirs, e.Name())
		}
	}
	if sorted := slices.Sorted(slices.Values(names)); !slices.Equal(dirs, sorted) {
		t.Errorf("functions/ holds %v, the table %v", dirs, sorted)
	}
	// The Makefile builds the zips the stack deploys.
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^FUNCTIONS\s*:?=\s*(.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no FUNCTIONS := line")
	}
	if got := strings.Fields(string(m[1])); !slices.Equal(got, names) {
		t.Errorf("Makefile FUNCTIONS = %v, want %v (awsenv.Functions)", got, names)
	}
	// Each route and job runs in a function of the table triggered that way.
	for _, r := range vpapp.Routes(nil) {
		if f, ok := byName[r.Function]; !ok || f.Trigger != awsenv.TriggerHTTP {
			t.Errorf("route %s: function %q is not an HTTP function of the table", r.Path, r.Function)
		}
	}
	for _, j := range vpapp.Catalogue(nil) {
		want := awsenv.TriggerSchedule
		if j.Kind == jobs.Worker {
			want = awsenv.TriggerQueue
		}
		if f, ok := byName[j.Function]; !ok || f.Trigger != want {
			t.Errorf("job %s: function %q is not a %s function of the table", j.Name, j.Function, want)
		}
		// The stack grants the error monitor's reads (deploy keys, log
		// groups) to the functions marked ErrorMonitor only.
		if j.Name == "error-monitor" && !byName[j.Function].ErrorMonitor {
			t.Errorf("job %s runs in %q, which the table does not mark ErrorMonitor", j.Name, j.Function)
		}
	}
}
