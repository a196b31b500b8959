package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"text/tabwriter"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// jobsCommand is `vantagepeers jobs list | run NAME`: the catalogue the
// server runs in the background, and one run of a job now, for a user
// debugging a schedule (and for tests that need a job to have run).
func jobsCommand() *command {
	var tenant string
	return &command{Name: "jobs",
		Synopsis: []string{"jobs list | run NAME [--tenant T] [--data-dir DIR]"},
		Summary:  "the background jobs; run one now",
		Details: `
list: the background jobs with their schedules (UTC). run NAME [--tenant T]: run one now.
`,
		Subs: []string{"list", "run"},
		BadSub: func(_ *env, sub string) error {
			if sub == "" {
				return errors.New("jobs: say list or run NAME")
			}
			return fmt.Errorf("jobs: unknown subcommand %q; use list or run NAME", sub)
		},
		Flags: func(fs *flag.FlagSet, sub string) {
			if sub == "run" {
				fs.StringVar(&tenant, "tenant", "", "run for this tenant only (jobs that visit the tenants one by one)")
			}
		},
		Run: func(ctx context.Context, e *env) error {
			if e.sub == "run" {
				return runJob(ctx, e, tenant)
			}
			if len(e.args) > 0 {
				return fmt.Errorf("jobs list: unexpected %q", e.args[0])
			}
			listJobs(e.stdout, time.Now())
			return nil
		},
	}
}

// listJobs prints one line a job: name, schedule (UTC), next run (UTC).
func listJobs(w io.Writer, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, j := range vpapp.Catalogue(nil) {
		sched, next := "worker", "continuous"
		if j.Kind == jobs.Cron {
			sched, next = j.Schedule.String(), j.Schedule.Next(now).Format(time.RFC3339)
			if j.AtStart {
				next += " (embedded: once at start)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", j.Name, sched, next)
	}
	_ = tw.Flush()
}

func runJob(ctx context.Context, e *env, tenant string) error {
	var name string
	if len(e.args) > 0 {
		name = e.args[0]
	}
	if len(e.args) > 1 {
		return fmt.Errorf("jobs run: unexpected %q", e.args[1])
	}
	valid := strings.Join(vpapp.Catalogue(nil).Names(), ", ")
	if name == "" {
		return fmt.Errorf("jobs run: name the job; the jobs are %s", valid)
	}
	declared, ok := vpapp.Catalogue(nil).Lookup(name)
	if !ok {
		return fmt.Errorf("jobs run: unknown job %q; the jobs are %s", name, valid)
	}
	if tenant != "" {
		if !declared.PerTenant {
			return fmt.Errorf("jobs run %s: --tenant: this job covers every tenant in one pass and cannot be limited to one", name)
		}
		if !vp.ValidTenant(tenant) {
			return fmt.Errorf("jobs run %s: --tenant: %q is not a valid tenant id", name, tenant)
		}
	}
	lvl, err := e.level()
	if err != nil {
		return err
	}
	// What the job reports (its log lines) is what it did: show them as
	// text, on stdout.
	log := slog.New(slog.NewTextHandler(e.stdout, &slog.HandlerOptions{Level: lvl}))
	e.log = log
	a, err := e.app(ctx)
	if err != nil {
		return err
	}
	if a.newMaster != "" {
		fmt.Fprintf(e.stderr, "vantagepeers: created the master token (shown once, only its hash is stored): %s\n", a.newMaster)
	}
	j, _ := vpapp.Catalogue(a.Services).Lookup(name)
	d := a.jobDeps(log)
	if tenant != "" {
		d.Tenants = func(context.Context) ([]string, error) { return []string{tenant}, nil }
	}
	fn, err := j.Func(d)
	if err != nil {
		return fmt.Errorf("jobs run %s: %w", name, err)
	}
	start := time.Now()
	log.Info("job started", "job", name, "at", start.UTC().Format(time.RFC3339), "dataDir", e.dataDir, "tenant", tenant)
	if err := fn(ctx, start); err != nil {
		return fmt.Errorf("jobs run %s: failed after %v: %w", name, time.Since(start).Round(time.Millisecond), err)
	}
	fmt.Fprintf(e.stdout, "%s: done in %v\n", name, time.Since(start).Round(time.Millisecond))
	return nil
}
