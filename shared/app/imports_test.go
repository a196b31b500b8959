package app_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// maxImporters is how many non-test files outside a capability's folder
// may import it: the module list (shared/app/modules.go), its tools
// (shared/mcpserver/<cap>.go) and, where it has them, its ports on a
// backend and its commands — not a wiring spread over the tree. The
// capabilities other ones build on (tasks, messages, memories, briefings,
// missions, keyword search, components) are not listed: being used is
// their job.
const maxImporters = 4

var boundedCapabilities = []string{
	"shared/issue", "shared/errormon", "shared/okfsvc", "shared/pacerelle/relay",
	"shared/businessunit", "shared/diary", "shared/digest", "shared/profile", "shared/recurring", "shared/mandate", "shared/iframe",
}

// TestCapabilitiesAreImportedByFewFiles: each bounded capability is
// imported by at most maxImporters non-test files outside its folder.
func TestCapabilitiesAreImportedByFewFiles(t *testing.T) {
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	importers := map[string][]string{}
	fset := token.NewFileSet()
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); name == "node_modules" || strings.HasPrefix(name, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			p = strings.TrimPrefix(p, module)
			if slices.Contains(boundedCapabilities, p) && !strings.HasPrefix(rel, p+"/") {
				importers[p] = append(importers[p], rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range boundedCapabilities {
		got := importers[c]
		if len(got) == 0 {
			t.Errorf("%s: imported by no file: is it still a capability of the module list?", c)
		}
		if len(got) > maxImporters {
			t.Errorf("%s is imported by %d non-test files outside it, at most %d: %s", c, len(got), maxImporters, strings.Join(got, ", "))
		}
	}
}
