package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/keyword"
)

// CoordIndexer is the domain call the keyword-search backfill makes;
// *keyword.Service implements it.
type CoordIndexer interface {
	EnsureIndexed(ctx context.Context, tenant string) (keyword.ReindexReport, error)
}

// ReindexCoord makes the messages, tasks, briefing notes and components
// that tenants wrote before keyword search existed searchable: for each
// tenant whose index lacks the backfill marker it indexes them all, then
// writes the marker (so it runs once per index, and again if the index is
// lost). Writes made meanwhile index themselves. A tenant that fails is
// logged and the others go on; the errors are returned joined. A tenant cut
// short (the Lambda's deadline) resumes at its checkpoint on the next run.
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
			log.InfoContext(ctx, "keyword-search backfill done", "tenant", t, "resumed", rep.Resumed, "messages", rep.Messages,
				"tasks", rep.Tasks, "briefings", rep.Briefings, "components", rep.Components)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

// TenantLister returns the tenants a job visits. A Lambda keeps no list of
// tenants: on AWS one is read from the stored credentials (awsapp).
type TenantLister func(ctx context.Context) ([]string, error)

// SearchBackfill is ReindexCoord as a periodic job, for servers that learn
// their tenants as they run: each run lists the tenants, then backfills
// those whose index lacks the marker. Once a tenant is backfilled a run
// costs the listing and, per tenant, nothing in a process that has seen its
// marker or one index read in a fresh one; a tenant that appears is
// backfilled within one period.
func SearchBackfill(svc CoordIndexer, tenants TenantLister, log *slog.Logger) Func {
	return func(ctx context.Context, _ time.Time) error {
		ts, err := tenants(ctx)
		if err != nil {
			return fmt.Errorf("keyword-search backfill: listing the tenants: %w", err)
		}
		return ReindexCoord(ctx, svc, ts, log)
	}
}
