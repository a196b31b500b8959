package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
)

// jobDeps are what every job of the catalogue may use in this process.
func (a *app) jobDeps(log *slog.Logger) jobs.Deps {
	return jobs.Deps{Tenants: a.tenants, EmbedPoll: jobs.DefaultEmbedPoll, Logger: log}
}

// startJobs runs the catalogue's jobs in process (jobs.RunEmbedded) — the
// same job functions an EventBridge rule or SQS event invokes on AWS. It
// returns a function that stops them and waits for the current runs.
//
// Several processes on one data dir (serve plus stdio hosts) are safe:
// each recurring slot fires once, whoever gets there first.
func (a *app) startJobs(ctx context.Context, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { jobs.RunEmbedded(ctx, vpapp.Catalogue(a.Services), a.jobDeps(log)) })
	// The outbox worker: what writers Kick (the GitHub comments of the
	// issues capability) runs right after its commit, not at the outbox
	// job's next minute.
	wg.Go(func() { _ = a.Outbox.Run(ctx) })
	// Load the memories' search caches now rather than on each tenant's
	// first query; keyword partitions load on their first search. Not a
	// job: it fills this process's caches, there is nothing to run on AWS.
	wg.Go(func() {
		began := time.Now()
		if err := a.index.Warm(ctx, func(t string) bool { return !keyword.IsKeywordPartition(t) }); err != nil {
			if ctx.Err() == nil {
				log.Warn("warming the search index", "err", err)
			}
			return
		}
		log.Info("search index warm", "ms", time.Since(began).Milliseconds())
	})
	// SQLite keeps expired items (rate-limit counters, unused OAuth
	// clients, used codes) until they are purged; reads already hide them.
	wg.Go(func() { purgeExpired(ctx, a.store, purgeEvery, log) })
	return func() { cancel(); wg.Wait() }
}

// purgeEvery is how often the embedded server deletes expired items.
const purgeEvery = 10 * time.Minute

// purger deletes expired items (sqlite.Store).
type purger interface {
	PurgeExpired(ctx context.Context, limit int) (int64, error)
}

// purgeExpired deletes expired items now and then every interval until ctx
// ends, in batches so that no write holds the database long.
func purgeExpired(ctx context.Context, st purger, every time.Duration, log *slog.Logger) {
	for {
		for {
			n, err := st.PurgeExpired(ctx, 5000)
			if err != nil {
				if ctx.Err() == nil {
					log.Warn("purging expired items", "err", err)
				}
				break
			}
			if n > 0 {
				log.Debug("purged expired items", "n", n)
			}
			if n < 5000 {
				break
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}
