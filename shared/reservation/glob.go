package reservation

import (
	"strings"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The glob language of reserved paths, relative to the repository root:
//
//   - segments are separated by '/'; a path has at least one segment and
//     none is empty, ".", or "..";
//   - "**" as a whole segment matches zero or more segments;
//   - '*' matches any run of characters within one segment (so "src/*"
//     matches "src/a.go" but not "src/a/b.go");
//   - '?' matches exactly one character within a segment;
//   - every other character matches itself (case-sensitive).
//
// Character classes ('[', ']'), braces ('{', '}') and escapes ('\') are
// refused rather than read literally, so that a glob written for another
// dialect cannot silently mean something else; so are a "**" inside a
// segment ("a**b"), a leading '/', and control characters.
//
// Two globs overlap when some path matches both: Overlap decides it
// exactly (a product of the two patterns' automata, one level per
// segment and one per character) and returns such a path.

// Glob is a parsed reservation glob.
type Glob struct {
	src  string
	segs []string // "**" or a segment pattern of literals, '*' and '?'
}

const doubleStar = "**"

// String returns the glob as written.
func (g Glob) String() string { return g.src }

// ParseGlob checks s against the glob language; field names the argument
// in the error.
func ParseGlob(op, field, s string) (Glob, error) {
	bad := func(why string, args ...any) (Glob, error) {
		return Glob{}, vp.Errorf(op, vp.KindInvalid, field, "%q: "+why, append([]any{s}, args...)...)
	}
	switch {
	case s == "":
		return Glob{}, vp.Errorf(op, vp.KindInvalid, field, "must not be empty")
	case !utf8.ValidString(s):
		return bad("not valid UTF-8")
	case strings.HasPrefix(s, "/"):
		return bad("must be relative to the repository root (no leading '/')")
	case strings.HasSuffix(s, "/"):
		return bad("must not end with '/'; write %q for everything under a directory", strings.TrimSuffix(s, "/")+"/**")
	}
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			return bad("must not contain control characters")
		case strings.ContainsRune(`[]{}\`, r):
			return bad("%q is not supported; the glob language is '*', '**' (a whole segment), '?' and literal characters", r)
		}
	}
	segs := strings.Split(s, "/")
	for _, seg := range segs {
		switch {
		case seg == "":
			return bad("has an empty segment ('//')")
		case seg == "." || seg == "..":
			return bad("must not contain %q segments", seg)
		case seg != doubleStar && strings.Contains(seg, doubleStar):
			return bad("'**' must be a whole segment (\"a/**/b\"), not part of %q", seg)
		}
	}
	return Glob{src: s, segs: segs}, nil
}

// MustGlob parses s or panics: for tests and constants.
func MustGlob(s string) Glob {
	g, err := ParseGlob("glob", "glob", s)
	if err != nil {
		panic(err)
	}
	return g
}

// Prefix is the glob's leading literal segments, each followed by '/'
// (a literal glob's whole path and a '/'): every path p that g matches has
// p+"/" starting with it, so two globs whose prefixes are not one a prefix
// of the other cannot overlap. The store indexes entries by it.
func (g Glob) Prefix() string {
	var b strings.Builder
	for _, seg := range g.segs {
		if seg == doubleStar || strings.ContainsAny(seg, "*?") {
			break
		}
		b.WriteString(seg)
		b.WriteByte('/')
	}
	return b.String()
}

// Overlap reports whether some path matches both a and b, and returns the
// shortest such path in segments (a witness, for tests and messages).
//
// It searches the product of the two globs read as automata over
// segments: a state (i, j) has matched a's first i and b's first j
// segment patterns; "**" may be skipped (an empty run) or consume any
// segment and stay; two patterns step together when some one segment
// matches both (segOverlap, the same construction over characters). The
// globs overlap iff (len(a), len(b)) is reachable. Its cost is
// O(|a|·|b|) segment pairs, each O(|s|·|t|) characters.
func Overlap(a, b Glob) (string, bool) {
	n, m := len(a.segs), len(b.segs)
	type st struct{ i, j int }
	type from struct {
		prev st
		seg  string // the segment consumed; "" for a skipped "**"
		ok   bool
	}
	seen := make(map[st]from, (n+1)*(m+1))
	start := st{}
	seen[start] = from{ok: true}
	queue := []st{start}
	push := func(to, prev st, seg string) {
		if _, ok := seen[to]; !ok {
			seen[to] = from{prev: prev, seg: seg, ok: true}
			queue = append(queue, to)
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s.i == n && s.j == m {
			break
		}
		var pa, pb string
		if s.i < n {
			pa = a.segs[s.i]
		}
		if s.j < m {
			pb = b.segs[s.j]
		}
		// Skips first: a shortest witness uses as few segments as it can.
		if pa == doubleStar {
			push(st{s.i + 1, s.j}, s, "")
		}
		if pb == doubleStar {
			push(st{s.i, s.j + 1}, s, "")
		}
		if pa == "" || pb == "" {
			continue
		}
		w, ok := segOverlap(pa, pb)
		if !ok {
			continue
		}
		ni, nj := s.i+1, s.j+1
		if pa == doubleStar {
			ni = s.i
		}
		if pb == doubleStar {
			nj = s.j
		}
		push(st{ni, nj}, s, w)
	}
	end := st{n, m}
	if !seen[end].ok {
		return "", false
	}
	var segs []string
	for s := end; s != start; s = seen[s].prev {
		if w := seen[s].seg; w != "" {
			segs = append(segs, w)
		}
	}
	if len(segs) == 0 { // both all "**": any one segment
		return "x", true
	}
	for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
		segs[i], segs[j] = segs[j], segs[i]
	}
	return strings.Join(segs, "/"), true
}

// segOverlap reports whether some non-empty segment matches both segment
// patterns ("**" matches any segment), and returns one. The product
// automaton over characters: '*' may be skipped or consume any character
// and stay, '?' consumes any one, a literal itself; two steps combine
// when they can read one common character.
func segOverlap(p, q string) (string, bool) {
	if p == doubleStar {
		p = "*"
	}
	if q == doubleStar {
		q = "*"
	}
	a, b := []rune(p), []rune(q)
	n, m := len(a), len(b)
	// consumed: at least one character read (segments are never empty).
	type st struct {
		i, j     int
		consumed bool
	}
	type from struct {
		prev st
		c    rune // 0 for a skipped '*'
		ok   bool
	}
	seen := make(map[st]from, 2*(n+1)*(m+1))
	start := st{}
	seen[start] = from{ok: true}
	queue := []st{start}
	push := func(to, prev st, c rune) {
		if _, ok := seen[to]; !ok {
			seen[to] = from{prev: prev, c: c, ok: true}
			queue = append(queue, to)
		}
	}
	end := st{n, m, true}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		if s == end {
			break
		}
		var ca, cb rune
		if s.i < n {
			ca = a[s.i]
		}
		if s.j < m {
			cb = b[s.j]
		}
		if ca == '*' {
			push(st{s.i + 1, s.j, s.consumed}, s, 0)
		}
		if cb == '*' {
			push(st{s.i, s.j + 1, s.consumed}, s, 0)
		}
		if ca == 0 || cb == 0 {
			continue
		}
		c, ok := commonChar(ca, cb)
		if !ok {
			continue
		}
		ni, nj := s.i+1, s.j+1
		if ca == '*' {
			ni = s.i
		}
		if cb == '*' {
			nj = s.j
		}
		push(st{ni, nj, true}, s, c)
	}
	if !seen[end].ok {
		return "", false
	}
	var out []rune
	for s := end; s != start; s = seen[s].prev {
		if c := seen[s].c; c != 0 {
			out = append(out, c)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return string(out), true
}

// commonChar returns a character that both pattern characters read.
func commonChar(a, b rune) (rune, bool) {
	wild := func(r rune) bool { return r == '*' || r == '?' }
	switch {
	case wild(a) && wild(b):
		return 'x', true
	case wild(a):
		return b, true
	case wild(b):
		return a, true
	}
	return a, a == b
}
