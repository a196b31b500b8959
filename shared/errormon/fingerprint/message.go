package fingerprint

import "strings"

// Bounds on Message. A log line can be megabytes (a JSON dump, a minified
// bundle); what identifies its cause is at the start, so the input is cut
// first and the output bounded, which also bounds the work per event.
const (
	maxInput  = 2048 // bytes of the message read
	maxOutput = 1024 // bytes of the parameterised message kept
	// maxChunk: a whitespace-delimited chunk whose parameterised form is
	// longer than this is data (base64, a JSON blob, an encoded
	// payload), written as <blob>. It is measured on the output so that
	// a second pass, which reads that output, decides the same.
	maxChunk = 200
	// maxKeptQuote: a quoted identifier longer than this is a value.
	maxKeptQuote = 64
)

// Message returns msg with its variable parts replaced by placeholders
// (<int>, <uuid>, <email>, <url>, <quoted_str> ...), whitespace collapsed
// to single spaces, and everything else, words, case and punctuation,
// kept: the parameterised message that goes into a fingerprint.
//
// It tokenises, then classifies, instead of running patterns over the
// text: the text is cut into whitespace-delimited chunks, a chunk into
// quoted strings, URLs, separators and atoms, and an atom is read token
// by token, each the longest variable part that starts there, or a
// literal word (see scan.go). Message is idempotent
// (Message(Message(x)) == Message(x)), so a stored message is its own
// parameterised form, and its result is at most 1024 bytes.
func Message(msg string) string {
	p := param{out: make([]byte, 0, min(len(msg), maxInput)+16)}
	p.message(msg)
	return string(p.out)
}

// param is one parameterisation in progress.
type param struct {
	out []byte
	// noCloser[q]: a search for a closing quote q already ran to the
	// end of the input and found none; every later one would too. It
	// keeps the quote search linear.
	noCloser [3]bool
	hasAt    bool // the atom being read has an '@': an e-mail is possible
}

func isSpace(c byte) bool { return c <= ' ' || c == 0x7f }

// isSep: the bytes that end an atom and are written as they are. The
// atom bytes that remain (letters, digits, '.', ':', '-', '_', '+', '@',
// and anything non-ASCII) are those a classified token is made of.
func isSep(c byte) bool {
	switch c {
	case '/', '=', ',', ';', '(', ')', '[', ']', '{', '}', '<', '>', '|', '&', '?', '#', '!',
		'"', '\'', '`', '%', '$', '*', '^', '~', '\\':
		return true
	}
	return false
}

func quoteIndex(c byte) int {
	switch c {
	case '\'':
		return 0
	case '"':
		return 1
	case '`':
		return 2
	}
	return -1
}

// cutInput cuts s to maxInput bytes, at a UTF-8 boundary.
func cutInput(s string) string {
	if len(s) <= maxInput {
		return s
	}
	i := maxInput
	for k := 0; k < 3 && i > 0 && s[i]&0xc0 == 0x80; k++ {
		i--
	}
	return s[:i]
}

func (p *param) message(s string) {
	s = cutInput(s)
	for i := 0; i < len(s); {
		if isSpace(s[i]) {
			i++
			continue
		}
		if len(p.out) >= maxOutput {
			break
		}
		if len(p.out) > 0 {
			p.out = append(p.out, ' ')
		}
		start := len(p.out)
		i = p.chunk(s, i)
		if len(p.out)-start > maxChunk {
			p.out = append(p.out[:start], phBlob...)
		}
	}
	if len(p.out) > maxOutput {
		// Every chunk is at most maxChunk bytes, so a space is close.
		cut := strings.LastIndexByte(string(p.out[:maxOutput+1]), ' ')
		if cut < 0 {
			cut = 0
		}
		p.out = p.out[:cut]
	}
}

