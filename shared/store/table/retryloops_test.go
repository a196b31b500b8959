package table_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// attemptsName is how a bound on attempts is spelled in a loop header.
var attemptsName = regexp.MustCompile(`(?i)(attempts|retries)$`)

// TestNoHandWrittenConflictLoops: every read-modify-write that starts again
// after losing a conditional write goes through table.Conflicts (or
// table.Retry, table.Update), so that its bound, its error mapping and its
// cancelled-context check are written once. A loop is a hand-written one
// when it mentions store.ErrConditionFailed or MaxUpdateAttempts outside a
// closure, or counts attempts (`for range maxAttempts`) without being a
// network retry (those never mention ErrConditionFailed and count with a
// literal or a three-clause for).
func TestNoHandWrittenConflictLoops(t *testing.T) {
	found := map[string]token.Position{}
	for _, root := range []string{"../..", "../../../functions"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel := filepath.ToSlash(path)
			if d.IsDir() {
				// The store's backends implement conditions and retry their
				// transport; node_modules and testdata hold no product Go.
				if strings.HasSuffix(rel, "shared/store") || d.Name() == "node_modules" || d.Name() == "testdata" {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			for _, fn := range handLoops(f) {
				found[strings.TrimPrefix(strings.TrimPrefix(rel, "../../../"), "../../")+":"+fn.name] = fset.Position(fn.pos)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(found)) {
		t.Errorf("%s: a hand-written retry of a conditional write (%s); use table.Conflicts{...}.Retry or table.Retry", found[k], k)
	}
}

// TestHandLoopDetector: the detector finds the shapes the project used,
// and leaves network retries and loops over collections alone. A loop
// that waits for another job's lease is no conflict loop when the lost
// write is retried around it (l), and one when it retries the write itself
// (m, holdSummary's old shape).
func TestHandLoopDetector(t *testing.T) {
	src := `package p
func a() { for attempt := 0; attempt < table.MaxUpdateAttempts; attempt++ { x() } }
func b() { for { if errors.Is(err, store.ErrConditionFailed) { continue } } }
func c() { for range maxUpsertAttempts { x() } }
func d() { for attempt := 0; attempt < 3; attempt++ { if !errors.Is(err, store.ErrConditionFailed) { return } } }
func e() { for attempt := range 8 { if err := send(); err == nil { return } } }
func f() { for _, p := range profiles { if errors.Is(err, store.ErrConditionFailed) { continue } } }
func g() { for _, id := range ids { _ = table.Retry(ctx, op, "id", id, func() error { return store.ErrConditionFailed }) } }
func h() { for attempt := 0; ; attempt++ { if retryable(err) { continue } } }
func i() { for len(ops) > 0 { for _, op := range ops { if errors.Is(err, store.ErrConditionFailed) { log() } } } }
func j() { for _, e := range entries { x(e) } }
func k() { for try := 0; try < 8; try++ { if !errors.Is(err, store.ErrConditionFailed) { return err } } }
func l() { _ = table.Retry(ctx, op, "id", id, func() error { for { if leased() { wait(); continue }; break }; return store.ErrConditionFailed }) }
func m() { for { if leased() { wait(); continue }; if errors.Is(write(), store.ErrConditionFailed) { continue }; return } }
`
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range handLoops(f) {
		got = append(got, l.name)
	}
	if want := []string{"a", "b", "c", "d", "k", "m"}; !slices.Equal(got, want) {
		t.Fatalf("hand loops found in %v, want %v", got, want)
	}
}

type handLoop struct {
	name string
	pos  token.Pos
}

// handLoops returns the functions of f holding a hand-written conflict
// loop, once each.
func handLoops(f *ast.File) []handLoop {
	var out []handLoop
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		name := fn.Name.Name
		if fn.Recv != nil && len(fn.Recv.List) > 0 {
			name = recvName(fn.Recv.List[0].Type) + "." + name
		}
		var at token.Pos
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if at.IsValid() {
				return false
			}
			switch l := n.(type) {
			case *ast.ForStmt:
				if mentions(l.Cond, "MaxUpdateAttempts") || mentions(l.Body, "ErrConditionFailed", "MaxUpdateAttempts") {
					at = l.Pos()
				}
			case *ast.RangeStmt:
				if countsAttempts(l.X) || (isIntLit(l.X) && mentions(l.Body, "ErrConditionFailed")) {
					at = l.Pos()
				}
			}
			return true
		})
		if at.IsValid() {
			out = append(out, handLoop{name, at})
		}
	}
	return out
}

func recvName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return recvName(t.X)
	case *ast.IndexExpr:
		return recvName(t.X)
	case *ast.IndexListExpr:
		return recvName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return "?"
}

// mentions reports whether n names one of names outside a closure (a
// closure is the attempt handed to table.Retry) and outside a loop nested
// in n (which is judged by itself).
func mentions(n ast.Node, names ...string) bool {
	if n == nil {
		return false
	}
	hit := false
	ast.Inspect(n, func(m ast.Node) bool {
		switch x := m.(type) {
		case *ast.FuncLit, *ast.ForStmt, *ast.RangeStmt:
			return m == n
		case *ast.Ident:
			if slices.Contains(names, x.Name) {
				hit = true
			}
		}
		return !hit
	})
	return hit
}

func countsAttempts(x ast.Expr) bool {
	switch v := x.(type) {
	case *ast.Ident:
		return attemptsName.MatchString(v.Name)
	case *ast.SelectorExpr:
		return attemptsName.MatchString(v.Sel.Name)
	}
	return false
}

func isIntLit(x ast.Expr) bool {
	b, ok := x.(*ast.BasicLit)
	return ok && b.Kind == token.INT
}
