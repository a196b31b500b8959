// Package analysis turns text into search terms the same way everywhere:
// the query parser of search/local and the model-free embedder of
// embed/local use it, so that a word is a word to both.
//
// Tokens are maximal runs of letters and digits after Unicode
// compatibility decomposition, with diacritics removed and letters folded
// to lower case — the rules of SQLite FTS5's unicode61 tokenizer with
// remove_diacritics 2, so that a token produced here is a token FTS5 knows.
package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokens splits text into lower-case tokens without diacritics. Any rune
// that is not a letter, a digit or a combining mark separates tokens, so
// punctuation, quotes, operators and symbols never reach a query.
func Tokens(text string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		for i := 0; i < len(text); i++ {
			c := text[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
				b.WriteByte(c)
			case c >= 'A' && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			default:
				flush()
			}
		}
		flush()
		return out
	}
	for _, r := range norm.NFKD.String(text) {
		switch {
		case unicode.Is(unicode.Mn, r):
			// a diacritic: dropped, it does not split the word
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsNumber(r):
			b.WriteRune(unicode.ToLower(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

// IsStopWord reports whether a (lower-case) token is an English function
// word that carries little meaning on its own.
func IsStopWord(tok string) bool {
	_, ok := stopWords[tok]
	return ok
}

// Content returns the tokens of text that carry meaning: stop words and
// one-letter tokens (the "s" of "Anna's") are dropped; digits are kept.
func Content(text string) []string {
	toks := Tokens(text)
	out := toks[:0]
	for _, t := range toks {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out
}

func keep(t string) bool {
	if IsStopWord(t) {
		return false
	}
	if len(t) == 1 && (t[0] < '0' || t[0] > '9') {
		return false
	}
	return true
}

// stopWords is a conventional English stop list (function words, auxiliary
// verbs, pronouns, very common adverbs). Content words such as names,
// nouns and most verbs are never in it.
var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`
a about above after again against all also am an and any are aren as at
be because been before being below between both but by
can cannot could couldn
d did didn do does doesn doing don down during
each either else ever every
few for from further
had hadn has hasn have haven having he her here hers herself him himself his how however
i if in into is isn it its itself
just
ll
m me might more most must mustn my myself
no nor not now
of off on once only or other ought our ours ourselves out over own
re
s same shall shan she should shouldn so some such
t than that the their theirs them themselves then there these they this those through to too
under until up upon us
ve very
was wasn we were weren what when where whether which while who whom whose why will with won would wouldn
y yet you your yours yourself yourselves
`) {
		m[w] = struct{}{}
	}
	return m
}()

// Compounds returns the hyphenated words of text joined into one token
// ("de-stress" -> "destress", "e-mail" -> "email"), lower case, in order:
// Tokens splits them, and the same word is often written both ways.
func Compounds(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		if text[i] != '-' || i == 0 || i+1 >= len(text) || !isWordByte(text[i-1]) || !isWordByte(text[i+1]) {
			continue
		}
		start := i - 1
		for start > 0 && isWordByte(text[start-1]) {
			start--
		}
		end := i + 1
		for end < len(text) && (isWordByte(text[end]) || text[end] == '-' && end+1 < len(text) && isWordByte(text[end+1])) {
			end++
		}
		if start > 0 && text[start-1] >= utf8.RuneSelf {
			i = end
			continue // part of a non-ASCII word: Tokens' rules apply
		}
		out = append(out, strings.Join(Tokens(text[start:end]), ""))
		i = end
	}
	return out
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}
