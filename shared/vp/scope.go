package vp

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// OAuth scopes. A token's rights are its identity and namespace lists, not
// its scope string; the scopes name those rights so that an OAuth client can
// be told what a refused call needed (403 insufficient_scope) and ask for it
// again. ScopeFull is everything the person who approves may give; the
// others name one right each.
const (
	ScopeFull        = "mcp:full"
	scopeReadPrefix  = "ns:read:"
	scopeWritePrefix = "ns:write:"
	scopeAsPrefix    = "as:"
)

// ReadScope is the scope of reading namespace ns.
func ReadScope(ns string) string { return scopeReadPrefix + escapeScope(ns) }

// WriteScope is the scope of writing namespace ns.
func WriteScope(ns string) string { return scopeWritePrefix + escapeScope(ns) }

// ActAsScope is the scope of acting as orchestrator id.
func ActAsScope(id string) string { return scopeAsPrefix + escapeScope(NormalizeOrchestrator(id)) }

// ScopeRight is one parsed scope: Kind is "full", "read", "write" or "as".
type ScopeRight struct {
	Kind, Name string
}

// MaxScopeEntries bounds the scopes of one request.
const MaxScopeEntries = 50

// ParseScopes reads a space-separated scope string. Scopes of other
// vocabularies are ignored; one of ours that names nothing is an error
// naming it.
func ParseScopes(op, field, s string) ([]ScopeRight, error) {
	var out []ScopeRight
	words := strings.Fields(s)
	if len(words) > MaxScopeEntries {
		return nil, Errorf(op, KindTooLarge, field, "has %d scopes; the limit is %d", len(words), MaxScopeEntries)
	}
	for _, w := range words {
		var r ScopeRight
		var rest string
		switch {
		case w == ScopeFull:
			out = append(out, ScopeRight{Kind: "full"})
			continue
		case strings.HasPrefix(w, scopeReadPrefix):
			r.Kind, rest = "read", w[len(scopeReadPrefix):]
		case strings.HasPrefix(w, scopeWritePrefix):
			r.Kind, rest = "write", w[len(scopeWritePrefix):]
		case strings.HasPrefix(w, scopeAsPrefix):
			r.Kind, rest = "as", w[len(scopeAsPrefix):]
		default:
			continue // not ours (openid, offline_access…): granted nothing, as RFC 6749 §3.3 allows
		}
		name, err := unescapeScope(rest)
		if err != nil || name == "" {
			return nil, Errorf(op, KindInvalid, field, "%q does not name a namespace or orchestrator (percent-encode spaces and non-ASCII)", w)
		}
		r.Name = name
		out = append(out, r)
	}
	return out, nil
}

// Covers reports whether p holds the right r.
func (p Principal) Covers(r ScopeRight) bool {
	switch r.Kind {
	case "read":
		return p.CanRead(r.Name)
	case "write":
		return p.CanWrite(r.Name)
	case "as":
		return p.CanActAs(r.Name)
	}
	return true // ScopeFull: whatever the approver has
}

// WithScope sets the scope a refused call needed and returns e: an OAuth
// client is answered 403 insufficient_scope naming it.
func (e *Error) WithScope(scope string) *Error {
	e.Scope = scope
	return e
}

// ScopeOf returns the scope the first forbidden *Error in err's chain
// needed, or "".
func ScopeOf(err error) string {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return ""
		}
		if e.Scope != "" {
			return e.Scope
		}
		err = e.Err
	}
	return ""
}

// escapeScope percent-encodes what a scope token may not hold (RFC 6749
// §3.3: printable ASCII but space, '"' and '\\') and '%' itself.
func escapeScope(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '%' {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func unescapeScope(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", errors.New("truncated escape")
		}
		c, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", err
		}
		b.WriteByte(byte(c))
		i += 2
	}
	return b.String(), nil
}
