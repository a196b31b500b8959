//go:build !conformance

package main

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/conformance"
)

// TestReleaseBuildHasNoConformanceFixtures: the suite's fixtures
// (shared/conformance) are added only with -tags conformance; a release
// server lists none of their tools, prompts or resources, and declares
// none of their capabilities.
func TestReleaseBuildHasNoConformanceFixtures(t *testing.T) {
	ctx := context.Background()
	fx := mcp.NewServer(&mcp.Implementation{Name: "fixtures"}, nil)
	conformance.Add(fx, conformance.Options{})
	fixtures := listed(t, fx)
	if len(fixtures) < 30 {
		t.Fatalf("the fixture server lists %d names: the check below would prove little", len(fixtures))
	}
	a, err := openApp(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p := auth.MasterPrincipal("default")
	release := listed(t, a.mcpServer(&p))
	if len(release) == 0 {
		t.Fatal("the release server lists nothing: the check below would prove nothing")
	}
	for name := range fixtures {
		if release[name] {
			t.Errorf("the release server lists the conformance fixture %s", name)
		}
	}
	if release["capability completions"] || release["capability resources.subscribe"] {
		t.Error("the release server declares the fixtures' completions or resources.subscribe")
	}
}

// listed is every tool, prompt, resource and template s lists, and the
// capabilities the fixtures add, as "kind name".
func listed(t *testing.T, s *mcp.Server) map[string]bool {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "release"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	out := map[string]bool{}
	caps := cs.InitializeResult().Capabilities
	out["capability completions"] = caps.Completions != nil
	out["capability resources.subscribe"] = caps.Resources != nil && caps.Resources.Subscribe
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out["tool "+tool.Name] = true
	}
	if caps.Prompts != nil {
		for p, err := range cs.Prompts(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			out["prompt "+p.Name] = true
		}
	}
	if caps.Resources != nil {
		for r, err := range cs.Resources(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			out["resource "+r.URI] = true
		}
		for r, err := range cs.ResourceTemplates(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			out["template "+r.URITemplate] = true
		}
	}
	for k, v := range out {
		if !v {
			delete(out, k)
		}
	}
	return out
}

// TestReleaseBuildDoesNotLinkTheFixtures: the fixtures' package is a
// dependency of the binary only with -tags conformance.
func TestReleaseBuildDoesNotLinkTheFixtures(t *testing.T) {
	const fixtures = "github.com/vantagepeers/vantagepeers/shared/conformance"
	deps := func(tags ...string) string {
		out, err := exec.Command("go", append(append([]string{"list", "-deps"}, tags...), ".")...).Output()
		if err != nil {
			t.Fatalf("go list -deps %v: %v", tags, err)
		}
		return string(out)
	}
	if !strings.Contains(deps("-tags", "conformance"), fixtures+"\n") {
		t.Fatalf("-tags conformance does not link %s: the check below would prove nothing", fixtures)
	}
	if strings.Contains(deps(), fixtures+"\n") {
		t.Errorf("the release build links %s", fixtures)
	}
}
