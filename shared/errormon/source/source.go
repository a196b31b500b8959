// Package source is the port between the error monitor and the logs it
// reads: a deployment's error occurrences, read from a persisted cursor.
// Each log technology is one adapter package (errormon/convex,
// errormon/cloudwatch); a third (a log-stream webhook, Sentry) is one
// more that implements Source.
package source

import (
	"context"
	"time"
)

// Event is one error occurrence read from a deployment's logs.
type Event struct {
	// ID is unique per occurrence in its source (Convex's executionId,
	// CloudWatch's eventId): a read that overlaps the last one is
	// deduplicated by it.
	ID   string
	Time time.Time
	// Function is the function, route or identifier that failed
	// ("messages:send", "POST /api/upload"); "" when unknown.
	Function string
	// Type is the error's type or class ("TypeError", "ConvexError"); ""
	// when the log does not say.
	Type string
	// Message is the error message, its first line.
	Message string
	// Stack is the stack trace as logged; "" when there is none.
	Stack string
	// Raw is the log record as read, cut to MaxRawBytes.
	Raw string
}

// MaxRawBytes bounds Event.Raw.
const MaxRawBytes = 8 << 10

// Target is the deployment a source reads.
type Target struct {
	Tenant string
	Name   string
	// DeploymentURL is the Convex deployment's URL.
	DeploymentURL string
	// Key is the secret the source authenticates with (a Convex deploy
	// key); never logged, never stored.
	Key string
	// KeyOrigin is the origin (egress.Origin) Key is bound to: a source
	// sends Key to no other.
	KeyOrigin string
	// LogGroups and FilterPattern select CloudWatch Logs events.
	LogGroups     []string
	FilterPattern string
	// Wait bounds how long a long-polling source holds a request that has
	// nothing new (zero: the source's own bound). A scan's follow-up reads
	// pass a short one: what is there is answered at once, so a wait means
	// it has caught up.
	Wait time.Duration
}

// Page is what one Read returns.
type Page struct {
	Events []Event
	// Cursor is where the next Read starts; persisted by the caller.
	Cursor string
	// More: the source has more events after Cursor right now (the
	// caller may read again within its time budget): a long-polling source
	// that answered anything may have more after it.
	More bool
	// Newest is the log time the cursor has read up to (zero: unknown): a
	// scan is caught up once it is close to the scan's start, and behind
	// by the difference when its budget ends first.
	Newest time.Time
}

// Source reads a deployment's error events after cursor ("" on a first
// run: start at since). It returns within ctx's deadline (a long-polling
// source bounds its wait by it) and at most max events. Errors are
// *vp.Error with a kind: KindUnauthorized (a bad key), KindRateLimited
// (throttled, with RetryAfter), KindUnavailable (retry later),
// KindInvalid (a bad target).
type Source interface {
	Read(ctx context.Context, t Target, cursor string, since time.Time, max int) (Page, error)
}
