package jobs_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
)

type fakeCoord struct {
	fired, cleaned, indexed atomic.Int32
}

func (f *fakeCoord) FireDue(context.Context, time.Time) (recurring.FireReport, error) {
	f.fired.Add(1)
	return recurring.FireReport{}, nil
}

func (f *fakeCoord) CleanupIframeSessions(context.Context, time.Time) (iframe.CleanupReport, error) {
	f.cleaned.Add(1)
	return iframe.CleanupReport{}, nil
}

func (f *fakeCoord) EnsureIndexed(context.Context, string) (keyword.ReindexReport, error) {
	f.indexed.Add(1)
	return keyword.ReindexReport{AlreadyIndexed: true}, nil
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestRunEmbedded: every cron job runs at once at start (the backfill once
// per tenant), a worker whose dependencies are missing is logged, not
// started, and RunEmbedded returns when its context ends.
func TestRunEmbedded(t *testing.T) {
	f := &fakeCoord{}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		jobs.RunEmbedded(ctx, catalogueOf(f), jobs.Deps{
			Tenants: func(context.Context) ([]string, error) { return []string{"default", "acme"}, nil },
			Logger:  slog.New(slog.NewJSONHandler(&logs, nil))})
	}()
	deadline := time.Now().Add(5 * time.Second)
	for (f.fired.Load() < 1 || f.cleaned.Load() < 1 || f.indexed.Load() < 2) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunEmbedded did not return after cancel")
	}
	if f.fired.Load() < 1 || f.cleaned.Load() < 1 || f.indexed.Load() != 2 {
		t.Errorf("fired %d, cleaned %d, indexed %d; want at least 1, at least 1, exactly 2 (once per tenant)",
			f.fired.Load(), f.cleaned.Load(), f.indexed.Load())
	}
	if out := logs.String(); !strings.Contains(out, `"job":"embedder"`) || !strings.Contains(out, "needs the embedding queue") {
		t.Errorf("the unwired embedder is not logged:\n%s", out)
	}
}

// catalogueOf is a catalogue of the job functions over f, shaped as the
// modules declare them (shared/app): two cron jobs, one at start per
// tenant, and a worker this process did not wire.
func catalogueOf(f *fakeCoord) jobs.Catalogue {
	every := jobs.MustParseSchedule("* * * * *")
	return jobs.Catalogue{
		{Name: "recurring-tasks", Kind: jobs.Cron, Schedule: every,
			Build: func(d jobs.Deps) (jobs.Func, error) { return jobs.RecurringTasks(f, d.Logger), nil }},
		{Name: "iframe-session-cleanup", Kind: jobs.Cron, Schedule: every,
			Build: func(d jobs.Deps) (jobs.Func, error) { return jobs.IframeCleanup(f, d.Logger), nil }},
		{Name: "search-backfill", Kind: jobs.Cron, Schedule: every, AtStart: true, PerTenant: true,
			Build: func(d jobs.Deps) (jobs.Func, error) { return jobs.SearchBackfill(f, d.Tenants, d.Logger), nil }},
		jobs.Embedder("embedder", "embedder", "embeds", nil),
	}
}
