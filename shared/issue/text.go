package issue

import (
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Text that reaches agents (an issue's title and body) is someone else's
// words: HTML comments (invisible on GitHub, read by a model) and
// invisible or bidirectional control characters are removed, the way
// GitHub's own coding agent reads issues.

var htmlComment = regexp.MustCompile(`(?s)<!--.*?(-->|$)`)

// Sanitize returns s without HTML comments and invisible characters, cut
// to max bytes on a rune boundary.
func Sanitize(s string, max int) string {
	s = htmlComment.ReplaceAllString(s, "")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t':
			return r
		case r == utf8.RuneError, unicode.Is(unicode.Cf, r), unicode.IsControl(r),
			unicode.Is(unicode.Co, r), r >= 0xE0000 && r <= 0xE007F: // format, control, private use, tags
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if len(s) > max {
		n := max
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n]
	}
	return s
}

// A task title names an issue as "#282" (an issue of a repository mapped
// to the task's project) or "owner/repo#282" (that repository), in any
// case, with or without "fixes". The number must stand alone: "#2820" is
// not "#282", "a#282" is not a reference.
var issueRefPattern = regexp.MustCompile(`(?:^|[^A-Za-z0-9_#/])((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100})?)#([1-9][0-9]{0,9})\b`)

// Reference is an issue named in a text; Repo is "" for a bare "#N".
type Reference struct {
	Repo   string
	Number int
}

// References returns the issues a title names, each once, in order.
func References(title string) []Reference {
	var out []Reference
	for _, m := range issueRefPattern.FindAllStringSubmatch(title, 20) {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			continue
		}
		r := Reference{Repo: strings.ToLower(m[1]), Number: n}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// NamesIssue says whether a task title names an issue: the predicate the
// task service is given (task.Service.WatchFinished), so that completing
// such a task outside any mission publishes an event. It must be cheap.
func NamesIssue(t vp.Task) bool {
	return strings.Contains(t.Title, "#") && len(References(t.Title)) > 0
}

// A commit SHA is 7 to 40 hex digits with at least one digit and one
// letter among a–f ("1234567" is a number, "deadbeef" a word).
var shaPattern = regexp.MustCompile(`(?i)\b[0-9a-f]{7,40}\b`)

func isSHA(s string) bool {
	if len(s) < 7 || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

func plausibleSHA(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(strings.ToLower(s), "abcdef")
}

// CommitSHAs returns the commit SHAs a completion note carries, lower-case,
// each once.
func CommitSHAs(note string) []string {
	var out []string
	for _, m := range shaPattern.FindAllString(note, maxLinks) {
		m = strings.ToLower(m)
		if plausibleSHA(m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

var fixWord = regexp.MustCompile(`(?i)\bfix(?:ed|es)?\b`)

// saysFixed: the note says fix, fixed or fixes, or carries a commit.
func saysFixed(note string) bool { return fixWord.MatchString(note) || len(CommitSHAs(note)) > 0 }

var prURL = regexp.MustCompile(`^https://github\.com/([A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100})/pull/([1-9][0-9]{0,9})$`)

// parsePRURL splits https://github.com/owner/repo/pull/N.
func parsePRURL(u string) (repo string, number int, err error) {
	m := prURL.FindStringSubmatch(strings.TrimSpace(u))
	if m == nil {
		return "", 0, errors.New("not a pull request URL")
	}
	n, err := strconv.Atoi(m[2])
	return strings.ToLower(m[1]), n, err
}

func isCondition(err error) bool { return errors.Is(err, store.ErrConditionFailed) }
