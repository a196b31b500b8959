//go:build !conformance

package main

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

// TestReleaseBuildHasNoConformanceFixtures: the suite's fixtures
// (conformance_fixtures.go) are compiled only with -tags conformance; a
// release server lists none of its tools, prompts or resources.
func TestReleaseBuildHasNoConformanceFixtures(t *testing.T) {
	ctx := context.Background()
	a, err := openApp(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	p := auth.MasterPrincipal("default")
	ct, st := mcp.NewInMemoryTransports()
	if _, err := a.mcpServer(&p).Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "release"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cs.Close() }()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools.Tools) == 0 {
		t.Fatal("tools/list is empty: the check below would prove nothing")
	}
	for _, tool := range tools.Tools {
		if strings.HasPrefix(tool.Name, "test_") {
			t.Errorf("release tools/list has the conformance fixture %q", tool.Name)
		}
	}
	if prompts, err := cs.ListPrompts(ctx, nil); err == nil {
		for _, pr := range prompts.Prompts {
			if strings.HasPrefix(pr.Name, "test_") {
				t.Errorf("release prompts/list has the conformance fixture %q", pr.Name)
			}
		}
	}
	if res, err := cs.ListResources(ctx, nil); err == nil {
		for _, r := range res.Resources {
			if strings.HasPrefix(r.URI, "test://") {
				t.Errorf("release resources/list has the conformance fixture %q", r.URI)
			}
		}
	}
}
