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

// jobsCmd is `vantagepeers jobs list | run NAME`: the catalogue the server
// runs in the background, and one run of a job now, for a user debugging
// a schedule (and for tests that need a job to have run).
func jobsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New("jobs: say list or run NAME")
	}
	switch args[0] {
	case "list":
		if len(args) > 1 {
			return fmt.Errorf("jobs list: unexpected %q", args[1])
		}
		listJobs(stdout, time.Now())
		return nil
	case "run":
		return runJob(ctx, args[1:], stdout, stderr)
	}
	return fmt.Errorf("jobs: unknown subcommand %q; use list or run NAME", args[0])
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

func runJob(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("jobs run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	tenant := fs.String("tenant", "", "run for this tenant only (jobs that visit the tenants one by one)")
	// The name may come before the flags (jobs run NAME --tenant T).
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if name == "" && fs.NArg() > 0 {
		name = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("jobs run: unexpected %q", fs.Arg(0))
	}
	valid := strings.Join(vpapp.Catalogue(nil).Names(), ", ")
	if name == "" {
		return fmt.Errorf("jobs run: name the job; the jobs are %s", valid)
	}
	if _, ok := vpapp.Catalogue(nil).Lookup(name); !ok {
		return fmt.Errorf("jobs run: unknown job %q; the jobs are %s", name, valid)
	}
	if *tenant != "" {
		if j, _ := vpapp.Catalogue(nil).Lookup(name); !j.PerTenant {
			return fmt.Errorf("jobs run %s: --tenant: this job covers every tenant in one pass and cannot be limited to one", name)
		}
		if !vp.ValidTenant(*tenant) {
			return fmt.Errorf("jobs run %s: --tenant: %q is not a valid tenant id", name, *tenant)
		}
	}
	lvl := slog.LevelInfo
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", c.logLevel)
	}
	// What the job reports (its log lines) is what it did: show them as
	// text, on stdout.
	log := slog.New(slog.NewTextHandler(stdout, &slog.HandlerOptions{Level: lvl}))
	a, err := openApp(ctx, c.dataDir, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if a.newMaster != "" {
		fmt.Fprintf(stderr, "vantagepeers: created the master token (shown once, only its hash is stored): %s\n", a.newMaster)
	}
	j, _ := vpapp.Catalogue(a.Services).Lookup(name)
	d := a.jobDeps(log)
	if *tenant != "" {
		d.Tenants = func(context.Context) ([]string, error) { return []string{*tenant}, nil }
	}
	fn, err := j.Func(d)
	if err != nil {
		return fmt.Errorf("jobs run %s: %w", name, err)
	}
	start := time.Now()
	log.Info("job started", "job", name, "at", start.UTC().Format(time.RFC3339), "dataDir", c.dataDir, "tenant", *tenant)
	if err := fn(ctx, start); err != nil {
		return fmt.Errorf("jobs run %s: failed after %v: %w", name, time.Since(start).Round(time.Millisecond), err)
	}
	fmt.Fprintf(stdout, "%s: done in %v\n", name, time.Since(start).Round(time.Millisecond))
	return nil
}
