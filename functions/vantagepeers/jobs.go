package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/coord"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
)

// startJobs runs the background jobs of the embedded product in process —
// the same job functions an EventBridge schedule or SQS event invokes on
// AWS. It returns a function that stops them and waits for the current runs.
func (a *app) startJobs(ctx context.Context, log *slog.Logger) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	run := func(fn func()) {
		wg.Add(1)
		go func() { defer wg.Done(); fn() }()
	}
	// Several processes on one data dir (serve plus stdio hosts) are safe:
	// each recurring slot fires once, whoever gets there first.
	run(func() {
		jobs.RunEvery(ctx, log, "recurring-tasks", time.Minute, jobs.RecurringTasks(a.recurring, log))
	})
	run(func() {
		jobs.RunEvery(ctx, log, "iframe-cleanup", time.Hour, jobs.IframeCleanup(a.coord, log))
	})
	// Load the memories' search caches now rather than on each tenant's
	// first query; keyword partitions load on their first search.
	run(func() {
		began := time.Now()
		if err := a.index.Warm(ctx, func(t string) bool { return !coord.IsKeywordPartition(t) }); err != nil {
			if ctx.Err() == nil {
				log.Warn("warming the search index", "err", err)
			}
			return
		}
		log.Info("search index warm", "ms", time.Since(began).Milliseconds())
	})
	// Messages, tasks, briefing notes and components written before keyword
	// search existed are indexed once per index (the index keeps a marker).
	run(func() {
		tenants, err := a.tenants(ctx)
		if err == nil {
			err = jobs.ReindexCoord(ctx, a.coord, tenants, log)
		}
		if err != nil && ctx.Err() == nil {
			log.Warn("keyword-search backfill", "err", err)
		}
	})
	// Vectors are computed here, off the request path; text search works
	// from the moment a memory is stored.
	run(func() {
		jobs.RunEmbedder(ctx, jobs.EmbedderOptions{Queue: a.queue, Memory: a.memory, Logger: log}, jobs.DefaultEmbedPoll)
	})
	return func() { cancel(); wg.Wait() }
}
