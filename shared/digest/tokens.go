package digest

import (
	"cmp"
	"regexp"
	"slices"
	"strings"
)

// SourcesMarker is the citation footer whose presence clears a record.
const SourcesMarker = "VP-Sources:"

// maxTokens bounds the tokens reported for one record.
const maxTokens = 10

var (
	// A commit SHA: 7–40 lower-case hex characters as a whole word; Tokens
	// also requires a digit and a letter, so "deadbeef" and "1234567" are not one.
	shaRE = regexp.MustCompile(`\b[0-9a-f]{7,40}\b`)
	// An issue or PR reference: '#' and digits, not inside a word ("C#1")
	// nor an HTML entity ("&#123;").
	refRE = regexp.MustCompile(`#[0-9]+\b`)
	// A Convex document id: 32 characters of Convex's base32 alphabet
	// (Crockford, lower case: no i, l, o, u), starting with "k1" or "j".
	convexRE = regexp.MustCompile(`\b(?:k1[0-9a-hjkmnp-tv-z]{30}|j[0-9a-hjkmnp-tv-z]{31})\b`)
	// A decisive verb, any case, as a whole word.
	verbRE = regexp.MustCompile(`(?i)\b(?:merged|deployed|approved|shipped|released|fixed)\b`)
)

var verbs = map[string]bool{"merged": true, "deployed": true, "approved": true, "shipped": true, "released": true, "fixed": true}

// Tokens returns the durable-artifact tokens of text (§14.9) in order of
// appearance, each once, at most 10: commit SHAs, #NNN references, Convex
// ids and decisive verbs (reported in lower case). It does not look at the
// VP-Sources footer: see Flag.
func Tokens(text string) []string {
	type hit struct {
		at  int
		tok string
	}
	var hits []hit
	for _, m := range shaRE.FindAllStringIndex(text, -1) {
		s := text[m[0]:m[1]]
		if strings.ContainsAny(s, "0123456789") && strings.ContainsAny(s, "abcdef") {
			hits = append(hits, hit{m[0], s})
		}
	}
	for _, m := range refRE.FindAllStringIndex(text, -1) {
		if m[0] > 0 && (isWordByte(text[m[0]-1]) || text[m[0]-1] == '&') {
			continue
		}
		hits = append(hits, hit{m[0], text[m[0]:m[1]]})
	}
	for _, m := range convexRE.FindAllStringIndex(text, -1) {
		hits = append(hits, hit{m[0], text[m[0]:m[1]]})
	}
	for _, m := range verbRE.FindAllStringIndex(text, -1) {
		// (?i) also folds non-ASCII letters (U+017F is an s): keep ASCII spellings.
		if v := strings.ToLower(text[m[0]:m[1]]); verbs[v] {
			hits = append(hits, hit{m[0], v})
		}
	}
	if len(hits) == 0 {
		return nil
	}
	slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(a.at, b.at) })
	seen := make(map[string]bool, len(hits))
	var out []string
	for _, h := range hits {
		if seen[h.tok] {
			continue
		}
		seen[h.tok] = true
		out = append(out, h.tok)
		if len(out) == maxTokens {
			break
		}
	}
	return out
}

// Flag returns the tokens of text when it claims a durable artifact without
// citing its sources (no "VP-Sources:"), or nil.
func Flag(text string) []string {
	if strings.Contains(text, SourcesMarker) {
		return nil
	}
	return Tokens(text)
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}
