// Package ghmd renders text the bot did not compose itself (log messages,
// stacks, function names, routes, deployment and orchestrator names, issue
// titles, agent notes, commit messages) into GitHub-flavoured Markdown that
// GitHub shows as text and nothing else: no @mention, link, autolink (bare
// URL, www., e-mail), issue or commit reference, image, raw HTML, emphasis
// or table cell comes out of it. Everything the bot posts to GitHub that
// holds such text goes through here, so that there is one place to review.
//
// The only constructs GitHub leaves inert are code: a fenced code block for
// text of several lines (Block) and a code span for text within a line
// (Inline, Cell). Backslash escapes are not enough: GitHub finds mentions
// and references in the rendered text, after the escapes are gone.
package ghmd

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxTitleChars bounds the titles Title returns: GitHub accepts 256, and a
// title longer than a line is unreadable in the issue list anyway.
const MaxTitleChars = 200

// Empty is what Inline and Cell show for an empty text.
const Empty = "—"

// Block returns s, cut to max characters, as a fenced code block that ends
// with a newline. The fence (backticks, or tildes when s has longer runs of
// backticks than of tildes) is longer than any run of its character in s,
// so no line of s can close it, and at most half as long as s plus one;
// control and bidirectional formatting characters are removed (tabs and
// newlines kept) and every line ending becomes "\n".
// The block must start at the beginning of a line outside any list or
// quote: the caller leaves a blank line before it.
func Block(s string, max int) string {
	s = Clip(clean(s, true), max)
	c, n := byte('`'), longestRun(s, '`')
	if t := longestRun(s, '~'); t < n {
		c, n = '~', t
	}
	fence := strings.Repeat(string(c), max3(n+1))
	var b strings.Builder
	b.Grow(len(s) + 2*len(fence) + 3)
	b.WriteString(fence)
	b.WriteByte('\n')
	b.WriteString(s)
	if s != "" && !strings.HasSuffix(s, "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(fence)
	b.WriteByte('\n')
	return b.String()
}

// Inline returns s, cut to max characters, as inert text within a line of
// a paragraph: unchanged when it is only letters, digits and single spaces
// and names nothing GitHub would link (a word of 7 or more hex digits may
// be a commit), otherwise a code span. Line breaks and runs of white space
// become one space, control and bidirectional formatting characters are
// removed. Inside a GFM table use Cell.
func Inline(s string, max int) string { return inline(s, max, false) }

// Cell is Inline for a cell of a GFM table, always a code span (a cell
// holds a name: a function, a route, a type): a pipe, which splits cells
// even inside a code span, is escaped as \| (which GitHub shows as |), and
// the text is on one line, since a line break ends the row.
func Cell(s string, max int) string { return inline(s, max, true) }

func inline(s string, max int, cell bool) string {
	s = Clip(oneLine(s), max)
	if s == "" {
		return Empty
	}
	if !cell && plain(s) {
		return s
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if cell {
		s = strings.ReplaceAll(s, "|", `\|`)
	}
	if s[0] == '`' || s[len(s)-1] == '`' {
		// One space on each side is stripped by the parser, and lets s
		// start or end with a backtick without joining the fence.
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// Title returns s as an issue title: one line, without control or
// bidirectional formatting characters, with every '@' and '#' replaced by
// their full-width forms '＠' and '＃' (U+FF20, U+FF03) and the hyphen of
// "GH-<digit>" by U+2010, so that no login is mentioned and no issue is
// referenced (GitHub links references in titles, and a reference to
// another repository's issue shows in its timeline), cut to max
// characters (at most MaxTitleChars; GitHub's own limit is 256). An empty
// result is Empty.
func Title(s string, max int) string {
	if max <= 0 || max > MaxTitleChars {
		max = MaxTitleChars
	}
	s = titleEscapes.Replace(oneLine(s))
	s = ghRef.ReplaceAllString(s, "${1}\u2010${2}")
	if s = Clip(s, max); s == "" {
		return Empty
	}
	return s
}

var (
	titleEscapes = strings.NewReplacer("@", "＠", "#", "＃")
	ghRef        = regexp.MustCompile(`(?i)\b(gh)-([0-9])`)
)

// Clip cuts s to at most n characters (runes), ending a cut text with "…".
func Clip(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n || utf8.RuneCountInString(s) <= n {
		return s
	}
	k := 0
	for i := range s {
		if k == n-1 {
			return s[:i] + "…"
		}
		k++
	}
	return s
}

// oneLine cleans s and collapses every run of white space (line breaks
// included) into one space, trimmed at both ends.
func oneLine(s string) string { return strings.Join(strings.Fields(clean(s, false)), " ") }

// clean removes the characters no rendering should carry: C0 and C1
// controls (but tab, and newline when keepNewlines), DEL, format
// characters (bidirectional overrides and isolates, zero-width joiners,
// the BOM, tag characters), line and paragraph separators, private-use
// characters and invalid UTF-8. "\r\n" and a lone "\r" become "\n" (or a
// space).
func clean(s string, keepNewlines bool) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	nl := rune(' ')
	if keepNewlines {
		nl = '\n'
	}
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029':
			return nl
		case r == '\t':
			return r
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Co, r),
			unicode.Is(unicode.Cs, r), r >= 0xE0000 && r <= 0xE007F:
			return -1
		}
		return r
	}, s)
}

// plain reports whether s can stand in a paragraph as it is: letters,
// digits and single spaces only, and no word GitHub could take for a
// commit SHA.
func plain(s string) bool {
	word, hex := 0, true
	for i, r := range s {
		switch {
		case r == ' ':
			if i == 0 || s[i-1] == ' ' || shaLike(word, hex) {
				return false
			}
			word, hex = 0, true
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
		default:
			return false
		}
		word++
		hex = hex && strings.ContainsRune("0123456789abcdefABCDEF", r)
	}
	return !strings.HasSuffix(s, " ") && !shaLike(word, hex)
}

// shaLike: GitHub links a word of 7 or more hex digits to the commit it
// abbreviates, when there is one ("deadbeef" included).
func shaLike(n int, hex bool) bool { return hex && n >= 7 }

func longestRun(s string, c byte) int {
	best, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			best = max(best, run)
		} else {
			run = 0
		}
	}
	return best
}

func max3(n int) int { return max(n, 3) }
