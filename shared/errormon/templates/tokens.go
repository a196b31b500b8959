package templates

import (
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
)

// A message's tokens are the whitespace-separated chunks of its
// parameterised form (fingerprint.Message): ids, numbers, e-mails, URLs
// and the like are already placeholders there, so what is left to learn
// is the words that vary (user names, host names, file names).
//
// A template is a token list in which some positions are variable; a
// variable is stored as the empty string, which no token of a
// parameterised message is (Message collapses whitespace and never
// writes an empty chunk), so that a literal "<*>" in a log line stays a
// literal.

// maxTokens bounds a message's token list. Message's output is at most
// 1024 bytes, so at most 512 tokens; the rest would be cut anyway.
const maxTokens = 512

// class is what a token can be generalised as.
type class uint8

const (
	// classWord: letters only, maybe ending in punctuation ("user",
	// "failed:", "Bye"). Two templates that differ by a word are more
	// often two causes than one ("opened" and "closed"), so a word
	// conflict costs the most.
	classWord class = iota
	// classValue: anything else that is not hard: it has a digit, a dot,
	// a slash, an '=' or a placeholder in it ("bglio716",
	// "/udev/vcs2", "name=android,", "proxy.example.com:<int>"), as
	// names of things do.
	classValue
	// classHard: a token whose change is a change of cause, never a
	// variable: a number the parameteriser kept (an HTTP status, an exit
	// code, an errno: "status 404" and "status 500" are two bugs), or a
	// quoted identifier it kept ("'email'" and "'name'" are two
	// missing fields).
	classHard
)

// tokenize returns the tokens of msg's parameterised form, with three
// rewrites that make one template's events one length: a quantity and
// its unit are one token ("<float> KB," and "<float> B," differ by a
// value, not by a word); a quantity restated in parentheses ("<int>
// bytes (<float> KB)") is dropped; and a run of one repeated token that
// holds a placeholder is written once ("blk_<int> blk_<int> blk_<int>"
// is a list of ids, whose length is data). At most maxTokens are kept.
func tokenize(msg string) []string { return tokens(fingerprint.Message(keepBools(msg))) }

// tokens cuts a parameterised message into tokens, as tokenize does.
func tokens(m string) []string {
	if m == "" {
		return nil
	}
	out := make([]string, 0, strings.Count(m, " ")+1)
	for t := range strings.SplitSeq(m, " ") {
		n := len(out)
		if n > 0 && unit(t) && endsWithNumber(out[n-1]) {
			t = out[n-1] + " " + t
			out = out[:n-1]
			n--
			if restated(t) {
				continue
			}
		}
		if n > 0 && out[n-1] == t && strings.IndexByte(t, '<') >= 0 {
			continue
		}
		if len(out) == maxTokens {
			break
		}
		out = append(out, t)
	}
	return out
}

// units: the unit abbreviations that follow a quantity as a word of
// their own, in any log ("1.2 KB", "500 ms"); a unit in upper case of up
// to three letters is one too.
var units = map[string]bool{"ms": true, "s": true, "sec": true, "secs": true, "min": true, "mins": true,
	"us": true, "µs": true, "ns": true, "h": true, "hr": true, "kb": true, "mb": true, "gb": true}

// unit: t is a unit, maybe followed by closing punctuation.
func unit(t string) bool {
	t = strings.TrimRight(t, ",;:.)]}")
	if units[t] {
		return true
	}
	if len(t) == 0 || len(t) > 3 {
		return false
	}
	upper := false
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
		default:
			return false
		}
	}
	return upper
}

// endsWithNumber: t ends with a number's placeholder.
func endsWithNumber(t string) bool {
	return strings.HasSuffix(t, "<int>") || strings.HasSuffix(t, "<float>")
}

// restated: a quantity in parentheses of its own, "(<float> KB)".
func restated(t string) bool {
	return (strings.HasPrefix(t, "(<int>") || strings.HasPrefix(t, "(<float>")) && strings.HasSuffix(t, ")")
}

// keepBools upper-cases a boolean that follows '=' or ':', which the
// parameteriser writes <bool> (a flag's value): which way a flag went is
// as often the cause as not ("isOverlap:true", "ret:false"), and a
// position has two such values at most, so that learning could never
// tell a variable from two templates there. Kept, it splits.
func keepBools(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '=' && c != ':' {
			continue
		}
		k := i + 1
		for k < len(s) && s[k] == ' ' {
			k++
		}
		for _, w := range [...]string{"true", "false", "True", "False"} {
			if strings.HasPrefix(s[k:], w) && (k+len(w) == len(s) || !isWordByte(s[k+len(w)])) {
				if b == nil {
					b = []byte(s)
				}
				for j := k; j < k+len(w); j++ {
					b[j] &^= 0x20
				}
			}
		}
	}
	if b == nil {
		return s
	}
	return string(b)
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c >= 0x80
}

// classify returns a token's class.
func classify(t string) class {
	// A quoted identifier the parameteriser kept, maybe after an opening
	// bracket: "'email'", "(reading 'map')". A placeholder for a quoted
	// value (<quoted_str>) has no quote in it.
	k := 0
	for k < len(t) && (t[k] == '(' || t[k] == '[' || t[k] == '{') {
		k++
	}
	if k < len(t) && (t[k] == '\'' || t[k] == '"' || t[k] == '`') {
		return classHard
	}
	// A bare number: the parameteriser writes numbers as <int> unless
	// they are the cause ("404", "[Errno 111]", "137").
	digits, letters, other := 0, 0, 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= 0x80:
			letters++
		default:
			other++
		}
	}
	if digits > 0 && letters == 0 {
		return classHard
	}
	if digits == 0 && letters > 0 && (trailingPunct(t) || keyWord(t)) && !hexWord(t) {
		return classWord
	}
	return classValue
}

// hexWord: the value of t (after '=' or ':') is eight hex digits or more
// that happen to be letters ("mask=ffffffff"), which no word is.
func hexWord(t string) bool {
	t = t[strings.LastIndexAny(t, "=:")+1:]
	t = strings.TrimRight(t, ",;.)]}")
	if len(t) < 8 {
		return false
	}
	for i := 0; i < len(t); i++ {
		if c := t[i] | 0x20; c < 'a' || c > 'f' {
			return false
		}
	}
	return true
}

// keyWord: a key and a word ("user=root", "ret:false"), whose value is a
// word as much as a bare word is.
func keyWord(t string) bool {
	k := strings.IndexAny(t, "=:")
	return k > 0 && k < len(t)-1 && trailingPunct(t[:k]) && trailingPunct(t[k+1:])
}

// trailingPunct: t is letters (and '-' or '_' or '\” between them)
// followed by at most two bytes of sentence punctuation.
func trailingPunct(t string) bool {
	e := len(t)
	for n := 0; n < 2 && e > 0 && strings.IndexByte(".,;:!?)]", t[e-1]) >= 0; n++ {
		e--
	}
	for i := 0; i < e; i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || (i > 0 && (c == '-' || c == '_'))) {
			return false
		}
	}
	return e > 0
}

// keyable: a first token that names the template, as a first word
// usually does ("Invalid", "session", "BLOCK*" excepted): letters, '-'
// and '_', and a trailing colon. Templates whose first tokens differ this
// way never merge (Drain's prefix tree); a first token that is a value
// (a host, an address) or a placeholder is no key.
func keyable(t string) bool {
	t = strings.TrimSuffix(t, ":")
	if len(t) == 0 || len(t) > 64 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || (i > 0 && (c == '-' || c == '_'))) {
			return false
		}
	}
	return true
}
