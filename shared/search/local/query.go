package local

import (
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/search/analysis"
)

// maxTerms bounds the terms of one query (a pasted page stays a query).
const maxTerms = 64

// MatchExpr turns user text into a safe FTS5 MATCH expression, or "" when
// the text has no searchable word. User syntax is never passed through:
// the text is split into words (analysis.Tokens), each word is quoted, and
// the words are OR-ed so that BM25 ranks documents by how many of the
// query's words they hold and how rare those are, instead of requiring all
// of them. Stop words are dropped unless the query has nothing else
// ("the who"); repeated words count once.
func MatchExpr(text string) string {
	toks := analysis.Tokens(text)
	terms := make([]string, 0, len(toks))
	seen := map[string]bool{}
	for _, t := range toks {
		if analysis.IsStopWord(t) || len(t) == 1 && (t[0] < '0' || t[0] > '9') {
			continue
		}
		if !seen[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	if len(terms) == 0 {
		for _, t := range toks {
			if !seen[t] {
				seen[t] = true
				terms = append(terms, t)
			}
		}
	}
	if len(terms) > maxTerms {
		terms = terms[:maxTerms]
	}
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteString(" OR ")
		}
		// Tokens hold only letters and digits; quoting makes FTS5 read
		// keywords such as NEAR, AND or OR as plain words.
		b.WriteByte('"')
		b.WriteString(t)
		b.WriteByte('"')
	}
	return b.String()
}
