package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/app"
)

// pendingCallers are the non-test files that still build a capability's
// service themselves, each with its reason. The list only shrinks: an
// entry that no longer calls a constructor fails the test too, so that it
// is removed with the call.
var pendingCallers = map[string]string{
	// The benchmark programs compare wirings Build does not make (indexed
	// and unindexed services side by side, a bare task service, a bare
	// memory service); converting them changes the figures they report.
	"tests/bench/seed.go":            "indexed and unindexed keyword and messaging",
	"tests/bench/checkout.go":        "a bare task service on the store under test",
	"tests/bench/experiment.go":      "the token resolver of the in-process HTTP target",
	"tests/benchretrieval/memory.go": "a memory service on the embedder under test",
}

// TestOnlyTheRootBuildsServices: no non-test Go file outside shared/app
// calls (or takes) the New of a capability package, the packages whose
// services app.Build returns; the binaries, the Lambdas and the tools get
// their services from app.Build. A package's own files call their New
// unqualified, so they are not counted.
func TestOnlyTheRootBuildsServices(t *testing.T) {
	caps := capabilityPackages(t)
	if len(caps) < 15 {
		t.Fatalf("found %d capability packages in app.Services, want every module's: %v", len(caps), caps)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("the module root is not two levels up: %v", err)
	}
	calls := map[string][]string{} // file -> "pkg.New at line"
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if rel != "." && (strings.HasPrefix(name, ".") || name == "node_modules" || name == "testdata" || name == "cdk.out" || rel == "shared/app") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		if found := constructorCalls(t, p, caps); len(found) > 0 {
			calls[rel] = append(calls[rel], found...)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for file, cs := range calls {
		if _, ok := pendingCallers[file]; !ok {
			t.Errorf("%s builds services itself (%s): get them from app.Build (shared/app)", file, strings.Join(cs, ", "))
		}
	}
	for file := range pendingCallers {
		if calls[file] == nil {
			t.Errorf("%s no longer calls a capability's New: remove it from pendingCallers", file)
		}
	}
}

// capabilityPackages are the import paths of the services app.Services
// holds (a pointer to a type of this module), less those a backend passes
// in through Ports: the modules' packages, read from the root itself so
// that a new module is guarded without a line here.
func capabilityPackages(t *testing.T) map[string]bool {
	t.Helper()
	ported := map[reflect.Type]bool{}
	pt := reflect.TypeFor[app.Ports]()
	for i := range pt.NumField() {
		ported[pt.Field(i).Type] = true
	}
	caps := map[string]bool{}
	st := reflect.TypeFor[app.Services]()
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() || f.Type.Kind() != reflect.Pointer || ported[f.Type] {
			continue
		}
		if pkg := f.Type.Elem().PkgPath(); strings.HasPrefix(pkg, module) {
			caps[pkg] = true
		}
	}
	return caps
}

// constructorCalls lists the references to X.New in file where X is
// imported from a package of caps.
func constructorCalls(t *testing.T, file string, caps map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{} // local name -> import path
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil || !caps[p] {
			continue
		}
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		names[name] = p
	}
	if len(names) == 0 {
		return nil
	}
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "New" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] != "" {
			out = append(out, id.Name+".New at line "+strconv.Itoa(fset.Position(sel.Pos()).Line))
		}
		return true
	})
	slices.Sort(out)
	return out
}
