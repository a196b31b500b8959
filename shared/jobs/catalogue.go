package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
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

// Job is one entry of the catalogue. The catalogue itself is derived
// from the capability modules (shared/app): each declares its jobs, with
// their functions bound to its services.
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

	// Build returns one run's function, or an error wrapping ErrNotWired
	// when this process lacks what the job runs on.
	Build func(d Deps) (Func, error)
	// BuildLoop returns a Worker's long-running loop; nil for a Cron job.
	BuildLoop func(d Deps) (func(ctx context.Context), error)
}

// Deps is what every job may use besides the services its module bound
// it to.
type Deps struct {
	Tenants TenantLister
	// EmbedPoll bounds the worker's wait for jobs another process enqueued.
	EmbedPoll time.Duration
	Logger    *slog.Logger
}

// ErrNotWired is returned by Func and Loop for a job whose dependencies
// this process did not provide.
var ErrNotWired = errors.New("job not wired")

// NotWired is the error of a job whose dependency named what is missing
// in this process.
func NotWired(job, what string) error {
	return fmt.Errorf("%w: %s needs %s", ErrNotWired, job, what)
}

// Catalogue is every job of a process, in a fixed order.
type Catalogue []Job

// Lookup returns the job named name.
func (c Catalogue) Lookup(name string) (Job, bool) {
	for _, j := range c {
		if j.Name == name {
			return j, true
		}
	}
	return Job{}, false
}

// Names lists the jobs' names, in catalogue order.
func (c Catalogue) Names() []string {
	out := make([]string, 0, len(c))
	for _, j := range c {
		out = append(out, j.Name)
	}
	return out
}

// Embedder is the entry of the embedding worker, for the module that
// owns the queue and the memory service (nil: not wired here).
func Embedder(name, function, summary string, o *EmbedderOptions) Job {
	return Job{Name: name, Kind: Worker, Function: function, Summary: summary,
		Build: func(d Deps) (Func, error) {
			eo, err := embedderOptions(name, o, d)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context, _ time.Time) error { return drainEmbedJobs(ctx, eo) }, nil
		},
		BuildLoop: func(d Deps) (func(context.Context), error) {
			eo, err := embedderOptions(name, o, d)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) { RunEmbedder(ctx, eo, d.EmbedPoll) }, nil
		},
	}
}

func embedderOptions(name string, po *EmbedderOptions, d Deps) (EmbedderOptions, error) {
	if po == nil || po.Queue == nil || po.Memory == nil {
		return EmbedderOptions{}, NotWired(name, "the embedding queue and the memory service")
	}
	o := *po
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
func (j Job) Func(d Deps) (Func, error) {
	if j.Build == nil {
		return nil, NotWired(j.Name, "a function")
	}
	return j.Build(d)
}

// Loop returns a Worker's long-running loop, which returns when ctx is
// done. It is an error for a Cron job.
func (j Job) Loop(d Deps) (func(ctx context.Context), error) {
	if j.BuildLoop == nil {
		return nil, fmt.Errorf("job %s is not a worker", j.Name)
	}
	return j.BuildLoop(d)
}
