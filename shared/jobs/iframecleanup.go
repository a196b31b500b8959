package jobs

import (
	"context"
	"log/slog"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/iframe"
)

// IframeCleaner is the domain call the iframe-session cleanup job makes;
// *iframe.Service implements it.
type IframeCleaner interface {
	CleanupIframeSessions(ctx context.Context, now time.Time) (iframe.CleanupReport, error)
}

// IframeCleanup deletes the iframe embed sessions of every tenant that
// expired at or before now (revoked ones included: revocation keeps a row
// only until it expires). Run it every hour or so; a run is bounded and
// goes on for a few rounds when rows are left.
func IframeCleanup(svc IframeCleaner, log *slog.Logger) Func {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return func(ctx context.Context, now time.Time) error {
		for round := 0; ; round++ {
			rep, err := svc.CleanupIframeSessions(ctx, now)
			if rep.Deleted > 0 {
				log.InfoContext(ctx, "iframe sessions cleaned up", "deleted", rep.Deleted, "more", rep.More)
			}
			if err != nil || !rep.More || round == maxIframeCleanupRounds-1 || ctx.Err() != nil {
				return err
			}
		}
	}
}

const maxIframeCleanupRounds = 10
