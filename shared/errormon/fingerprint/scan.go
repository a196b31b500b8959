package fingerprint

import "strings"

// The scanner reads an atom (a run of text holding no whitespace and no
// separator, see isSep) token by token. At each token start it tries
// every kind of variable part anchored there and takes the longest
// match that ends at a word boundary; with none it writes a literal
// word, or one punctuation byte, and moves on.
//
// This is what keeps Message idempotent. A second pass reads the first
// one's output, in which the text between two placeholders is a copy of
// input the first pass read as literals. The second pass meets those
// literals at the same token starts, with the same output before them
// (context is read from the output, never from the input), and can only
// find matches the first pass tried: a match ending where a placeholder
// now begins ended, in the first pass, before a word byte, which is no
// boundary; and a matcher that tries a run (an id, a host name) tries
// every prefix of it that ends at a boundary, of which the second pass's
// shorter run is one. The rest are rules for the few places where a
// placeholder could change what decided the first pass: right after a
// placeholder only a literal is read (its unit, as in <int>MB, was never
// a token start); an IPv6 address ending in "::" is not followed by '<',
// and one starting "::" does not follow a quote (whose closing depends on
// the byte after it); and the look-aheads (a reason phrase after a
// status, a number after a month) skip whitespace as the tokenizer does
// and match whole words.

// Bounds on the look-ahead of a match, which keep a pathological atom
// (a long run of dotted or hyphenated words) linear: an e-mail's local
// part and a host name are at most as long as RFC 5321 and RFC 1035
// allow.
const (
	maxLocal = 64
	maxHost  = 253
	maxIDRun = 256
)

// isWordByte: the bytes words are made of. Bytes of multi-byte UTF-8
// sequences count as letters, so that a word in another script, or
// "150µs", stays whole.
func isWordByte(c byte) bool { return isAlnum(c) || c >= 0x80 }

// bound: a match may end at e.
func bound(s string, e int) bool { return e >= len(s) || !isWordByte(s[e]) }

func at(s string, i int, c byte) bool { return i < len(s) && s[i] == c }

// last is the last byte written, 0 at the start.
func (p *param) last() byte {
	if len(p.out) == 0 {
		return 0
	}
	return p.out[len(p.out)-1]
}

// afterPlaceholder: the output ends with a placeholder ("<int>"), or
// with text spelt like one, which a second pass cannot tell apart.
func (p *param) afterPlaceholder() bool {
	o := p.out
	if len(o) < 4 || o[len(o)-1] != '>' {
		return false
	}
	for k := len(o) - 2; k >= 0 && k >= len(o)-13; k-- {
		c := o[k]
		if c == '<' {
			return k < len(o)-3
		}
		if !isLower(c) && c != '_' {
			return false
		}
	}
	return false
}

// atom writes an atom. rest is the text after it, for the rules that
// look ahead.
func (p *param) atom(s, rest string) {
	p.hasAt = strings.IndexByte(s, '@') >= 0
	for q := 0; q < len(s); {
		q = p.token(s, q, rest)
	}
}

