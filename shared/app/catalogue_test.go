package app_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
)

// TestCatalogue: the modules' jobs are well formed, each says what it
// lacks in a process that did not build its service, and the catalogue
// is the one the embedded binary and the scheduler ran before it was
// derived from the modules.
func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, j := range app.Catalogue(nil) {
		t.Run(j.Name, func(t *testing.T) {
			if j.Name == "" || strings.ToLower(j.Name) != j.Name || strings.ContainsAny(j.Name, " _") {
				t.Errorf("name %q: want lower-case words joined by '-'", j.Name)
			}
			if seen[j.Name] {
				t.Errorf("name %q is in the catalogue twice", j.Name)
			}
			seen[j.Name] = true
			if j.Summary == "" {
				t.Error("no summary")
			}
			switch j.Kind {
			case jobs.Cron:
				if j.Schedule.IsZero() {
					t.Fatal("a cron job without a schedule")
				}
				// The schedule as written parses again, the same.
				again, err := jobs.ParseSchedule(j.Schedule.String())
				if err != nil || again.String() != j.Schedule.String() {
					t.Errorf("schedule %q: %v", j.Schedule, err)
				}
				if _, err := j.Schedule.EventBridge(); err != nil {
					t.Errorf("schedule %q has no EventBridge form: %v", j.Schedule, err)
				}
				if j.Function != awsenv.FuncScheduler {
					t.Errorf("function %q: cron jobs run in the scheduler function", j.Function)
				}
				if _, err := j.Loop(jobs.Deps{}); err == nil {
					t.Error("a cron job has a worker loop")
				}
			case jobs.Worker:
				if !j.Schedule.IsZero() || j.AtStart {
					t.Errorf("a worker with a schedule %q (at start %v)", j.Schedule, j.AtStart)
				}
				if _, err := j.Loop(jobs.Deps{}); !errors.Is(err, jobs.ErrNotWired) {
					t.Errorf("Loop without dependencies: %v, want ErrNotWired", err)
				}
			default:
				t.Errorf("kind %v", j.Kind)
			}
			// Without its dependencies a job says which one it lacks.
			if _, err := j.Func(jobs.Deps{}); !errors.Is(err, jobs.ErrNotWired) || !strings.Contains(err.Error(), " needs ") {
				t.Errorf("Func without dependencies: %v, want ErrNotWired naming the field", err)
			}
			if got, ok := app.Catalogue(nil).Lookup(j.Name); !ok || got.Name != j.Name {
				t.Errorf("Lookup(%q) = %v, %v", j.Name, got.Name, ok)
			}
		})
	}
	// The behaviour the catalogue replaced: the embedded binary and the
	// scheduler ran these, at these periods.
	want := map[string]string{
		"recurring-tasks":        "* * * * *",
		"iframe-session-cleanup": "0 * * * *",
		"search-backfill":        "*/10 * * * *",
		"embedder":               "",
		"outbox":                 "* * * * *",
		"pr-monitor":             "0 * * * *",   // §11.6: hourly
		"issue-stats":            "0 6 * * *",   // §11.4: daily at 06:00 UTC
		"error-monitor":          "*/5 * * * *", // §12: every 5 minutes
		"reservation-expiry":     "* * * * *",   // issue 23: the holder hears of an expiry within a minute
	}
	for name, sched := range want {
		j, ok := app.Catalogue(nil).Lookup(name)
		if !ok {
			t.Errorf("no job %s", name)
			continue
		}
		if j.Schedule.String() != sched {
			t.Errorf("%s: schedule %q, want %q", name, j.Schedule, sched)
		}
	}
	if j, _ := app.Catalogue(nil).Lookup("search-backfill"); !j.AtStart || !j.PerTenant {
		t.Errorf("search-backfill: at start %v, per tenant %v; want both", j.AtStart, j.PerTenant)
	}
	if _, ok := app.Catalogue(nil).Lookup("iframe-cleanup"); ok {
		t.Error("the embedded binary's old name is back; one name per job")
	}
	if got := len(app.Catalogue(nil).Names()); got != len(want) {
		t.Errorf("%d jobs, want %d: add the new one to this test", got, len(want))
	}
}
