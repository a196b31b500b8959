package auth_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"testing"
)

// TestMasterComparedInConstantTime reads the source of Resolve: the master
// token must be compared with subtle.ConstantTimeCompare, and the master
// hash must never meet ==, != or bytes.Equal (which stop at the first
// differing byte). The checker itself is tested on mutants.
func TestMasterComparedInConstantTime(t *testing.T) {
	src, err := os.ReadFile("tokens.go")
	if err != nil {
		t.Fatal(err)
	}
	if problems := constantTimeProblems(t, string(src)); len(problems) > 0 {
		t.Fatal(problems)
	}
	mutants := map[string]string{
		"==":          `if h == t.master { return p, nil }`,
		"bytes.Equal": `if bytes.Equal(h[:], t.master[:]) { return p, nil }`,
		"no compare":  `return p, nil`,
	}
	for name, body := range mutants {
		src := "package auth\nfunc (t *Tokens) Resolve() (int, error) {\n" + body + "\nreturn 0, nil }\n"
		if len(constantTimeProblems(t, src)) == 0 {
			t.Errorf("the checker misses a mutant (%s)", name)
		}
	}
}

func constantTimeProblems(t *testing.T, src string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "tokens.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	var resolve *ast.FuncDecl
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Name.Name == "Resolve" {
			resolve = fd
		}
	}
	if resolve == nil {
		return []string{"no Resolve in tokens.go"}
	}
	var problems []string
	constantTime := false
	ast.Inspect(resolve, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
				pkg, _ := sel.X.(*ast.Ident)
				if pkg != nil && pkg.Name == "subtle" && sel.Sel.Name == "ConstantTimeCompare" && argsMentionMaster(x) {
					constantTime = true
				}
				if pkg != nil && pkg.Name == "bytes" && argsMentionMaster(x) {
					problems = append(problems, fmt.Sprintf("%s: the master hash goes through bytes.%s", fset.Position(x.Pos()), sel.Sel.Name))
				}
			}
		case *ast.BinaryExpr:
			if (x.Op == token.EQL || x.Op == token.NEQ) && mentionsMaster(x) && !isZeroValue(x.X) && !isZeroValue(x.Y) {
				problems = append(problems, fmt.Sprintf("%s: the master hash is compared with %s", fset.Position(x.Pos()), x.Op))
			}
		}
		return true
	})
	if !constantTime {
		problems = append(problems, "Resolve does not compare the master token with subtle.ConstantTimeCompare")
	}
	return problems
}

// isZeroValue: comparing with the zero value only tells whether a master
// token is configured, not anything about it.
func isZeroValue(e ast.Expr) bool {
	for {
		p, ok := e.(*ast.ParenExpr)
		if !ok {
			break
		}
		e = p.X
	}
	c, ok := e.(*ast.CompositeLit)
	return ok && len(c.Elts) == 0
}

// mentionsMaster reports whether n reads the field master (t.master)
// other than as the argument of a call (whose result is compared).
func mentionsMaster(n ast.Node) bool {
	found := false
	ast.Inspect(n, func(n ast.Node) bool {
		if _, call := n.(*ast.CallExpr); call {
			return false
		}
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "master" {
			found = true
		}
		return !found
	})
	return found
}

func argsMentionMaster(c *ast.CallExpr) bool {
	for _, a := range c.Args {
		if mentionsMaster(a) {
			return true
		}
	}
	return false
}