// chunk parameterises s from i to the next whitespace that is not inside
// a quoted string and returns where it stopped.
func (p *param) chunk(s string, i int) int {
	for i < len(s) && !isSpace(s[i]) {
		c := s[i]
		if q := quoteIndex(c); q >= 0 && p.opens() {
			if end := p.closer(s, i, q); end > 0 {
				p.quoted(s[i+1:end], c)
				i = end + 1
				continue
			}
		}
		if c == '[' {
			if end := bracketIPv6(s, i); end > 0 {
				p.out = append(p.out, phIP...)
				i = end
				continue
			}
		}
		if isSep(c) {
			p.out = append(p.out, c)
			i++
			continue
		}
		j := i
		for j < len(s) && !isSpace(s[j]) && !isSep(s[j]) {
			j++
		}
		if end := urlEnd(s, i, j); end > 0 && !p.afterPlaceholder() {
			p.out = append(p.out, phURL...)
			i = end
			continue
		}
		p.atom(s[i:j], s[j:])
		i = j
	}
	return i
}

// opens: a quote here starts a quoted string, because it follows a
// boundary: the start, a space, or one of = : ( [ { ,. It is decided on
// the output written so far, which a second pass reads as its input.
func (p *param) opens() bool {
	if len(p.out) == 0 {
		return true
	}
	switch p.out[len(p.out)-1] {
	case ' ', '=', ':', '(', '[', '{', ',':
		return true
	}
	return false
}

// closer finds the quote q that ends the quoted string opened at i: the
// next q followed by the end, a space or closing punctuation, so that an
// apostrophe inside ('it's here') does not end it. -1 when there is none.
func (p *param) closer(s string, i, q int) int {
	if p.noCloser[q] {
		return -1
	}
	c := s[i]
	for k := i + 1; k < len(s); k++ {
		if s[k] != c {
			continue
		}
		if k+1 == len(s) || isSpace(s[k+1]) || strings.IndexByte(".,;:!?)]}>", s[k+1]) >= 0 {
			return k
		}
	}
	p.noCloser[q] = true
	return -1
}

// quoted writes a quoted string. A quoted identifier (a property, field,
// module, table or constraint name: reading 'map', relation "users",
// constraint "users_email_key") is kept with its quotes: it names the
// code that failed, and "field 'email' is required" and "field 'name' is
// required" are different causes. Anything else, and anything after = or
// :, where a quoted string is a value, is <quoted_str>. The text cannot
// tell a name from a value that is one bare word (Go's `parsing "abc"`),
// so such a value is kept too, and splits its group by value: splitting
// is the cheaper mistake.
func (p *param) quoted(content string, quote byte) {
	if p.afterAssign() || !identifier(content) {
		p.out = append(p.out, phQuoted...)
		return
	}
	// The content is parameterised on its own, as a message of its own
	// (from its start, with no output before it), into the spare
	// capacity of the output, which is overwritten below.
	sub := param{out: p.out[len(p.out):len(p.out)]}
	sub.message(content)
	if string(sub.out) != content {
		p.out = append(p.out, phQuoted...)
		return
	}
	p.out = append(p.out, quote)
	p.out = append(p.out, content...)
	p.out = append(p.out, quote)
}

// afterAssign: the last byte written, spaces aside, is = or :.
func (p *param) afterAssign() bool {
	for k := len(p.out) - 1; k >= 0; k-- {
		switch p.out[k] {
		case ' ':
			continue
		case '=', ':':
			return true
		}
		return false
	}
	return false
}

// identifier: short, made of the bytes code names are made of
// (including the '/', '@' and '.' of module paths, and the "()" of a
// method as Java's messages quote it: "String.length()"), with a letter,
// and not starting with a digit, as no language's names do: "0x1G",
// "12a" and "-" are values.
func identifier(s string) bool {
	s = strings.TrimSuffix(s, "()")
	if len(s) == 0 || len(s) > maxKeptQuote || isDigit(s[0]) {
		return false
	}
	letter := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isAlpha(c):
			letter = true
		case isDigit(c), c == '_', c == '$', c == '.', c == ':', c == '/', c == '@', c == '-':
		default:
			return false
		}
	}
	return letter
}

// bracketIPv6: an IPv6 address in brackets at i, as in a URL or Go's
// "[2001:db8::1]:5432", with its port; its end, or 0.
func bracketIPv6(s string, i int) int {
	k := i + 1
	for k < len(s) && k-i <= 46 && (isHex(s[k]) || s[k] == ':' || s[k] == '.') {
		k++
	}
	if !at(s, k, ']') || !isIPv6(s[i+1:k]) {
		return 0
	}
	return withPort(s, k+1)
}

