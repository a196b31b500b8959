package vp

import (
	"regexp"
	"strings"
	"testing"
)

var slugRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// FuzzValidSlug: the loop accepts exactly what the pattern it replaced did.
func FuzzValidSlug(f *testing.F) {
	for _, s := range []string{"", "a", "acme", "a-b_c", "-a", "_a", "A", "a.b", "é", "a\n", strings.Repeat("a", 63), strings.Repeat("a", 64), "0", "9z-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := ValidSlug(s), slugRE.MatchString(s); got != want {
			t.Fatalf("ValidSlug(%q) = %v, the pattern says %v", s, got, want)
		}
	})
}
