package awsapp_test

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/aws/aws-lambda-go/events"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

func schedulerOnSQLite(t *testing.T, logs *bytes.Buffer) *awsapp.App {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	log := awsapp.NewLogger(logs, slog.LevelInfo, awsenv.FuncScheduler)
	svc, err := vpapp.Build(ctx, vpapp.Ports{Groups: vpapp.Coordination, Store: st, Index: idx, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return &awsapp.App{Services: svc, Function: awsenv.FuncScheduler, Log: log}
}

// TestSchedulerRunsTheCatalogue: the scheduler function's jobs are the
// catalogue's cron jobs, by the same names and schedules the embedded
// binary runs.
func TestSchedulerRunsTheCatalogue(t *testing.T) {
	var logs bytes.Buffer
	a := schedulerOnSQLite(t, &logs)
	var want []string
	for _, j := range vpapp.Catalogue(nil) {
		if j.Kind == jobs.Cron {
			want = append(want, j.Name+" "+j.Schedule.String())
		}
	}
	var got []string
	for _, j := range a.ScheduledJobs() {
		got = append(got, j.Name+" "+j.Schedule.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("scheduled %v, want the catalogue's %v", got, want)
	}
}

// TestHandleScheduleByJob: an event naming a job (the stack's per-job
// rules) runs that job alone, whatever its minute; an unknown name is an
// error listing the jobs; a known job this function is not wired for is
// not an error.
func TestHandleScheduleByJob(t *testing.T) {
	var logs bytes.Buffer
	a := schedulerOnSQLite(t, &logs)
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 10, 7, 0, 0, time.UTC) // not an hour: the cleanup is not due
	if err := a.HandleSchedule(ctx, events.EventBridgeEvent{Time: at, Detail: []byte(`{"job":"iframe-session-cleanup"}`)}); err != nil {
		t.Fatal(err)
	}
	if out := logs.String(); !strings.Contains(out, `"job":"iframe-session-cleanup"`) || strings.Contains(out, `"job":"recurring-tasks"`) {
		t.Errorf("want the cleanup alone:\n%s", out)
	}
	err := a.HandleSchedule(ctx, events.EventBridgeEvent{Time: at, Detail: []byte(`{"job":"iframe-cleanup"}`)})
	if err == nil || !strings.Contains(err.Error(), "iframe-session-cleanup") {
		t.Errorf("unknown job: %v, want an error listing the jobs", err)
	}
	a.Index = nil // no index: no backfill
	logs.Reset()
	if err := a.HandleSchedule(ctx, events.EventBridgeEvent{Time: at, Detail: []byte(`{"job":"search-backfill"}`)}); err != nil {
		t.Errorf("backfill without an index: %v", err)
	}
	if !strings.Contains(logs.String(), "job not wired here") {
		t.Errorf("no log line:\n%s", logs.String())
	}
}
