package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/recurring"
)

// RecurringFirer is the domain call the recurring-tasks job makes;
// *recurring.Service implements it.
type RecurringFirer interface {
	FireDue(ctx context.Context, now time.Time) (recurring.FireReport, error)
}

// RecurringTasks is the recurring-tasks job: every run creates the task of
// each template due at now, in every tenant, exactly once per scheduled
// time (see recurring.Service.FireDue for the guarantees and the missed-slot
// rule). Run it every minute.
func RecurringTasks(svc RecurringFirer, log *slog.Logger) Func {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, now time.Time) error {
		// A run is bounded; when it stops with due templates left, go on
		// (a few rounds) rather than wait for the next tick.
		for round := 0; ; round++ {
			rep, err := svc.FireDue(ctx, now)
			if rep.Fired > 0 || rep.Failed > 0 || rep.More {
				log.InfoContext(ctx, "recurring tasks", "due", rep.Due, "fired", rep.Fired, "skipped", rep.Skipped,
					"missedSlots", rep.Missed, "failed", rep.Failed, "more", rep.More)
			}
			if err != nil || !rep.More || round == maxRecurringRounds-1 || ctx.Err() != nil {
				return err
			}
		}
	}
}

const maxRecurringRounds = 10
