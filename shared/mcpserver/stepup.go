package mcpserver

import (
	"context"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// StepUp collects, for one HTTP request of an OAuth client, the scope a
// refused tool call needed (vp.Error.Scope): the transport then answers
// 403 insufficient_scope naming it, so that the host can ask the person
// for it (MCP authorization, step-up), instead of the tool error an agent
// token gets.
type StepUp struct {
	mu           sync.Mutex
	scope, cause string
}

// Needed is the first scope a call needed and the refusal's text; "" when
// none did.
func (s *StepUp) Needed() (scope, cause string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.scope, s.cause
}

type stepUpKey struct{}

// WithStepUp returns ctx carrying the request's StepUp.
func WithStepUp(ctx context.Context, s *StepUp) context.Context {
	return context.WithValue(ctx, stepUpKey{}, s)
}

// noteStepUp records what an OAuth client's refused call needed.
func noteStepUp(ctx context.Context, p vp.Principal, err error) {
	s, ok := ctx.Value(stepUpKey{}).(*StepUp)
	scope := vp.ScopeOf(err)
	if !ok || p.ClientID == "" || scope == "" || !vp.IsKind(err, vp.KindForbidden) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.scope == "" {
		s.scope, s.cause = scope, err.Error()
	}
}
