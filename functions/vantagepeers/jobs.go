package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
)

// jobDeps wires the catalogue's jobs to this data directory's services.
func (a *app) jobDeps(log *slog.Logger) jobs.Deps {
	return jobs.Deps{
		Recurring: a.recurring, Iframes: a.iframes, Indexer: a.keyword, Tenants: a.tenants, Outbox: a.outbox, Issues: a.issues, Errors: a.errors,
		Embedder:  jobs.EmbedderOptions{Queue: a.queue, Memory: a.memory, Logger: log},
		EmbedPoll: jobs.DefaultEmbedPoll,
		Logger:    log,
	}
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
	wg.Go(func() { jobs.RunEmbedded(ctx, a.jobDeps(log)) })
	// The outbox worker: what writers Kick (the GitHub comments of the
	// issues capability) runs right after its commit, not at the outbox
	// job's next minute.
	wg.Go(func() { _ = a.outbox.Run(ctx) })
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
	return func() { cancel(); wg.Wait() }
}
