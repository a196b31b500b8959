package local

import (
	"strings"
	"unicode"
)

// Long documents are indexed as overlapping passages and a document scores
// as its best passage ("MaxP"; Callan 1994, Dai & Callan 2019). Whole-
// document BM25 dilutes a question answered by two lines of a long text
// with everything else the text says; a passage keeps the answer's words
// together. A document short enough to be one passage is indexed whole.
const (
	// passageWords is the target length of a passage, in words.
	passageWords = 128
	// maxPassages bounds the passages of one document; the last one takes
	// the rest of the text.
	maxPassages = 1 << passageBits
	passageBits = 10
)

// Passages splits text into passages of about passageWords words that
// overlap by half. Passages start and end at line breaks where the lines
// allow it, else at sentence ends, else inside a sentence. A text of up to
// passageWords*3/2 words is one passage: itself.
func Passages(text string) []string {
	units := splitUnits(text)
	total := 0
	for _, u := range units {
		total += u.words
	}
	if total <= passageWords*3/2 || len(units) < 2 {
		return []string{text}
	}
	var out []string
	for start := 0; start < len(units); {
		words, end := 0, start
		for end < len(units) && (words == 0 || words+units[end].words <= passageWords) {
			words += units[end].words
			end++
		}
		if len(out) == maxPassages-1 {
			end = len(units)
		}
		out = append(out, join(units[start:end]))
		if end == len(units) {
			break
		}
		// Next passage starts half-way through this one.
		half, next := 0, start
		for next < end-1 && half+units[next].words <= words/2 {
			half += units[next].words
			next++
		}
		if next == start {
			next = start + 1
		}
		start = next
	}
	return out
}

type unit struct {
	text  string
	words int
}

func join(us []unit) string {
	var b strings.Builder
	for i, u := range us {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(u.text)
	}
	return b.String()
}

// splitUnits cuts text into lines, lines longer than a passage into
// sentences, and sentences longer than a passage into runs of
// passageWords/2 words.
func splitUnits(text string) []unit {
	var out []unit
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		n := countWords(line)
		if n <= passageWords {
			out = append(out, unit{line, n})
			continue
		}
		for _, s := range sentences(line) {
			n := countWords(s)
			if n <= passageWords {
				out = append(out, unit{s, n})
				continue
			}
			f := strings.Fields(s)
			for i := 0; i < len(f); i += passageWords / 2 {
				j := min(i+passageWords/2, len(f))
				out = append(out, unit{strings.Join(f[i:j], " "), countWords(strings.Join(f[i:j], " "))})
			}
		}
	}
	return out
}

// sentences splits after ". ", "! ", "? " and their kin.
func sentences(s string) []string {
	var out []string
	start := 0
	rs := []rune(s)
	for i := 0; i+1 < len(rs); i++ {
		switch rs[i] {
		case '.', '!', '?', '。', '！', '？':
			if unicode.IsSpace(rs[i+1]) {
				out = append(out, strings.TrimSpace(string(rs[start:i+1])))
				start = i + 1
			}
		}
	}
	if rest := strings.TrimSpace(string(rs[start:])); rest != "" {
		out = append(out, rest)
	}
	return out
}

// countWords counts runs of letters and digits, as the tokenizer does.
func countWords(s string) int {
	n, in := 0, false
	for _, r := range s {
		w := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		if w && !in {
			n++
		}
		in = w
	}
	return n
}
