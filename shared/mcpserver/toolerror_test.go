package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The retryable kinds become tool errors that say to retry (and after how
// long) without leaking the backend's message.
func TestToolErrorRetryableKinds(t *testing.T) {
	s := &server{log: slog.New(slog.DiscardHandler)}
	secret := errors.New("SQLITE_BUSY: database is locked (5)")
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"unavailable", vp.Unavailable("store.sqlite.Write", secret),
			"send_message: unavailable: a dependency is busy or unavailable right now; retry in a few seconds"},
		{"rate limited with a wait", vp.Wrap("coord.Send", vp.KindOther, vp.RateLimited("store.dynamo", 1500*time.Millisecond, secret)),
			"send_message: rate_limited: too many requests right now; retry after 2 seconds"},
		{"rate limited without a wait", vp.RateLimited("github", 0, secret),
			"send_message: rate_limited: too many requests right now; retry in a few seconds"},
		{"rate limited by a limit of the domain", &vp.Error{Op: "validate_okf_bundle", Kind: vp.KindRateLimited, Field: "bundle", RetryAfter: 2 * time.Second,
			Msg: "this server holds at most 268435456 bytes of bundles at once (the limit)"},
			"send_message: rate_limited: bundle: this server holds at most 268435456 bytes of bundles at once (the limit); retry after 2 seconds"},
		{"other kinds unchanged", vp.E("send_message", vp.KindInvalid, "to", "is required"),
			"invalid_argument: send_message: to: is required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := s.toolError(context.Background(), "send_message", tt.err).Error()
			if got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
			if strings.Contains(got, "SQLITE") {
				t.Fatal("backend detail leaked to the caller")
			}
		})
	}
}
