package app_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// plainRefusals are the files that refuse with a forbidden error naming no
// OAuth scope, how many such refusals each makes, and why asking the
// person again could not lift them. A refusal of a token's rights (a
// namespace, acting as someone) comes from vp.Principal (MayRead, MayWrite,
// MayActAs, ActAs) or carries .WithScope, so that an OAuth client is
// answered 403 insufficient_scope and its host may ask again.
var plainRefusals = map[string]struct {
	n   int
	why string
}{
	"shared/task/lifecycle.go":            {1, "ownership: only the task's creator, assignee or system"},
	"shared/task/update.go":               {2, "ownership: only the task's creator or system"},
	"shared/task/verbs.go":                {1, "ownership: only the paused task's owner or system"},
	"shared/mission/update.go":            {1, "ownership: only the mission's creator or system"},
	"shared/briefing/briefing.go":         {1, "ownership: only the note's creator or system"},
	"shared/component/component.go":       {1, "ownership: only the component's creator or system"},
	"shared/recurring/recurring.go":       {3, "ownership: only the creator, assignee or system"},
	"shared/message/message.go":           {1, "ownership: only the sender or system deletes a message"},
	"shared/mandate/mandate.go":           {4, "ownership: the mandate's requester or fulfiller"},
	"shared/businessunit/businessunit.go": {1, "ownership: the business unit's creator or lead"},
	"shared/oauth/profiles.go":            {2, "built in: the master and built-in profiles are fixed"},
	"shared/oauth/clients.go":             {1, "admin only: a profile other than the generic one"},
	"shared/oauth/rights/rights.go":       {1, "the consent page: narrowing beyond the signing-in token"},
	"shared/errormon/deployments.go":      {1, "the operator's per-tenant log group allow-list"},
	"shared/errormon/convex/convex.go":    {2, "the operator's deployment configuration"},
	"shared/github/identity.go":           {1, "the tenant's GitHub token"},
	"shared/github/errors.go":             {1, "the tenant's GitHub token"},
	"shared/mcpserver/server.go":          {1, "a grant of nothing: a client without a person (client credentials), lifted by an admin's elevation"},
	"shared/mcpserver/resources.go":       {1, "a token that grants nothing (no step-up on resources/read)"},
	"shared/pacerelle/relay/http.go":      {11, "the relay's devices and pairings, its own HTTP API (no OAuth)"},
	"shared/pacerelle/relay/push.go":      {1, "the relay: name the agent"},
	"shared/pacerelle/relay/pairing.go":   {6, "the relay's pairing steps by device credential"},
}

// TestEveryRightsRefusalNamesItsScope reads the non-test Go files of
// shared and finds each forbidden error made there (vp.E, vp.Errorf or an
// Error literal of kind forbidden) that is not scoped by .WithScope. Each
// must be in plainRefusals with its count: a new refusal must either name
// its scope or be listed with the reason asking again cannot lift it.
func TestEveryRightsRefusalNamesItsScope(t *testing.T) {
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string][]string{}
	err = filepath.WalkDir(filepath.Join(root, "shared"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, pos := range unscopedForbidden(f) {
			found[filepath.ToSlash(rel)] = append(found[filepath.ToSlash(rel)], fset.Position(pos).String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(found) < 5 {
		t.Fatalf("found plain refusals in %d files: the scan finds nothing", len(found))
	}
	files := make([]string, 0, len(found))
	for f := range found {
		files = append(files, f)
	}
	sort.Strings(files)
	for _, f := range files {
		want, ok := plainRefusals[f]
		if !ok || want.n != len(found[f]) {
			t.Errorf("%s makes %d forbidden errors without a scope (listed: %d): a refusal of the token's rights comes from "+
				"vp.Principal's MayRead/MayWrite/MayActAs or names its scope (.WithScope); one asking again cannot lift is listed "+
				"in plainRefusals with why\n\t%s", f, len(found[f]), want.n, strings.Join(found[f], "\n\t"))
		}
	}
	for f := range plainRefusals {
		if _, ok := found[f]; !ok {
			t.Errorf("%s is listed in plainRefusals but makes no plain forbidden error: drop it", f)
		}
	}
}

// unscopedForbidden returns where f makes a forbidden error outside the
// receiver of a WithScope call.
func unscopedForbidden(f *ast.File) []token.Pos {
	var scoped [][2]token.Pos
	ast.Inspect(f, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if s, ok := c.Fun.(*ast.SelectorExpr); ok && s.Sel.Name == "WithScope" {
				scoped = append(scoped, [2]token.Pos{s.X.Pos(), s.X.End()})
			}
		}
		return true
	})
	isForbidden := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			return x.Sel.Name == "KindForbidden"
		case *ast.Ident:
			return x.Name == "KindForbidden"
		}
		return false
	}
	var out []token.Pos
	add := func(n ast.Node) {
		for _, r := range scoped {
			if n.Pos() >= r[0] && n.End() <= r[1] {
				return
			}
		}
		out = append(out, n.Pos())
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.CallExpr:
			name := ""
			switch fn := x.Fun.(type) {
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			case *ast.Ident:
				name = fn.Name
			}
			if (name == "E" || name == "Errorf") && len(x.Args) > 1 && isForbidden(x.Args[1]) {
				add(x)
			}
		case *ast.CompositeLit:
			for _, el := range x.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok && isForbidden(kv.Value) {
					if k, ok := kv.Key.(*ast.Ident); ok && k.Name == "Kind" {
						add(x)
					}
				}
			}
		}
		return true
	})
	return out
}
