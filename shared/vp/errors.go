// Package vp holds the domain vocabulary of VantagePeers: entity types, the
// caller's Principal, identifiers and the error type every layer speaks.
// It knows nothing of storage, transports or cloud providers.
package vp

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Kind classifies an error so that transports can map it (to an MCP tool
// error, an HTTP status) without parsing messages.
type Kind uint8

const (
	KindOther        Kind = iota // unclassified; treated as internal
	KindInvalid                  // the caller sent something malformed
	KindNotFound                 // the entity does not exist (or is not visible to the caller)
	KindConflict                 // a conditional write lost, or the entity is in the wrong state
	KindForbidden                // the principal may not do this
	KindUnauthorized             // no or bad credentials
	KindTooLarge                 // an input exceeds a documented limit
	KindInternal                 // a bug, or a failure no other kind describes
	// KindUnavailable: a dependency (the store, an external API) is
	// temporarily unavailable or busy; the same call may succeed if retried.
	KindUnavailable
	// KindRateLimited: a dependency refused the call for its rate; retry
	// after Error.RetryAfter (see RetryAfter).
	KindRateLimited
)

func (k Kind) String() string {
	switch k {
	case KindInvalid:
		return "invalid_argument"
	case KindNotFound:
		return "not_found"
	case KindConflict:
		return "conflict"
	case KindForbidden:
		return "forbidden"
	case KindUnauthorized:
		return "unauthorized"
	case KindTooLarge:
		return "too_large"
	case KindInternal:
		return "internal"
	case KindUnavailable:
		return "unavailable"
	case KindRateLimited:
		return "rate_limited"
	}
	return "error"
}

// Error is the error type of the domain. Op names the operation
// ("send_message", "store.sqlite.Write"), Field the argument at fault, Msg a
// sentence that tells the caller what to do about it.
type Error struct {
	Op    string
	Kind  Kind
	Field string
	Msg   string
	Err   error
	// RetryAfter is how long to wait before retrying, for KindRateLimited
	// (zero: the dependency did not say).
	RetryAfter time.Duration
	// Remedy names, in domain terms ("task.resume"), what the caller should
	// do next. The domain does not know which tool does it: the MCP layer
	// turns the remedy into a hint naming the tool (mcpserver/remedies.go).
	Remedy string
	// Scope, on a forbidden error, is the OAuth scope the call needed
	// (ReadScope, WriteScope, ActAsScope).
	Scope string
}

// WithRemedy sets e's remedy and returns e.
func (e *Error) WithRemedy(r string) *Error {
	e.Remedy = r
	return e
}

// RemedyOf returns the remedy of the first *Error in err's chain, or "".
func RemedyOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Remedy
	}
	return ""
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field)
		b.WriteString(": ")
	}
	if e.Msg != "" {
		b.WriteString(e.Msg)
	} else if e.Err == nil {
		b.WriteString(e.Kind.String())
	}
	if e.Err != nil {
		if e.Msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

// E builds an *Error. It is a convenience for the common shapes:
//
//	vp.E(op, vp.KindInvalid, "limit", "must be between 1 and 200")
func E(op string, kind Kind, field, msg string) *Error {
	return &Error{Op: op, Kind: kind, Field: field, Msg: msg}
}

// Errorf is E with a formatted message.
func Errorf(op string, kind Kind, field, format string, args ...any) *Error {
	return &Error{Op: op, Kind: kind, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// Wrap attaches an operation (and, when err is not already a *Error, a kind)
// to err. Wrap(op, kind, nil) returns nil.
func Wrap(op string, kind Kind, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Kind: kind, Err: err}
}

// KindOf reports the kind of the outermost *Error in err's chain that has
// one, or KindOther.
func KindOf(err error) Kind {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return KindOther
		}
		if e.Kind != KindOther {
			return e.Kind
		}
		err = e.Err
	}
	return KindOther
}

// IsKind reports whether err has the given kind.
func IsKind(err error, k Kind) bool { return KindOf(err) == k }

// Unavailable marks err as a temporary failure of a dependency: callers
// (and the outbox worker) retry it with backoff. Unavailable(op, nil)
// returns nil.
func Unavailable(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Kind: KindUnavailable, Err: err}
}

// RateLimited reports that a dependency refused a call for its rate and
// asked to wait retryAfter (zero when it did not say). err may be nil.
func RateLimited(op string, retryAfter time.Duration, err error) *Error {
	return &Error{Op: op, Kind: KindRateLimited, Err: err, RetryAfter: max(retryAfter, 0)}
}

// RetryAfter returns the wait a rate-limited err asks for: the first
// non-zero RetryAfter of a rate-limited *Error in its chain (so that
// vp.Wrap(op, vp.KindOf(err), err) keeps it). ok is false when err is not
// rate-limited (KindOf).
func RetryAfter(err error) (d time.Duration, ok bool) {
	if KindOf(err) != KindRateLimited {
		return 0, false
	}
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			break
		}
		if e.Kind == KindRateLimited && e.RetryAfter > 0 {
			return e.RetryAfter, true
		}
		err = e.Err
	}
	return 0, true
}

// Retryable reports whether err is a temporary condition (unavailable or
// rate-limited) that the same call may overcome later.
func Retryable(err error) bool {
	k := KindOf(err)
	return k == KindUnavailable || k == KindRateLimited
}
