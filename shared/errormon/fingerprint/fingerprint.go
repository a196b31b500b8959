// Package fingerprint groups error occurrences: two events have the same
// Fingerprint.Hash when they are, as far as their text can tell, the same
// cause. A fingerprint is the failing function or route, the error type,
// the message with its variable parts (ids, numbers, e-mails, URLs,
// timestamps, durations, quoted values) replaced by placeholders, and the
// top in-app stack frame without line numbers.
//
// The algorithm is versioned: a group stores the Version its hash was
// computed with, and any change to what Of returns for some input bumps
// Version, so that hashes of two algorithms are never compared as if they
// were one. When in doubt it splits rather than merges (Rollbar's choice):
// a cause reported as two issues is a nuisance, two causes reported as one
// hides a bug.
package fingerprint

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// Version names the algorithm. It is hashed with the parts, so that a new
// version gives every group a new hash.
const Version = "fp1"

// Fingerprint is an event's group key and the parts it was computed from;
// the parts are stored with the group, so that a reader can see why two
// events were grouped.
type Fingerprint struct {
	// Hash: the first 32 hex digits of the SHA-256 of Version and the
	// parts below.
	Hash    string
	Version string
	// Function is the function or route, its ids replaced
	// ("GET /users/<int>/posts", "messages:send").
	Function string
	// Type is the error type; when the event has none, the one that
	// prefixes the message ("TypeError: ..."); "" when unknown.
	Type string
	// Message is the parameterised message, less its type prefix.
	Message string
	// Frame is the top in-app stack frame, "function (file)" without
	// line or column; "" when there is no stack.
	Frame string
}

// Bounds on the parts that are not bounded by Message or TopFrame.
const (
	maxType     = 128
	maxFunction = 256
)

// Of computes an event's fingerprint.
func Of(e source.Event) Fingerprint {
	msg, stack := e.Message, e.Stack
	// Message is meant to be the first line. A source that left the
	// rest in gets the same fingerprint as one that split it, and when
	// it put the stack there, the stack is read from there.
	if nl := strings.IndexByte(msg, '\n'); nl >= 0 {
		if stack == "" {
			stack = msg[nl+1:]
		}
		msg = msg[:nl]
	}
	typ, msg := splitType(strings.TrimSpace(e.Type), strings.TrimSpace(msg))
	f := Fingerprint{
		Version:  Version,
		Function: function(e.Function),
		Type:     cut(typ, maxType),
		Message:  Message(msg),
		Frame:    TopFrame(stack),
	}
	f.Hash = f.sum()
	return f
}

// sum hashes Version and the parts, each preceded by its length so that
// no two different part lists hash the same bytes.
func (f *Fingerprint) sum() string {
	var arr [1536]byte
	b := arr[:0]
	for _, s := range [...]string{f.Version, f.Function, f.Type, f.Message, f.Frame} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	d := sha256.Sum256(b)
	var h [32]byte
	hex.Encode(h[:], d[:16])
	return string(h[:])
}

// splitType returns the error type and the message without it. A given
// type is stripped from the front of the message ("TypeError: x" with
// type TypeError is "x"), and with no type given the message's own
// prefix is taken, so that a source that reports the type apart and one
// that leaves it in the text group together. "Uncaught " (how Convex and
// browsers print an uncaught throw) goes with it.
func splitType(typ, msg string) (string, string) {
	m := strings.TrimPrefix(msg, "Uncaught ")
	if typ != "" {
		if len(m) > len(typ) && strings.HasPrefix(m, typ) && m[len(typ)] == ':' {
			return typ, strings.TrimSpace(m[len(typ)+1:])
		}
		return typ, msg
	}
	if rest, ok := strings.CutPrefix(m, "fatal error:"); ok {
		return "fatal error", strings.TrimSpace(rest)
	}
	i := 0
	for i < len(m) && (isAlnum(m[i]) || m[i] == '_' || m[i] == '$' || m[i] == '.') {
		i++
	}
	if i == 0 || i >= len(m) || m[i] != ':' || (i+1 < len(m) && m[i+1] != ' ') {
		return "", msg
	}
	name := m[:i]
	if !typeName(name) {
		return "", msg
	}
	return name, strings.TrimSpace(m[i+1:])
}

// typeName: a prefix that names an error type, not the first words of a
// message ("failed to connect: ..."): a class whose name says it is one
// (TypeError, java.lang.NullPointerException, KeyboardInterrupt), or Go's
// "panic".
func typeName(name string) bool {
	if name == "panic" {
		return true
	}
	last := name[strings.LastIndexByte(name, '.')+1:]
	if last == "" || !isUpper(last[0]) {
		return false
	}
	for _, suffix := range [...]string{"Error", "Exception", "Exit", "Interrupt", "Warning", "Fault", "Failure"} {
		if strings.HasSuffix(last, suffix) {
			return true
		}
	}
	return false
}

// function normalises the function or route: a query string or fragment
// goes (it is request data), and ids in the path become placeholders.
func function(fn string) string {
	fn = strings.TrimSpace(fn)
	if k := strings.IndexAny(fn, "?#"); k >= 0 {
		fn = fn[:k]
	}
	return cut(Message(fn), maxFunction)
}

// cut bounds s to n bytes at a UTF-8 boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for k := 0; k < 3 && n > 0 && s[n]&0xc0 == 0x80; k++ {
		n--
	}
	return s[:n]
}