// token writes the token that starts at q and returns its end.
func (p *param) token(s string, q int, rest string) int {
	if p.afterPlaceholder() {
		return p.literal(s, q)
	}
	c := s[q]
	if !isWordByte(c) {
		// Only a signed number and an IPv6 address starting "::" start
		// with punctuation, and only where a word does not end (in
		// "item-42" the '-' is a hyphen).
		if !isWordByte(p.last()) {
			if (c == '-' || c == '+') && q+1 < len(s) && isDigit(s[q+1]) {
				if e, ph, unit := numberAt(s, q); e > 0 {
					return p.number(s, q, e, ph, unit, rest)
				}
			}
			// Not after a quote: a closing quote is one because of the
			// byte after it, which must stay a ':' for a second pass.
			if c == ':' && at(s, q+1, ':') && quoteIndex(p.last()) < 0 {
				if e := ipv6At(s, q, rest); e > 0 {
					p.out = append(p.out, phIP...)
					return e
				}
			}
		}
		p.out = append(p.out, c)
		return q + 1
	}

	w := q // the word: the run of word bytes at q
	for w < len(s) && isWordByte(s[w]) {
		w++
	}
	word := s[q:w]
	end, ph := 0, ""
	take := func(e int, h string) {
		if e > end {
			end, ph = e, h
		}
	}
	if len(s)-q >= 36 && s[q+8] == '-' && isUUID(s[q:q+36]) && bound(s, q+36) {
		take(q+36, phUUID)
	}
	if len(s)-q >= 55 && s[q+2] == '-' && isTraceparent(s[q:q+55]) && bound(s, q+55) {
		take(q+55, phTraceparent)
	}
	var numEnd int
	var numPh, unit string
	if isDigit(c) {
		take(dateAt(s, q), phDate)
		take(clockAt(s, q, true, true), phTime)
		take(ipv4At(s, q), phIP)
		numEnd, numPh, unit = numberAt(s, q)
	}
	if isHex(c) && w < len(s) && s[w] == ':' {
		take(ipv6At(s, q, rest), phIP)
	}
	if p.hasAt {
		take(emailAt(s, q), phEmail)
	}
	if (len(word) >= 7 && hexRun(word, shapeOf(word))) || (len(word) > 2 && word[0] == '0' && (word[1] == 'x' || word[1] == 'X') && allHex(word[2:])) {
		take(w, phHex)
	}
	number := false
	if numEnd > end {
		end, number = numEnd, true
	}
	// A generated id is at least 8 bytes, in one word or joined by '-'
	// or '_'; most words are shorter and stand alone.
	if len(word) >= 8 || (w < len(s) && (s[w] == '-' || s[w] == '_')) {
		if e := idRunAt(s, q); e > end {
			end, ph, number = e, phID, false
		}
	}
	if w < len(s) && (s[w] == '.' || s[w] == '-') {
		if e := hostAt(s, q, true); e > 0 && withPort(s, e) > end {
			end, ph, number = withPort(s, e), phHost, false
		}
	}
	switch {
	case number:
		return p.number(s, q, end, numPh, unit, rest)
	case end > 0:
		p.out = append(p.out, ph...)
		return end
	}
	return p.word(s, q, w, rest)
}

// literal writes the word at q as it is, or the one byte there.
func (p *param) literal(s string, q int) int {
	w := q
	for w < len(s) && isWordByte(s[w]) {
		w++
	}
	if w == q {
		w = q + 1
	}
	p.out = append(p.out, s[q:w]...)
	return w
}

// word writes the plain word s[q:w], but for the two that are variable
// by their place: a boolean after '=' or ':' (a flag's value, in logfmt
// or JSON; in prose, "must be true", it is a word), and a month or
// weekday name next to a number (part of a date).
func (p *param) word(s string, q, w int, rest string) int {
	word := s[q:w]
	switch {
	case p.afterAssign() && (word == "true" || word == "false" || word == "True" || word == "False"):
		p.out = append(p.out, phBool...)
	case w == len(s) && dateWord(word) && nextIsNumber(rest):
		p.out = append(p.out, phDate...)
	default:
		p.out = append(p.out, word...)
	}
	return w
}

// number writes the number s[q:e]: its placeholder and its unit, or the
// digits themselves when they are a code (see keepCode).
func (p *param) number(s string, q, e int, ph, unit string, rest string) int {
	if ph == phInt && unit == "" {
		after := rest
		if e < len(s) {
			after = s[e:]
		}
		if p.keepCode(s[q:e], after) {
			p.out = append(p.out, s[q:e]...)
			return e
		}
	}
	p.out = append(p.out, ph...)
	p.out = append(p.out, unit...)
	return e
}

// numberAt reads a number at q (a digit, or a sign and a digit): an int,
// a float, a duration (150ms, 2.5s, 1h2m3s), or an int or float with a
// unit of one to four letters (512MB, 3x), whose unit is kept. It
// returns the longest that ends at a boundary, 0 if none.
func numberAt(s string, q int) (end int, ph, unit string) {
	i := q
	if s[i] == '-' || s[i] == '+' {
		i++
	} else if e := durationAt(s, q); e > 0 {
		end, ph = e, phDuration
	}
	d1 := digitsAt(s, i)
	try := func(e int, h string, u string) {
		if e > end && bound(s, e) {
			end, ph, unit = e, h, u
		}
	}
	withUnit := func(e int, h string) {
		try(e, h, "")
		l := e
		for l < len(s) && l-e <= 4 && isAlpha(s[l]) {
			l++
		}
		if l > e && l-e <= 4 {
			try(l, h, s[e:l])
		}
	}
	withUnit(d1, phInt)
	if at(s, d1, '.') && d1+1 < len(s) && isDigit(s[d1+1]) {
		d2 := digitsAt(s, d1+1)
		withUnit(d2, phFloat)
		d1 = d2
	}
	if (at(s, d1, 'e') || at(s, d1, 'E')) && d1+1 < len(s) {
		x := d1 + 1
		if s[x] == '+' || s[x] == '-' {
			x++
		}
		if f := digitsAt(s, x); f > x {
			try(f, phFloat, "")
		}
	}
	return end, ph, unit
}

