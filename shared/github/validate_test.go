package github_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/github"
)

func TestValidRepo(t *testing.T) {
	cases := map[string]bool{
		"octocat/Hello-World":           true,
		"acme/widgets.go":               true,
		"a/b":                           true,
		"my-org/.github":                true,
		"octocat_acme/repo":             true, // a managed user's login
		"0/_":                           true,
		strings.Repeat("o", 39) + "/r":  true,
		strings.Repeat("o", 40) + "/r":  false,
		"o/" + strings.Repeat("r", 100): true,
		"o/" + strings.Repeat("r", 101): false,
		"":                              false,
		"acme":                          false,
		"/widgets":                      false,
		"acme/":                         false,
		"acme/widgets/extra":            false,
		"acme/..":                       false,
		"acme/.":                        false,
		"-acme/widgets":                 false,
		"acme/wid gets":                 false,
		"acme/wid%2Fgets":               false,
		"acme/widgets?x=1":              false,
		"acme/widgets#x":                false,
		"ac.me/widgets":                 false,
		"acmé/widgets":                  false,
	}
	for in, want := range cases {
		if got := github.ValidRepo(in); got != want {
			t.Errorf("ValidRepo(%q) = %v, want %v", in, got, want)
		}
	}
}

func FuzzValidRepo(f *testing.F) {
	for _, s := range []string{"octocat/Hello-World", "a/b", "acme/..", "a//b", "a/b/c", "-a/b", "a/b.git", "é/b", "a/%2e%2e"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !github.ValidRepo(s) {
			return
		}
		owner, name, ok := strings.Cut(s, "/")
		if !ok || strings.Contains(name, "/") {
			t.Fatalf("%q accepted without exactly one slash", s)
		}
		if owner == "" || len(owner) > 39 || name == "" || len(name) > 100 || name == "." || name == ".." {
			t.Fatalf("%q accepted with an empty, long or dot part", s)
		}
		// The client puts both parts in a URL path unescaped: they must
		// need no escaping, and must not move the path anywhere.
		if url.PathEscape(owner) != owner || url.PathEscape(name) != name {
			t.Fatalf("%q accepted but needs escaping in a path", s)
		}
		u, err := url.Parse("https://api.github.com/repos/" + s + "/issues")
		if err != nil || u.Path != "/repos/"+s+"/issues" || u.RawQuery != "" || u.Fragment != "" {
			t.Fatalf("%q changes the URL it is put in: %v %v", s, u, err)
		}
	})
}
