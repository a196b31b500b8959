// Package jobs holds the server-side jobs of VantagePeers. A job is a plain Go function over the domain services; on AWS an
// EventBridge schedule or an SQS event invokes it through a Lambda entry
// point, and the embedded server calls the same function from RunEvery.
package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
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

// RunSchedule runs fn now and then at every fire time of sched (UTC) until
// ctx is done, with RunEvery's guarantees: it returns once the run in
// progress has finished, a failing or panicking run is logged and does not
// stop later ones, runs never overlap and fire times a long run covered are
// not made up. The first run is immediate so that a process started after
// downtime catches up at once rather than at the next fire time.
func RunSchedule(ctx context.Context, log *slog.Logger, name string, sched Schedule, fn Func) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if sched.IsZero() {
		panic(fmt.Sprintf("jobs.RunSchedule(%s): no schedule", name))
	}
	log = log.With("job", name)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		runOnce(ctx, log, fn, time.Now())
		now := time.Now()
		next := sched.Next(now)
		if next.IsZero() {
			return // never fires again
		}
		timer.Reset(next.Sub(now))
	}
}

// RunEmbedded runs every job of cat the way the embedded binary does:
// Cron jobs on their schedule (AtStart ones once, at once), Workers as
// their loop. A job this process did not wire is logged and skipped. It
// returns once ctx is done and every run in progress has finished.
func RunEmbedded(ctx context.Context, cat Catalogue, d Deps) {
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var wg sync.WaitGroup
	for _, j := range cat {
		var run func()
		switch j.Kind {
		case Worker:
			loop, err := j.Loop(d)
			if err != nil {
				log.WarnContext(ctx, "job not started", "job", j.Name, "err", err)
				continue
			}
			run = func() { loop(ctx) }
		case Cron:
			fn, err := j.Func(d)
			if err != nil {
				log.WarnContext(ctx, "job not started", "job", j.Name, "err", err)
				continue
			}
			if j.AtStart {
				run = func() { runOnce(ctx, log.With("job", j.Name), fn, time.Now()) }
			} else {
				run = func() { RunSchedule(ctx, log, j.Name, j.Schedule, fn) }
			}
		}
		wg.Go(run)
	}
	wg.Wait()
}