// durationUnits, longest first where one is a prefix of another.
var durationUnits = [...]string{"ns", "us", "µs", "ms", "mins", "min", "secs", "sec", "hrs", "hr", "s", "m", "h", "d"}

// durationAt reads number-unit pairs at q and returns the longest run of
// them that ends at a boundary, 0 if none.
func durationAt(s string, q int) int {
	best, i := 0, q
	for i < len(s) {
		j := digitsAt(s, i)
		if j == i {
			break
		}
		if at(s, j, '.') && j+1 < len(s) && isDigit(s[j+1]) {
			j = digitsAt(s, j+1)
		}
		u := ""
		for _, cand := range durationUnits {
			if len(s)-j >= len(cand) && s[j:j+len(cand)] == cand {
				u = cand
				break
			}
		}
		if u == "" {
			break
		}
		i = j + len(u)
		if bound(s, i) {
			best = i
		}
	}
	return best
}

// dateAt reads an ISO-8601 / RFC 3339 date at q, optionally with a time
// and a zone (2024-05-01, 2024-05-01T12:00:00.123Z,
// 2024-05-01T12:00+02:00); the longest that ends at a boundary, 0 if
// none.
func dateAt(s string, q int) int {
	if !fixedDigits(s, q, 4) || !at(s, q+4, '-') || !fixedDigits(s, q+5, 2) || !at(s, q+7, '-') || !fixedDigits(s, q+8, 2) {
		return 0
	}
	best := 0
	e := q + 10
	if bound(s, e) {
		best = e
	}
	if e < len(s) && (s[e] == 'T' || s[e] == 't' || s[e] == '_') {
		if c := clockAt(s, e+1, false, false); c > best {
			best = c
		}
	}
	return best
}

// clockAt reads a time of day at i, HH:MM[:SS[.fff]] and an optional
// zone; the longest that ends at a boundary, 0 if none. A bare time
// (needSeconds) must have seconds: "12:34" is as often line:column. With
// shortHour, H:MM:SS is accepted too.
func clockAt(s string, i int, shortHour, needSeconds bool) int {
	h := 2
	if shortHour && at(s, i+1, ':') {
		h = 1
	}
	if !fixedDigits(s, i, h) || !at(s, i+h, ':') || !fixedDigits(s, i+h+1, 2) {
		return 0
	}
	best := 0
	e := i + h + 3
	if !needSeconds {
		best = zoneAt(s, e)
	}
	if at(s, e, ':') && fixedDigits(s, e+1, 2) {
		e += 3
		best = max(best, zoneAt(s, e))
		if at(s, e, '.') && e+1 < len(s) && isDigit(s[e+1]) {
			e = digitsAt(s, e+1)
			best = max(best, zoneAt(s, e))
		}
	}
	return best
}

// zoneAt: the longest of e, e+"Z", e+"±HH", e+"±HHMM", e+"±HH:MM" that
// ends at a boundary, 0 if none.
func zoneAt(s string, e int) int {
	best := 0
	if bound(s, e) {
		best = e
	}
	switch {
	case at(s, e, 'Z') || at(s, e, 'z'):
		if bound(s, e+1) {
			best = e + 1
		}
	case (at(s, e, '+') || at(s, e, '-')) && fixedDigits(s, e+1, 2):
		if bound(s, e+3) {
			best = e + 3
		}
		if fixedDigits(s, e+3, 2) && bound(s, e+5) {
			best = e + 5
		}
		if at(s, e+3, ':') && fixedDigits(s, e+4, 2) && bound(s, e+6) {
			best = e + 6
		}
	}
	return best
}

// ipv4At reads four dot-separated decimal octets at q; their end if it
// is a boundary, else 0.
func ipv4At(s string, q int) int {
	i := q
	for part := 0; part < 4; part++ {
		j := digitsAt(s, i)
		if j == i || j-i > 3 {
			return 0
		}
		n := 0
		for k := i; k < j; k++ {
			n = n*10 + int(s[k]-'0')
		}
		if n > 255 {
			return 0
		}
		i = j
		if part < 3 {
			if !at(s, i, '.') {
				return 0
			}
			i++
		}
	}
	if !bound(s, i) {
		return 0
	}
	return withPort(s, i)
}

// withPort extends an address that ends at e over a ":port" after it. An
// endpoint is one variable part: Node prints an IPv6 endpoint without
// brackets (2001:db8::1:5432), where the port cannot be told from the
// address, so a port after any address goes with it, and the same
// endpoint groups whichever family it is printed in.
func withPort(s string, e int) int {
	if at(s, e, ':') {
		if p := digitsAt(s, e+1); p > e+1 && p-e-1 <= 5 && bound(s, p) {
			return p
		}
	}
	return e
}

