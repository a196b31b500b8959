package jobs

import (
	"context"
	"errors"
	"log/slog"

	"github.com/vantagepeers/vantagepeers/shared/coord"
)

// CoordIndexer is the domain call the keyword-search backfill makes;
// *coord.Service implements it.
type CoordIndexer interface {
	EnsureIndexed(ctx context.Context, tenant string) (coord.ReindexReport, error)
}

// ReindexCoord makes the messages, tasks, briefing notes and components
// that tenants wrote before keyword search existed searchable: for each
// tenant whose index lacks the backfill marker it indexes them all, then
// writes the marker (so it runs once per index, and again if the index is
// lost). Writes made meanwhile index themselves. A tenant that fails is
// logged and the others go on; the errors are returned joined.
func ReindexCoord(ctx context.Context, svc CoordIndexer, tenants []string, log *slog.Logger) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var errs []error
	for _, t := range tenants {
		rep, err := svc.EnsureIndexed(ctx, t)
		if err != nil {
			log.WarnContext(ctx, "keyword-search backfill failed", "tenant", t, "err", err)
			errs = append(errs, err)
			continue
		}
		if !rep.AlreadyIndexed {
			log.InfoContext(ctx, "keyword-search backfill done", "tenant", t, "messages", rep.Messages,
				"tasks", rep.Tasks, "briefings", rep.Briefings, "components", rep.Components)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}
