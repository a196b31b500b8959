package jobs

import (
	"context"
	"log/slog"
	"time"
)

// OutboxDrainer is the call the outbox job makes; *outbox.Outbox
// implements it.
type OutboxDrainer interface {
	Drain(ctx context.Context) (int, error)
}

// OutboxDrain is the outbox job: one pass over the side effects that are
// due — those whose inline run failed (after their backoff) and those whose
// writer died between its commit and the effect. The writers run their
// effects right after their commits (outbox.RunInline, Flush), so this job
// is the backstop, not the path: once a minute is enough.
func OutboxDrain(ob OutboxDrainer, log *slog.Logger) Func {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, _ time.Time) error {
		n, err := ob.Drain(ctx)
		if n > 0 {
			log.InfoContext(ctx, "outbox drained", "jobs", n)
		}
		return err
	}
}
