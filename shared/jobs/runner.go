// Package jobs holds the server-side jobs of VantagePeers (DESIGN.md §10).
// A job is a plain Go function over the domain services; on AWS an
// EventBridge schedule or an SQS event invokes it through a Lambda entry
// point, and the embedded server calls the same function from RunEvery.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"
)

// Func is one run of a job at a given time. Jobs take the time as an
// argument so that tests (and retries) can replay a run exactly.
type Func func(ctx context.Context, now time.Time) error

// RunEvery runs fn now and then at every multiple of interval on the wall
// clock (every minute on the minute, for interval = time.Minute), until ctx
// is done. It returns once ctx is done and the run in progress, if any, has
// finished, so that a caller can wait for it before closing the store. A
// run that errs or panics is logged and does not stop later runs; a run
// that outlasts interval delays the next one (runs never overlap) and the
// ticks it covered are not made up: the next run sees everything due.
func RunEvery(ctx context.Context, log *slog.Logger, name string, interval time.Duration, fn Func) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if interval <= 0 {
		panic(fmt.Sprintf("jobs.RunEvery(%s): interval must be positive, got %v", name, interval))
	}
	log = log.With("job", name)
	timer := time.NewTimer(0) // first run at once
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		runOnce(ctx, log, fn, time.Now())
		now := time.Now()
		timer.Reset(now.Truncate(interval).Add(interval).Sub(now))
	}
}

// runOnce calls fn, logging its outcome; a panic is recovered and logged.
func runOnce(ctx context.Context, log *slog.Logger, fn Func, now time.Time) {
	start := time.Now()
	defer func() {
		if r := recover(); r != nil {
			log.ErrorContext(ctx, "job panicked", "panic", r, "stack", string(debug.Stack()))
		}
	}()
	if err := fn(ctx, now); err != nil {
		if ctx.Err() != nil {
			log.InfoContext(ctx, "job interrupted by shutdown", "err", err)
			return
		}
		log.ErrorContext(ctx, "job failed", "err", err, "took", time.Since(start))
		return
	}
	log.DebugContext(ctx, "job done", "took", time.Since(start))
}
