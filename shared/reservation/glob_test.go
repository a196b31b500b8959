package reservation

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// bruteMatch is an independent matcher: path.Match for each segment and a
// recursion for "**", so that the tests do not check Overlap against
// itself.
func bruteMatch(glob, p string) bool {
	var rec func(g, s []string) bool
	rec = func(g, s []string) bool {
		if len(g) == 0 {
			return len(s) == 0
		}
		if g[0] == "**" {
			for k := 0; k <= len(s); k++ {
				if rec(g[1:], s[k:]) {
					return true
				}
			}
			return false
		}
		if len(s) == 0 {
			return false
		}
		ok, err := path.Match(g[0], s[0])
		return err == nil && ok && rec(g[1:], s[1:])
	}
	return rec(strings.Split(glob, "/"), strings.Split(p, "/"))
}

func TestOverlapTable(t *testing.T) {
	cases := []struct {
		a, b string
		want bool
	}{
		{"src/api/**", "src/api/users.go", true},
		{"**/*.go", "docs/*.md", false},
		{"**/*.go", "docs/**", true},
		{"src/api/**", "src/web/**", false},
		{"src/api/**", "src/**", true},
		{"src/api/**", "src/api", true}, // "**" matches zero segments
		{"src/*.go", "src/a/b.go", false},
		{"src/*.go", "src/**/b.go", true},
		{"src/*", "src/a/b", false},
		{"*.md", "README.md", true},
		{"*.md", "docs/README.md", false},
		{"a?c", "abc", true},
		{"a?c", "ac", false},
		{"a*c", "ac", true},
		{"*a*", "*b*", true},
		{"a*", "*b", true},
		{"a*", "b*", false},
		{"*.go", "*.md", false},
		{"x/*/y", "x/**/z", false},
		{"x/*/y", "**/y", true},
		{"**", "anything/at/all", true},
		{"**", "**", true},
		{"**/a/**", "**/b/**", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/c", false},
		{"?", "**", true},
		{"??", "a", false},
		{"*", "a/b", false},
		{"é?", "éa", true},
		{"docs/*.md", "docs/guide/x.md", false},
	}
	for _, c := range cases {
		for _, pair := range [][2]string{{c.a, c.b}, {c.b, c.a}} {
			w, got := Overlap(MustGlob(pair[0]), MustGlob(pair[1]))
			if got != c.want {
				t.Errorf("Overlap(%q, %q) = %v, want %v", pair[0], pair[1], got, c.want)
				continue
			}
			if got && (!bruteMatch(pair[0], w) || !bruteMatch(pair[1], w)) {
				t.Errorf("Overlap(%q, %q): witness %q does not match both", pair[0], pair[1], w)
			}
		}
	}
}

func TestParseGlobRefusals(t *testing.T) {
	for _, s := range []string{"", "/etc/passwd", "src/", "a//b", "a/../b", "./a", "src/[ab].go", "{a,b}", `a\*`, "a**b", "a/**x", "a\tb"} {
		_, err := ParseGlob("reserve_paths", "paths[0]", s)
		if err == nil {
			t.Errorf("ParseGlob(%q) accepted it", s)
			continue
		}
		if e, ok := err.(*vp.Error); !ok || e.Field != "paths[0]" || e.Kind != vp.KindInvalid {
			t.Errorf("ParseGlob(%q) = %v, want an invalid error naming paths[0]", s, err)
		}
	}
}

// TestPrefixIsNecessary: whenever two globs overlap, one's prefix is a
// prefix of the other's (the index reads only those candidates).
func TestPrefixIsNecessary(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a, b := randGlob(r), randGlob(r)
		if _, ok := Overlap(MustGlob(a), MustGlob(b)); !ok {
			continue
		}
		pa, pb := MustGlob(a).Prefix(), MustGlob(b).Prefix()
		if !strings.HasPrefix(pa, pb) && !strings.HasPrefix(pb, pa) {
			t.Fatalf("%q and %q overlap but their prefixes %q and %q are unrelated", a, b, pa, pb)
		}
	}
}

var globTokens = []string{"a", "b", "*", "?"}

func randGlob(r *rand.Rand) string {
	segs := make([]string, 1+r.IntN(3))
	for i := range segs {
		if r.IntN(4) == 0 {
			segs[i] = "**"
			continue
		}
		var b strings.Builder
		for range 1 + r.IntN(3) {
			b.WriteString(globTokens[r.IntN(len(globTokens))])
		}
		segs[i] = strings.ReplaceAll(b.String(), "**", "*")
	}
	return strings.Join(segs, "/")
}

// smallPaths are every path of up to 3 segments of 1 or 2 letters of
// {a, b, c}.
func smallPaths() []string {
	var segs []string
	for _, x := range "abc" {
		segs = append(segs, string(x))
		for _, y := range "abc" {
			segs = append(segs, string(x)+string(y))
		}
	}
	out := append([]string(nil), segs...)
	level := segs
	for range 2 {
		var next []string
		for _, p := range level {
			for _, s := range segs {
				next = append(next, p+"/"+s)
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

// checkAgainstBrute: an overlap has a witness both match; no overlap means
// no generated path matches both.
func checkAgainstBrute(t *testing.T, a, b string, paths []string) {
	ga, err1 := ParseGlob("t", "a", a)
	gb, err2 := ParseGlob("t", "b", b)
	if err1 != nil || err2 != nil {
		return
	}
	w, ok := Overlap(ga, gb)
	if ok {
		if !bruteMatch(a, w) || !bruteMatch(b, w) {
			t.Fatalf("Overlap(%q, %q): witness %q does not match both", a, b, w)
		}
		return
	}
	for _, p := range paths {
		if bruteMatch(a, p) && bruteMatch(b, p) {
			t.Fatalf("Overlap(%q, %q) = false, but %q matches both", a, b, p)
		}
	}
}

func TestOverlapAgainstBruteForce(t *testing.T) {
	paths := smallPaths()
	r := rand.New(rand.NewPCG(3, 4))
	n := 3000
	if testing.Short() {
		n = 500
	}
	for range n {
		checkAgainstBrute(t, randGlob(r), randGlob(r), paths)
	}
}

func FuzzOverlap(f *testing.F) {
	for _, s := range [][2]string{{"src/api/**", "src/api/users.go"}, {"**/*.go", "docs/*.md"}, {"a*", "*b"}, {"?/**", "**/??"}} {
		f.Add(s[0], s[1])
	}
	paths := smallPaths()
	f.Fuzz(func(t *testing.T, a, b string) {
		if len(a) > 16 || len(b) > 16 {
			return // the brute force is exhaustive only for small globs
		}
		checkAgainstBrute(t, a, b, paths)
	})
}
