package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

// Kind says what drives a job.
type Kind int

const (
	// Cron jobs run on their Schedule: in process in the embedded binary,
	// and on AWS by an EventBridge rule (derived from the Schedule) that
	// invokes the scheduler function.
	Cron Kind = iota + 1
	// Worker jobs drain a queue. They are not cron jobs with a short period
	// because the embedded binary wakes them on an in-process signal (a
	// stored memory is embedded within milliseconds) and on AWS an SQS event
	// source hands them the messages; a schedule would only add latency and
	// idle invocations. Func still runs one pass, for `vantagepeers jobs run`.
	Worker
)

func (k Kind) String() string {
	switch k {
	case Cron:
		return "cron"
	case Worker:
		return "worker"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Job is one entry of the catalogue.
type Job struct {
	Name string
	Kind Kind
	// Schedule is when a Cron job runs (5-field cron, UTC); zero for a Worker.
	Schedule Schedule
	// AtStart: the embedded binary runs the job once when it starts instead
	// of on Schedule. The keyword backfill is such a job: a process that
	// runs for days has indexed everything it writes itself, and the
	// tenants it can meet are known at start; a Lambda has no start, so
	// AWS runs it on Schedule.
	AtStart bool
	// Function is the Lambda function that runs the job on AWS.
	Function string
	// PerTenant: the job visits the tenants one by one (Deps.Tenants), so
	// a run can be limited to one tenant.
	PerTenant bool
	// Summary says what the job does, in one line.
	Summary string

	build func(d Deps) (Func, error)
	loop  func(d Deps) (func(ctx context.Context), error)
}

// Deps is what the jobs need, built once in main. A job whose dependency
// is nil is not wired in that process (Func returns ErrNotWired): the
// scheduler function without a search index has no keyword backfill.
type Deps struct {
	Recurring RecurringFirer
	Iframes   IframeCleaner
	// Indexer is set only when the coordination service has a search index.
	Indexer CoordIndexer
	Tenants TenantLister
	// Outbox runs the side effects committed with their causes.
	Outbox OutboxDrainer
	// Issues is the GitHub issues capability (PR monitor, statistics).
	Issues IssueJobs
	// Errors is the deployment error monitor.
	Errors ErrorScanner
	// Embedder configures the embedding worker (Queue and Memory required).
	Embedder EmbedderOptions
	// EmbedPoll bounds the worker's wait for jobs another process enqueued.
	EmbedPoll time.Duration
	Logger    *slog.Logger
}

// ErrNotWired is returned by Func and Loop for a job whose dependencies
// this process did not provide.
var ErrNotWired = errors.New("job not wired")

func notWired(job, field string) error {
	return fmt.Errorf("%w: %s needs Deps.%s", ErrNotWired, job, field)
}

// The job names. They are the names in logs, in `vantagepeers jobs`, and
// (through awsenv's generated copy) in the EventBridge rules.
const (
	JobRecurringTasks = "recurring-tasks"
	JobIframeCleanup  = "iframe-session-cleanup"
	JobSearchBackfill = "search-backfill"
	JobEmbedder       = "embedder"
	JobOutbox         = "outbox"
	JobPRMonitor      = "pr-monitor"
	JobIssueStats     = "issue-stats"
	JobErrorMonitor   = "error-monitor"
)

// Catalogue returns every job, in a fixed order. Each call returns fresh
// values: nothing in the catalogue is shared mutable state.
//
// To add a job (a monitor, daily statistics at "0 6 * * *"), add its entry
// here; the embedded runner, the scheduler function, `vantagepeers jobs`
// and the EventBridge rules (go generate ./shared/awsenv) follow.
func Catalogue() []Job {
	return []Job{
		{
			Name: JobRecurringTasks, Kind: Cron, Schedule: MustParseSchedule("* * * * *"), Function: awsenv.FuncScheduler,
			Summary: "creates the task of every recurring template due, once per scheduled time",
			build: func(d Deps) (Func, error) {
				if d.Recurring == nil {
					return nil, notWired(JobRecurringTasks, "Recurring")
				}
				return RecurringTasks(d.Recurring, d.Logger), nil
			},
		},
		{
			Name: JobIframeCleanup, Kind: Cron, Schedule: MustParseSchedule("0 * * * *"), Function: awsenv.FuncScheduler,
			Summary: "deletes expired (and revoked) iframe embed sessions",
			build: func(d Deps) (Func, error) {
				if d.Iframes == nil {
					return nil, notWired(JobIframeCleanup, "Iframes")
				}
				return IframeCleanup(d.Iframes, d.Logger), nil
			},
		},
		{
			// Every 10 minutes on AWS: writes index themselves, so the
			// backfill only matters after a deployment brings an index, and
			// each run reads the credential indexes (tenants.WithCredentials).
			Name: JobSearchBackfill, Kind: Cron, Schedule: MustParseSchedule("*/10 * * * *"), AtStart: true,
			Function: awsenv.FuncScheduler, PerTenant: true,
			Summary: "makes what was written before keyword search existed searchable, once per index",
			build: func(d Deps) (Func, error) {
				switch {
				case d.Indexer == nil:
					return nil, notWired(JobSearchBackfill, "Indexer")
				case d.Tenants == nil:
					return nil, notWired(JobSearchBackfill, "Tenants")
				}
				return SearchBackfill(d.Indexer, d.Tenants, d.Logger), nil
			},
		},
		{
			Name: JobOutbox, Kind: Cron, Schedule: MustParseSchedule("* * * * *"), Function: awsenv.FuncScheduler,
			Summary: "runs the side effects whose inline run failed or whose writer died, with backoff and dead letters",
			build: func(d Deps) (Func, error) {
				if d.Outbox == nil {
					return nil, notWired(JobOutbox, "Outbox")
				}
				return OutboxDrain(d.Outbox, d.Logger), nil
			},
		},
		{
			Name: JobPRMonitor, Kind: Cron, Schedule: MustParseSchedule("0 * * * *"), Function: awsenv.FuncScheduler, PerTenant: true,
			Summary: "polls the pull requests of tracked external issues (conditional requests) and tells the watcher on merge or close",
			build:   func(d Deps) (Func, error) { return issueJob(JobPRMonitor, d, IssueJobs.MonitorPRs) },
		},
		{
			Name: JobIssueStats, Kind: Cron, Schedule: MustParseSchedule("0 6 * * *"), Function: awsenv.FuncScheduler, PerTenant: true,
			Summary: "writes each mapped project's daily issue resolution snapshot (time to first response, time to fix)",
			build:   func(d Deps) (Func, error) { return issueJob(JobIssueStats, d, IssueJobs.SnapshotAll) },
		},
		{
			Name: JobErrorMonitor, Kind: Cron, Schedule: MustParseSchedule("*/5 * * * *"), Function: awsenv.FuncScheduler, PerTenant: true,
			Summary: "reads each monitored deployment's new error logs, groups and counts them; a new error files one [Auto] GitHub issue",
			build: func(d Deps) (Func, error) {
				if d.Errors == nil {
					return perTenant(JobErrorMonitor, d, "Errors", nil)
				}
				return perTenant(JobErrorMonitor, d, "", d.Errors.ScanAll)
			},
		},
		{
			Name: JobEmbedder, Kind: Worker, Function: awsenv.FuncEmbedder,
			Summary: "computes the vectors of stored memories from the embedding queue",
			build: func(d Deps) (Func, error) {
				o, err := embedderOptions(d)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context, _ time.Time) error { return drainEmbedJobs(ctx, o) }, nil
			},
			loop: func(d Deps) (func(context.Context), error) {
				o, err := embedderOptions(d)
				if err != nil {
					return nil, err
				}
				return func(ctx context.Context) { RunEmbedder(ctx, o, d.EmbedPoll) }, nil
			},
		},
	}
}

func embedderOptions(d Deps) (EmbedderOptions, error) {
	o := d.Embedder
	switch {
	case o.Queue == nil:
		return o, notWired(JobEmbedder, "Embedder.Queue")
	case o.Memory == nil:
		return o, notWired(JobEmbedder, "Embedder.Memory")
	}
	if o.Logger == nil {
		o.Logger = d.Logger
	}
	return o, nil
}

// drainEmbedJobs processes batches until one comes back short: a single
// pass over what is waiting now.
func drainEmbedJobs(ctx context.Context, o EmbedderOptions) error {
	o.defaults()
	for {
		n, err := ProcessEmbedJobs(ctx, o)
		if err != nil || n < o.Batch || ctx.Err() != nil {
			return err
		}
	}
}

// Func returns the function of one run of the job: for a Worker, one pass
// over the jobs waiting. It returns ErrNotWired when d lacks a dependency.
func (j Job) Func(d Deps) (Func, error) { return j.build(d) }

// Loop returns a Worker's long-running loop, which returns when ctx is
// done. It is an error for a Cron job.
func (j Job) Loop(d Deps) (func(ctx context.Context), error) {
	if j.loop == nil {
		return nil, fmt.Errorf("job %s is not a worker", j.Name)
	}
	return j.loop(d)
}

// Lookup returns the job named name.
func Lookup(name string) (Job, bool) {
	for _, j := range Catalogue() {
		if j.Name == name {
			return j, true
		}
	}
	return Job{}, false
}

// Names lists the jobs' names, in catalogue order.
func Names() []string {
	var out []string
	for _, j := range Catalogue() {
		out = append(out, j.Name)
	}
	return out
}