// urlEnd: if the atom s[i:j] is a scheme followed by "://", the URL runs
// to the next space, less trailing punctuation; urlEnd returns its end,
// or 0. The whole URL is <url>: its host is as often per tenant (a Convex
// deployment, a bucket, a presigned link) as per cause, and the function
// and frame already say where the call was made.
func urlEnd(s string, i, j int) int {
	if j+2 >= len(s) || j-i < 2 || s[j-1] != ':' || s[j] != '/' || s[j+1] != '/' {
		return 0
	}
	for k := i; k < j-1; k++ {
		c := s[k]
		if !isAlpha(c) && !(k > i && (isDigit(c) || c == '+' || c == '-' || c == '.')) {
			return 0
		}
	}
	e := j + 2
	for e < len(s) && !isSpace(s[e]) {
		e++
	}
	for e > j+2 {
		switch s[e-1] {
		case '.', ',', ';', ':', '!', '?', ')', ']', '}', '>', '\'', '"', '`':
			e--
			continue
		}
		break
	}
	return e
}

// keepCode: some numbers are not variable parts but the cause itself.
// "failed with status 404" and "failed with status 500" are a missing
// record and a server fault; "exit code 137" is an OOM kill and "exit
// code 1" an error. So a number is kept as written when it is an HTTP
// status (100-599, three digits) after status, code or HTTP, or before a
// reason phrase ("503 Service Unavailable"); an errno, SQLSTATE or signal
// number after its name; an exit status after "exit status"/"exit code".
// An id or a count does not follow these words, so keeping them does not
// split a cause; a verification code (six digits) is not kept.
func (p *param) keepCode(s, rest string) bool {
	if s[0] == '-' || s[0] == '+' || len(s) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	status := len(s) == 3 && n >= 100 && n <= 599
	w1, w2 := p.prevWords()
	switch {
	case fold(w1, "errno") || fold(w1, "sqlstate") || fold(w1, "signal"):
		return true
	case (fold(w1, "status") || fold(w1, "code")) && fold(w2, "exit"):
		return len(s) <= 3
	case fold(w1, "status") || fold(w1, "code") || fold(w1, "http") || fold(w1, "https") ||
		fold(w1, "statuscode") || fold(w1, "status_code") || fold(w1, "httpstatus"):
		return status
	}
	return status && reasonPhrase(rest)
}

// prevWords returns the last two words written, skipping the spaces,
// quotes and punctuation between a key and its value ("status: 404",
// "status=404", `"statusCode":404`, "[Errno 111]").
func (p *param) prevWords() (w1, w2 []byte) {
	o := p.out
	word := func() []byte {
		n := 0
		for len(o) > 0 && n < 3 {
			switch o[len(o)-1] {
			case ' ', '=', ':', '"', '\'', '`', '(', '[':
				o = o[:len(o)-1]
				n++
				continue
			}
			break
		}
		e := len(o)
		for len(o) > 0 && (isAlpha(o[len(o)-1]) || o[len(o)-1] == '_') {
			o = o[:len(o)-1]
		}
		return p.out[len(o):e]
	}
	w1 = word()
	w2 = word()
	return w1, w2
}

// fold: b equals the lower-case ASCII word w, ignoring case.
func fold(b []byte, w string) bool {
	if len(b) != len(w) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if isUpper(c) {
			c += 'a' - 'A'
		}
		if c != w[i] {
			return false
		}
	}
	return true
}

// reasonPhrase: rest begins, past whitespace, with the first word of an
// HTTP reason phrase.
func reasonPhrase(rest string) bool {
	i := 0
	for i < len(rest) && isSpace(rest[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	rest = rest[i:]
	k := 0
	for k < len(rest) && isAlpha(rest[k]) {
		k++
	}
	if !bound(rest, k) {
		return false // the word goes on ("Service0A0"): not a reason phrase
	}
	switch rest[:k] {
	case "OK", "Created", "Accepted", "Moved", "Found", "Not", "Bad", "Unauthorized", "Payment",
		"Forbidden", "Method", "Request", "Conflict", "Gone", "Precondition", "Payload",
		"Unsupported", "Too", "Unprocessable", "Internal", "Service", "Gateway":
		return true
	}
	return false
}
