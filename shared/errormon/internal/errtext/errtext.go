// Package errtext splits the text of a logged error into the parts the
// error monitor groups by: the error's type, its message and its stack.
// Both log adapters (errormon/convex, errormon/cloudwatch) use it, so that
// the same JavaScript, Python, Go or Java error reads the same whichever
// source carried it.
package errtext

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Bounds on the parts, so that one pathological log line (a megabyte of
// JSON in a ConvexError's data, a stack of ten thousand frames) cannot
// bloat the group it lands in.
const (
	MaxMessageBytes = 1 << 10
	MaxStackBytes   = 16 << 10
	MaxTypeBytes    = 128
)

// DefaultBackfill is how far back a first read goes when its caller gave
// no start: the monitor's default backfill, never the beginning of time.
const DefaultBackfill = time.Hour

// Since returns since, or now minus DefaultBackfill when since is zero.
func Since(since time.Time, now time.Time) time.Time {
	if since.IsZero() {
		return now.Add(-DefaultBackfill)
	}
	return since
}

// Parts is an error's text, split.
type Parts struct {
	Type    string
	Message string
	Stack   string
}

// Split splits an error's text: the first line carries the type and the
// message ("Uncaught TypeError: x is undefined", "panic: runtime error:
// ...", "java.lang.IllegalStateException: ..."), the lines after it the
// stack. A Python traceback puts the error on its last line instead.
func Split(text string) Parts {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	if text == "" {
		return Parts{}
	}
	first, rest, _ := strings.Cut(text, "\n")
	if strings.HasPrefix(first, "Traceback (most recent call last):") {
		if line := lastUnindented(rest); line != "" {
			// The whole traceback is the stack; its last line is the error.
			p := splitLine(line)
			p.Stack = Clip(strings.TrimRight(strings.TrimSuffix(text, line), "\n "), MaxStackBytes)
			return p
		}
	}
	p := splitLine(first)
	p.Stack = Clip(strings.Trim(rest, "\n"), MaxStackBytes)
	return p
}

// splitLine splits one line into type and message.
func splitLine(line string) Parts {
	line = strings.TrimSpace(line)
	// JavaScript runtimes (and Convex) prefix what was never caught.
	for _, pre := range []string{"Uncaught (in promise) ", "Uncaught "} {
		line = strings.TrimPrefix(line, pre)
	}
	if msg, ok := strings.CutPrefix(line, "panic: "); ok {
		// Go: "panic: <value> [recovered]"; the type of the value is not
		// printed, so the panic itself is the type.
		msg = strings.TrimSuffix(msg, " [recovered]")
		return Parts{Type: "panic", Message: Clip(msg, MaxMessageBytes)}
	}
	if i := strings.Index(line, ": "); i > 0 && LooksLikeClass(line[:i]) {
		return Parts{Type: line[:i], Message: Clip(strings.TrimSpace(line[i+2:]), MaxMessageBytes)}
	}
	if t, ok := strings.CutSuffix(line, ":"); ok && LooksLikeClass(t) {
		return Parts{Type: t, Message: Clip(line, MaxMessageBytes)}
	}
	if LooksLikeClass(line) {
		// A bare class ("java.lang.NullPointerException") says nothing
		// else: it is both the type and the message.
		return Parts{Type: line, Message: Clip(line, MaxMessageBytes)}
	}
	return Parts{Message: Clip(line, MaxMessageBytes)}
}

// lastUnindented is the last non-empty line of s that does not start with
// white space: the exception line closing a Python traceback.
func lastUnindented(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n "), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := lines[i]
		if strings.TrimSpace(l) == "" {
			continue
		}
		if l[0] == ' ' || l[0] == '\t' {
			return ""
		}
		return l
	}
	return ""
}

// classSuffixes end the names that error classes are given in the
// languages the monitored code is written in. A prefix such as "Note" in
// "Note: retrying" must not become a type, so a name has to end so.
var classSuffixes = []string{"Error", "Exception", "Fault", "Panic", "Failure", "Rejection", "Interrupt", "Exit"}

// LooksLikeClass reports whether s reads as the name of an error class: an
// identifier, possibly dotted ("java.io.IOException", "Runtime.
// ImportModuleError", "errors.Join"), ending in Error, Exception or the
// like. It rejects sentences, so "Could not connect: refused" has no type.
func LooksLikeClass(s string) bool {
	if s == "" || len(s) > MaxTypeBytes {
		return false
	}
	for seg := range strings.SplitSeq(s, ".") {
		if seg == "" {
			return false
		}
		for i, r := range seg {
			letter := r == '_' || r == '$' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z')
			if !letter && (i == 0 || r < '0' || r > '9') {
				return false
			}
		}
	}
	for _, suf := range classSuffixes {
		if strings.HasSuffix(s, suf) {
			return true
		}
	}
	return false
}

// Clip cuts s to at most n bytes without splitting a UTF-8 sequence.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

// FirstLine is s up to its first line break, trimmed.
func FirstLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(first)
}
