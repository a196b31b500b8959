package vp_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestRetryableKinds(t *testing.T) {
	busy := errors.New("database is locked")
	tests := []struct {
		name       string
		err        error
		kind       vp.Kind
		retryable  bool
		retryAfter time.Duration
		limited    bool
	}{
		{"nil", nil, vp.KindOther, false, 0, false},
		{"plain", busy, vp.KindOther, false, 0, false},
		{"unavailable", vp.Unavailable("store.sqlite.Write", busy), vp.KindUnavailable, true, 0, false},
		{"rate limited", vp.RateLimited("github.comment", 30*time.Second, nil), vp.KindRateLimited, true, 30 * time.Second, true},
		{"negative retry-after is zero", vp.RateLimited("x", -time.Second, busy), vp.KindRateLimited, true, 0, true},
		{"wrapped by fmt", fmt.Errorf("outer: %w", vp.RateLimited("x", time.Minute, nil)), vp.KindRateLimited, true, time.Minute, true},
		{"wrapped by an op without kind", vp.Wrap("task.complete", vp.KindOther, vp.RateLimited("x", time.Second, nil)), vp.KindRateLimited, true, time.Second, true},
		{"rewrapped with its kind", vp.Wrap("mission.x", vp.KindRateLimited, vp.RateLimited("y", 5*time.Second, nil)), vp.KindRateLimited, true, 5 * time.Second, true},
		{"reclassified outside", vp.Wrap("x", vp.KindInvalid, vp.RateLimited("y", time.Second, nil)), vp.KindInvalid, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := vp.KindOf(tt.err); got != tt.kind {
				t.Errorf("KindOf = %v, want %v", got, tt.kind)
			}
			if got := vp.Retryable(tt.err); got != tt.retryable {
				t.Errorf("Retryable = %v, want %v", got, tt.retryable)
			}
			d, ok := vp.RetryAfter(tt.err)
			if d != tt.retryAfter || ok != tt.limited {
				t.Errorf("RetryAfter = %v, %v; want %v, %v", d, ok, tt.retryAfter, tt.limited)
			}
		})
	}
	if vp.Unavailable("x", nil) != nil {
		t.Error("Unavailable(op, nil) is not nil")
	}
	if got := vp.RateLimited("github.comment", 0, nil).Error(); got != "github.comment: rate_limited" {
		t.Errorf("Error() = %q", got)
	}
	if vp.KindUnavailable.String() != "unavailable" || vp.KindRateLimited.String() != "rate_limited" {
		t.Error("kind names")
	}
}
