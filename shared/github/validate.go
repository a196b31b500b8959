package github

import (
	"strings"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// GitHub's documented limits, checked before a request so that the caller
// gets an error naming its field instead of GitHub's 422.
const (
	// MaxBodyChars is the longest comment or issue body GitHub accepts, in
	// characters (it answers 422 above it).
	MaxBodyChars = 65536
	// MaxTitleChars is the longest issue title GitHub accepts.
	MaxTitleChars = 256
	// MaxLabelChars is the longest label name GitHub accepts.
	MaxLabelChars = 50
	// maxOwner is GitHub's limit on a user or organisation login.
	maxOwner = 39
	// maxRepoName is GitHub's limit on a repository name.
	maxRepoName = 100
)

// ValidRepo reports whether s is "owner/name" as GitHub spells them: an
// owner of 1..39 letters, digits, '-' (and '_', which managed-user logins
// carry) starting with a letter or digit, and a name of 1..100 letters,
// digits, '.', '-' and '_' other than "." and "..". Accepted slugs need no
// escaping in a URL path, which the client relies on when it builds one.
func ValidRepo(s string) bool {
	owner, name, ok := strings.Cut(s, "/")
	return ok && validOwner(owner) && validName(name)
}

func validOwner(s string) bool {
	if len(s) == 0 || len(s) > maxOwner || !alnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// ValidLogin reports whether s is a GitHub login as the bot's account may
// have: a user's (1..39 letters, digits, '-', '_') or a GitHub App's
// "<slug>[bot]".
func ValidLogin(s string) bool { return validOwner(strings.TrimSuffix(s, "[bot]")) }

func validName(s string) bool {
	if len(s) == 0 || len(s) > maxRepoName || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !alnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// splitRepo checks repo and returns its owner and name.
func splitRepo(op, repo string) (owner, name string, err error) {
	if !ValidRepo(repo) {
		return "", "", vp.Errorf(op, vp.KindInvalid, "repo", "%q is not owner/name (letters, digits, '-', '_' in the owner; also '.' in the name)", clip(repo))
	}
	owner, name, _ = strings.Cut(repo, "/")
	return owner, name, nil
}

func checkNumber(op, field string, n int) error {
	if n < 1 {
		return vp.Errorf(op, vp.KindInvalid, field, "must be 1 or more, got %d", n)
	}
	return nil
}

// checkBody checks a comment or issue body and the marker that must end
// it: the marker is what makes the write idempotent, so a body without it
// would be posted again on every retry.
func checkBody(op, body, marker string) error {
	if n := utf8.RuneCountInString(body); n > MaxBodyChars {
		return vp.Errorf(op, vp.KindTooLarge, "body", "is %d characters; GitHub accepts at most %d", n, MaxBodyChars)
	}
	if strings.TrimSpace(marker) == "" {
		return vp.E(op, vp.KindInvalid, "marker", "is required: an HTML comment such as <!-- vantagepeers:… --> that identifies this write")
	}
	if !hasMarker(body, marker) {
		return vp.E(op, vp.KindInvalid, "marker", "must end the body (its last line), or a retry could not recognise the write it made: a marker elsewhere may be quoted text")
	}
	return nil
}

func checkTitle(op, title string) error {
	if strings.TrimSpace(title) == "" {
		return vp.E(op, vp.KindInvalid, "title", "is required")
	}
	if n := utf8.RuneCountInString(title); n > MaxTitleChars {
		return vp.Errorf(op, vp.KindTooLarge, "title", "is %d characters; GitHub accepts at most %d", n, MaxTitleChars)
	}
	return nil
}

func checkLabels(op string, labels []string) error {
	for i, l := range labels {
		if strings.TrimSpace(l) == "" {
			return vp.Errorf(op, vp.KindInvalid, "labels", "label %d is empty", i)
		}
		if n := utf8.RuneCountInString(l); n > MaxLabelChars {
			return vp.Errorf(op, vp.KindTooLarge, "labels", "label %d is %d characters; GitHub accepts at most %d", i, n, MaxLabelChars)
		}
	}
	return nil
}

func checkAccount(op string, a Account) error {
	if !vp.ValidTenant(a.Tenant) {
		return vp.Errorf(op, vp.KindInvalid, "tenant", "%q is not a valid tenant id", clip(a.Tenant))
	}
	if a.Token == "" {
		return vp.Errorf(op, vp.KindUnauthorized, "token", "tenant %s has no GitHub token; set one with `vantagepeers github set --tenant %s --token-stdin`", a.Tenant, a.Tenant)
	}
	return nil
}

// clip shortens what an error quotes back, so that a megabyte of garbage
// in an argument does not become a megabyte of log.
func clip(s string) string {
	const n = 120
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
