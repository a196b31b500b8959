package app_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

const module = "github.com/vantagepeers/vantagepeers/"

// layers are the floors of the code, lowest first: a package may import
// packages of its own floor or below, never above. A package is on the
// floor of the longest prefix that names it (a folder and what is under
// it, unless a longer prefix says otherwise).
var layers = []struct {
	name     string
	prefixes []string
}{
	{"foundation: values, rules and formats that import nothing of ours but these", []string{
		"shared/vp", "shared/egress", "shared/emf", "shared/uimarker", "shared/uiview", "shared/testproc", "shared/internal",
		"shared/awsenv", "shared/tenantfile", "shared/okf", "shared/store", "shared/queue", "shared/embed", "shared/search/analysis",
		"shared/ghmd", "shared/hostconfig", "shared/pacerelle/seal", "shared/pacerelle/wire", "shared/pacerelle/localstate", "shared/pacerelle/webapp",
		"shared/errormon/source", "shared/errormon/internal", "shared/errormon/fingerprint", "shared/errormon/templates"}},
	{"ports and libraries: the store's tables, lists, the outbox, search, tokens, rate limits", []string{
		"shared/store/table", "shared/store/records", "shared/store/keysdoc", "shared/store/storetest", "shared/listing",
		"shared/outbox", "shared/search", "shared/auth", "shared/admintokens", "shared/ratelimit", "shared/domaintest"}},
	{"adapters: one technology each, behind a port", []string{
		"shared/store/sqlite", "shared/store/dynamo", "shared/store/teststores", "shared/search/local", "shared/search/opensearch",
		"shared/search/searchtest", "shared/queue/sqs", "shared/queue/storequeue", "shared/embed/bedrock", "shared/embed/local", "shared/embed/concept",
		"shared/embed/openai", "shared/errormon/cloudwatch", "shared/errormon/convex", "shared/github/githubfake", "webhooks/webhookstest", "shared/gitguard"}},
	{"capabilities: the domain services", []string{
		"shared/briefing", "shared/businessunit", "shared/component", "shared/diary", "shared/digest", "shared/iframe", "shared/issue",
		"shared/keyword", "shared/mandate", "shared/memory", "shared/message", "shared/mission", "shared/profile", "shared/recurring",
		"shared/task", "shared/reservation", "shared/errormon", "shared/okfsvc", "shared/oauth", "shared/pacerelle", "shared/tenants", "shared/github", "webhooks",
		"shared/activity"}},
	{"drivers: MCP tools, HTTP routes, jobs", []string{"shared/mcpserver", "shared/httpapi", "shared/jobs", "shared/conformance"}},
	{"the composition root", []string{"shared/app"}},
	{"the AWS backend", []string{"shared/awsapp"}},
	{"commands and binaries", []string{"functions", "tests", "shared/app/deploygen"}},
}

// layerOf is the floor of a package of the module (its path without the
// module's), or -1.
func layerOf(pkg string) int {
	best, floor := -1, -1
	for i, l := range layers {
		for _, p := range l.prefixes {
			if (pkg == p || strings.HasPrefix(pkg, p+"/")) && len(p) > best {
				best, floor = len(p), i
			}
		}
	}
	return floor
}

// TestNoImportRunsUpward: no package imports one on a floor above its own
// (go list reads the imports of the non-test files), and every package is
// on a floor.
func TestNoImportRunsUpward(t *testing.T) {
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(fields[0], module)
		pkgs++
		floor := layerOf(pkg)
		if floor < 0 {
			t.Errorf("%s is on no floor: add it to layers", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if !strings.HasPrefix(imp, module) {
				continue
			}
			imp = strings.TrimPrefix(imp, module)
			if f := layerOf(imp); f > floor {
				t.Errorf("%s (%s) imports %s (%s), a floor above", pkg, layers[floor].name, imp, layers[f].name)
			}
		}
	}
	if pkgs < 90 {
		t.Fatalf("go list named %d packages; want the whole module", pkgs)
	}
}

// TestLayerOf: the longest prefix decides, and a prefix is a folder, not
// a string prefix.
func TestLayerOf(t *testing.T) {
	for pkg, want := range map[string]string{
		"shared/store":              "foundation",
		"shared/store/sqlite":       "adapters",
		"shared/store/table":        "ports",
		"shared/searchx":            "",
		"shared/search/local":       "adapters",
		"shared/errormon/templates": "foundation",
		"shared/errormon":           "capabilities",
		"shared/app/deploygen":      "commands",
	} {
		f := layerOf(pkg)
		got := ""
		if f >= 0 {
			got, _, _ = strings.Cut(layers[f].name, ":")
			got, _, _ = strings.Cut(got, " ")
		}
		if got != want {
			t.Errorf("layerOf(%s) = %q, want %q", pkg, got, want)
		}
	}
}
