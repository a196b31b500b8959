package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type waitForActivityIn struct {
	TimeoutMs           *int64   `json:"timeoutMs,omitempty" jsonschema:"how long to hold when nothing waits, default 20000"`
	Kinds               []string `json:"kinds,omitempty" jsonschema:"messages, tasks, unblocked, reservations; default all"`
	Since               *int64   `json:"since,omitempty" jsonschema:"pass back the since of your previous answer"`
	Recipient           string   `json:"recipient,omitempty"`
	RecipientInstanceID string   `json:"recipientInstanceId,omitempty" jsonschema:"your instance; ignores messages for your other ones"`
}

// WaitSlot is how an HTTP transport that bounds a token's requests in
// flight lets a call that waits trade its request slot for one of a small
// budget of waiting slots, so that an agent's waits never starve its other
// calls. Hold refuses when the waiting budget is spent.
type WaitSlot interface {
	Hold() (release func(), err error)
}

type waitSlotKey struct{}

// WithWaitSlot returns ctx carrying the request's WaitSlot.
func WithWaitSlot(ctx context.Context, w WaitSlot) context.Context {
	return context.WithValue(ctx, waitSlotKey{}, w)
}

// ActivityTools are the tools of wait_for_activity over a; none when a is nil.
func ActivityTools(a *activity.Service) Toolset {
	if a == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addActivityTools(m, a) }}
}

func (s *server) addActivityTools(m *mcp.Server, a *activity.Service) {
	add(s, m, tool{Name: "wait_for_activity", Title: "Wait for activity", Core: true, Annotations: readOnly,
		Limits:      activity.Input{}.Limits(),
		Description: "Wait for work instead of polling: answers at once with your unread messages, tasks assigned to you not started, and tasks newly unblocked; else holds until one arrives or timeoutMs (timedOut:true). Marks nothing read. Example: {\"timeoutMs\":20000}"},
		func(ctx context.Context, p vp.Principal, in waitForActivityIn) (activity.Result, error) {
			wi := activity.Input{TimeoutMs: in.TimeoutMs, Kinds: in.Kinds, Since: in.Since, Recipient: in.Recipient,
				RecipientInstanceID: in.RecipientInstanceID}
			if w, ok := ctx.Value(waitSlotKey{}).(WaitSlot); ok {
				wi.Hold = w.Hold
			}
			return a.Wait(ctx, p, wi)
		})
}
