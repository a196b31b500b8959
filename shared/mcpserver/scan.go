package mcpserver

import (
	"encoding/json"
	"strconv"
	"strings"
)

// MaxArgumentDepth bounds how deeply a call's arguments nest: the
// arguments object itself is level 1. No tool takes more than a few
// levels; the bound keeps a hostile argument from costing the decoder
// (whose own limit, 10,000, would fail the whole request as "not JSON").
const MaxArgumentDepth = 64

// JSONProblem is what ScanJSON found wrong with a JSON text: a lone
// UTF-16 surrogate escape, or nesting past the depth limit. Path locates
// it ("relations[2].type"); Depth is set for a depth problem.
type JSONProblem struct {
	Path      string
	Depth     int // the limit passed, or 0 for a surrogate
	Surrogate string
}

// ScanJSON looks through the JSON text b, before any decoder sees it, for
// what encoding/json would silently accept or misreport: an escaped lone
// surrogate ("\ud800" not followed by a low surrogate escape, or a lone
// "\udc00"), which a decoder replaces with U+FFFD; and containers nested
// deeper than maxDepth (the root is level 1), which the decoder reports
// only as a syntax error. With surrogates false it looks for depth only.
// It returns the first problem, or nil. Text that is not JSON at all is
// left to the decoder: the scan only ever reports one of the two
// problems, and never reads past b.
func ScanJSON(b []byte, maxDepth int, surrogates bool) *JSONProblem {
	var stack []frame
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{', '[':
			if n := len(stack); n > 0 {
				stack[n-1].expectKey = false
			}
			stack = append(stack, frame{object: c == '{', expectKey: c == '{'})
			if len(stack) > maxDepth {
				return &JSONProblem{Path: pathOf(stack[:len(stack)-1]), Depth: maxDepth}
			}
		case '}', ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
		case ',':
			if n := len(stack); n > 0 {
				if stack[n-1].object {
					stack[n-1].expectKey = true
				} else {
					stack[n-1].index++
				}
			}
		case '"':
			end, bad := scanString(b, i)
			if !surrogates {
				bad = ""
			}
			n := len(stack)
			if n > 0 && stack[n-1].object && stack[n-1].expectKey {
				stack[n-1].key, stack[n-1].hasKey = keyText(b[i:end]), true
				stack[n-1].expectKey = false
				if bad != "" {
					// The key as sent: decoded, it would show U+FFFD.
					stack[n-1].key = strings.Trim(string(b[i:min(end, i+66)]), `"`)
					return &JSONProblem{Path: pathOf(stack), Surrogate: bad}
				}
			} else if bad != "" {
				return &JSONProblem{Path: pathOf(stack), Surrogate: bad}
			}
			i = end - 1
		}
	}
	return nil
}

type frame struct {
	object    bool
	expectKey bool
	hasKey    bool
	key       string
	index     int
}

// pathOf renders the location of the innermost value: "a.b[2].c".
func pathOf(stack []frame) string {
	var b strings.Builder
	for _, f := range stack {
		switch {
		case f.object && f.hasKey:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		case !f.object:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}

// keyText decodes a quoted key; a key that does not decode is shown raw.
func keyText(q []byte) string {
	var s string
	if json.Unmarshal(q, &s) != nil {
		s = strings.Trim(string(q), `"`)
	}
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return s
}

// scanString reads the string starting at the quote b[start] and returns
// the index just past its closing quote (len(b) when unterminated), and
// the first lone surrogate escape in it ("\ud800"), if any.
func scanString(b []byte, start int) (end int, bad string) {
	for i := start + 1; i < len(b); i++ {
		switch b[i] {
		case '"':
			return i + 1, bad
		case '\\':
			if i+1 >= len(b) {
				return len(b), bad
			}
			if b[i+1] != 'u' {
				i++
				continue
			}
			r, ok := hex4(b, i+2)
			if !ok {
				i++
				continue
			}
			switch {
			case r >= 0xD800 && r <= 0xDBFF:
				if i+7 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
					if lo, ok := hex4(b, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
						i += 11 // the pair
						continue
					}
				}
				if bad == "" {
					bad = string(b[i : i+6])
				}
			case r >= 0xDC00 && r <= 0xDFFF:
				if bad == "" {
					bad = string(b[i : i+6])
				}
			}
			i += 5
		}
	}
	return len(b), bad
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
