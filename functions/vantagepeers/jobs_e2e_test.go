package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestJobsCommandsEndToEnd builds the binary and runs `jobs list` and
// `jobs run recurring-tasks` against a data directory holding a recurring
// template that is due: the run creates its task, which is read back.
func TestJobsCommandsEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the binary")
	}
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "vantagepeers")
	build := exec.Command("go", "build", "-o", bin, "./functions/vantagepeers")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	dataDir := filepath.Join(t.TempDir(), "data")
	vpRun := func(args ...string) (stdout, stderr string, err error) {
		t.Helper()
		var o, e bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		cmd.Env = append(cmd.Environ(), "VP_DATA_DIR="+dataDir, "VP_MASTER_TOKEN="+strings.Repeat("ab", 32))
		err = cmd.Run()
		return o.String(), e.String(), err
	}

	out, errOut, err := vpRun("jobs", "list")
	if err != nil {
		t.Fatalf("jobs list: %v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(vpapp.Catalogue(nil)) {
		t.Fatalf("jobs list printed %d lines, want one a job (%d):\n%s", len(lines), len(vpapp.Catalogue(nil)), out)
	}
	for i, j := range vpapp.Catalogue(nil) {
		f := strings.Fields(lines[i])
		if len(f) < 3 || f[0] != j.Name {
			t.Errorf("line %q, want %s first", lines[i], j.Name)
			continue
		}
		if j.Kind != jobs.Cron {
			continue
		}
		if !strings.Contains(lines[i], "  "+j.Schedule.String()+"  ") {
			t.Errorf("line %q lacks the schedule %q", lines[i], j.Schedule)
		}
		next, err := time.Parse(time.RFC3339, f[len(strings.Fields(j.Schedule.String()))+1])
		if err != nil || !strings.HasSuffix(next.Format(time.RFC3339), "Z") || !next.After(time.Now().Add(-time.Minute)) {
			t.Errorf("line %q: next run %v (%v), want a coming time in UTC", lines[i], next, err)
		}
	}

	// A template created two minutes ago with an every-minute schedule:
	// its first slot has passed, so it is due now.
	ctx := context.Background()
	p := auth.MasterPrincipal(vp.DefaultTenant)
	withStore := func(now func() time.Time, fn func(*recurring.Service, *task.Service)) {
		t.Helper()
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dataDir, "vantagepeers.db"), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		tasks := task.New(task.Options{Store: st, Now: now})
		fn(recurring.New(recurring.Options{Store: st, Now: now, Tasks: tasks}), tasks)
	}
	if _, _, err := vpRun("token", "list"); err != nil { // creates the data dir as the binary does
		t.Fatal(err)
	}
	var recID string
	withStore(func() time.Time { return time.Now().Add(-2 * time.Minute) }, func(c *recurring.Service, _ *task.Service) {
		r, err := c.CreateRecurringTask(ctx, p, recurring.CreateRecurringInput{Title: "Rotate the logs", AssignedTo: "alice",
			Priority: "low", CronExpression: "* * * * *", Timezone: "UTC", CreatedBy: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		recID = r.ID
	})

	out, errOut, err = vpRun("jobs", "run", "recurring-tasks")
	if err != nil {
		t.Fatalf("jobs run recurring-tasks: %v\nstdout %s\nstderr %s", err, out, errOut)
	}
	if !strings.Contains(out, "fired=1") || !strings.Contains(out, "recurring-tasks: done in") {
		t.Errorf("jobs run printed:\n%s\nwant the fired task and the done line", out)
	}
	withStore(nil, func(c *recurring.Service, tasks *task.Service) {
		r, err := c.GetRecurringTask(ctx, p, recID)
		if err != nil {
			t.Fatal(err)
		}
		if r.FiredCount != 1 || r.LastTaskID == "" {
			t.Fatalf("after the run: fired %d, last task %q; want 1 task", r.FiredCount, r.LastTaskID)
		}
		tk, err := tasks.GetTask(ctx, p, task.TaskRef{TaskID: r.LastTaskID})
		if err != nil || tk.Title != "Rotate the logs" || tk.AssignedTo != "alice" {
			t.Errorf("the fired task: %+v, %v", tk, err)
		}
	})

	// Failures exit non-zero with a message that says what to do.
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"jobs", "run", "iframe-cleanup"}, "unknown job \"iframe-cleanup\"; the jobs are " + strings.Join(vpapp.Catalogue(nil).Names(), ", ")},
		{[]string{"jobs", "run"}, "name the job; the jobs are"},
		{[]string{"jobs", "run", "recurring-tasks", "--tenant", "acme"}, "--tenant: this job covers every tenant"},
	} {
		_, errOut, err := vpRun(tc.args...)
		if err == nil || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: %v, stderr %q; want a failure saying %q", tc.args, err, errOut, tc.want)
		}
	}
	out, errOut, err = vpRun("jobs", "run", "search-backfill", "--tenant", "acme")
	if err != nil || !strings.Contains(out, "keyword-search backfill done") || !strings.Contains(out, "tenant=acme") {
		t.Errorf("search-backfill --tenant acme: %v\n%s%s", err, out, errOut)
	}
}