// ipv6At reads an IPv6 address at q: the longest prefix of the run of
// hex digits, colons and dots there that is one and ends at a boundary;
// 0 if none. An address ending in "::" must also not be followed by '<':
// where a placeholder follows in a second pass, the first read a word.
func ipv6At(s string, q int, rest string) int {
	r := q
	colons := 0
	for r < len(s) && r-q < 45 && (isHex(s[r]) || s[r] == ':' || s[r] == '.') {
		if s[r] == ':' {
			colons++
		}
		r++
	}
	if colons < 2 {
		return 0
	}
	for e := r; e >= q+2; e-- {
		if !bound(s, e) || !isIPv6(s[q:e]) {
			continue
		}
		if s[e-1] == ':' && e == len(s) && len(rest) > 0 && rest[0] == '<' {
			continue
		}
		return e
	}
	return 0
}

// emailAt reads local@domain at q: a local part of letters, digits and
// . _ % + -, and the longest domain that ends at a boundary; 0 if none.
func emailAt(s string, q int) int {
	i := q
	for i < len(s) && i-q <= maxLocal {
		c := s[i]
		if !isAlnum(c) && c != '.' && c != '_' && c != '%' && c != '+' && c != '-' {
			break
		}
		i++
	}
	if i == q || i-q > maxLocal || !at(s, i, '@') {
		return 0
	}
	return hostAt(s, i+1, false)
}

// hostAt reads a domain name at q: the longest prefix of the run of
// letters, digits, dots and hyphens there, cut before a dot or hyphen,
// that is a domain (ending in a known top-level domain, with knownTLD)
// and ends at a boundary; 0 if none. One pass over the run finds the
// cuts whose last label could be a top-level domain; only those are
// checked whole.
func hostAt(s string, q int, knownTLD bool) int {
	best, label := 0, q
	for e := q; e <= len(s) && e-q <= maxHost; e++ {
		c := byte(0)
		if e < len(s) {
			c = s[e]
		}
		inRun := isAlnum(c) || c == '.' || c == '-'
		if inRun && c != '.' && c != '-' {
			continue
		}
		if label > q && e-label >= 2 && bound(s, e) && allAlpha(s[label:e]) &&
			(!knownTLD || topLevel(s[label:e])) && isDomain(s[q:e], knownTLD) {
			best = e
		}
		if !inRun {
			break
		}
		if c == '.' {
			label = e + 1
		}
	}
	return best
}

func allAlpha(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isAlpha(s[i]) {
			return false
		}
	}
	return true
}

// idRunAt reads the run of letters, digits, '_' and '-' at q and returns
// the end of its longest prefix that ends at a boundary (the run's end,
// or before a '-' or '_' in it) if that prefix looks generated (see
// randomID), else 0. randomID only grows with the token, so no shorter
// prefix can pass where the longest fails.
func idRunAt(s string, q int) int {
	r, cut := q, q
	for r < len(s) && (isAlnum(s[r]) || s[r] == '_' || s[r] == '-') {
		if (s[r] == '_' || s[r] == '-') && r > q && s[r-1] != '_' && s[r-1] != '-' {
			cut = r
		}
		r++
	}
	if bound(s, r) && s[r-1] != '_' && s[r-1] != '-' {
		cut = r
	}
	if cut-q < 8 {
		return 0
	}
	// Only the start of a long run is weighed: past it the answer would
	// not change, and the work per token stays bounded.
	run := s[q:min(cut, q+maxIDRun)]
	if !randomID(run, shapeOf(run)) {
		return 0
	}
	return cut
}

func allHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

// nextIsNumber: the text after a token is, past an optional comma and
// whitespace, a number, or a month or weekday name that is itself
// followed by one ("Mon, 02 Jan 2006", "Mon Jan  2 15:04:05").
// Whitespace is any the tokenizer collapses, so that the input and the
// output, where it is one space, look the same.
func nextIsNumber(rest string) bool {
	for depth := 0; depth < 2; depth++ {
		i := 0
		if i < len(rest) && rest[i] == ',' {
			i++
		}
		j := i
		for j < len(rest) && isSpace(rest[j]) {
			j++
		}
		if j == i || j == len(rest) {
			return false
		}
		if isDigit(rest[j]) {
			return true
		}
		k := j
		for k < len(rest) && isAlpha(rest[k]) {
			k++
		}
		if !dateWord(rest[j:k]) {
			return false
		}
		rest = rest[k:]
	}
	return false
}
