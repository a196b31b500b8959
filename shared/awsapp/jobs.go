package awsapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/aws/aws-lambda-go/events"

	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/queue"
	sqsqueue "github.com/vantagepeers/vantagepeers/shared/queue/sqs"
)

// HandleEmbedBatch is the embedder function: an SQS event source hands it a
// batch of embedding jobs; each is decoded and the batch is embedded in one
// call (memory.EmbedJobs, the function the embedded worker runs too). The
// items that failed — a body that is not a job, an unknown kind, an
// embedding error — are reported as batch item failures, so SQS delivers
// only those again (and moves them to the dead-letter queue after the
// queue's maxReceiveCount); the others are deleted by the event source.
//
// The event source mapping must enable ReportBatchItemFailures (infra/).
func (a *App) HandleEmbedBatch(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	fail := func(id string) {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: id})
	}
	batch := make([]queue.Job, 0, len(ev.Records))
	ids := make([]string, 0, len(ev.Records))
	for _, r := range ev.Records {
		n, _ := strconv.Atoi(r.Attributes["ApproximateReceiveCount"])
		j, err := sqsqueue.Decode(r.Body, n)
		if err != nil {
			a.Log.WarnContext(ctx, "embedding job rejected", "messageId", r.MessageId, "receiveCount", n, "err", err)
			fail(r.MessageId)
			continue
		}
		batch = append(batch, j)
		ids = append(ids, r.MessageId)
	}
	if len(batch) > 0 {
		errs := a.Memory.EmbedJobs(ctx, batch)
		for i, err := range errs {
			if err != nil {
				a.Log.WarnContext(ctx, "embedding job failed", "messageId", ids[i], "job", batch[i].ID,
					"kind", batch[i].Kind, "tenant", batch[i].Tenant, "attempt", batch[i].Attempts, "err", err)
				fail(ids[i])
			}
		}
	}
	a.Log.InfoContext(ctx, "embedding batch", "received", len(ev.Records), "failed", len(resp.BatchItemFailures))
	return resp, nil
}

// Scheduled is one periodic job of the scheduler function.
type Scheduled struct {
	Name     string
	Schedule jobs.Schedule
	Run      jobs.Func
}

// jobDeps are what every job of the catalogue may use in this function.
func (a *App) jobDeps() jobs.Deps {
	return jobs.Deps{Tenants: a.Tenants, Logger: a.Log}
}

// ScheduledJobs are the catalogue's Cron jobs this function is wired for —
// the same job functions the embedded binary runs in process. Other
// expired rows need no job: DynamoDB TTL deletes them and
// every read filters them.
func (a *App) ScheduledJobs() []Scheduled {
	d := a.jobDeps()
	var js []Scheduled
	for _, j := range vpapp.Catalogue(a.Services) {
		if j.Kind != jobs.Cron || j.Function != a.Function {
			continue
		}
		run, err := j.Func(d)
		if err != nil {
			continue // not wired here (no search index: no backfill)
		}
		js = append(js, Scheduled{Name: j.Name, Schedule: j.Schedule, Run: beforeDeadline(run)})
	}
	return js
}

// backfillMargin is left of the invocation's time when a job (in practice
// the long keyword backfill) stops, so that it ends with its own error and log line instead of being
// killed mid-batch by the Lambda timeout (the next run resumes at the
// tenant's checkpoint; the upserts are idempotent).
const backfillMargin = 3 * time.Second

func beforeDeadline(run jobs.Func) jobs.Func {
	return func(ctx context.Context, now time.Time) error {
		if dl, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, dl.Add(-backfillMargin))
			defer cancel()
		}
		return run(ctx, now)
	}
}

// Tenants returns the tenants that hold a credential, which is what the
// scheduler knows of tenants (a Lambda keeps no list): see
// tenants.WithCredentials, which the embedded binary uses too.
func (a *App) Tenants(ctx context.Context) ([]string, error) {
	return a.Services.Tenants(ctx)
}

// ScheduleDetail is the detail of the events the stack's EventBridge
// rules send: one rule per job of the catalogue, naming it.
type ScheduleDetail struct {
	Job string `json:"job"`
}

// HandleSchedule is the scheduler function. An event that names a job (the
// detail of the stack's per-job rules) runs that job; one that names none
// (a plain scheduled event) runs every job due at its minute. The time is
// the event's — its scheduled minute — so that a retried invocation replays
// the same run. Every job runs even when one fails; the error makes Lambda
// retry the invocation, which the jobs tolerate (recurring slots fire once).
func (a *App) HandleSchedule(ctx context.Context, ev events.EventBridgeEvent) error {
	now := ev.Time
	if now.IsZero() {
		now = time.Now()
	}
	at := now.UTC().Truncate(time.Minute)
	var detail ScheduleDetail
	if len(ev.Detail) > 0 {
		if err := json.Unmarshal(ev.Detail, &detail); err != nil {
			return fmt.Errorf("scheduler: event detail: %w", err)
		}
	}
	scheduled := a.ScheduledJobs()
	if detail.Job != "" {
		i := slices.IndexFunc(scheduled, func(j Scheduled) bool { return j.Name == detail.Job })
		if i < 0 {
			if _, ok := vpapp.Catalogue(nil).Lookup(detail.Job); ok {
				// A rule the stack always has, for a job this configuration
				// does not wire (the backfill without a search index):
				// nothing to do, and nothing a retry would change.
				a.Log.InfoContext(ctx, "job not wired here", "job", detail.Job, "at", at)
				return nil
			}
			return fmt.Errorf("scheduler: detail.job: unknown job %q; the jobs are %s", detail.Job, strings.Join(vpapp.Catalogue(nil).Names(), ", "))
		}
		scheduled = scheduled[i : i+1]
	} else {
		scheduled = slices.DeleteFunc(scheduled, func(j Scheduled) bool { return !j.Schedule.Due(at) })
	}
	var errs []error
	for _, j := range scheduled {
		start := time.Now()
		err := runJob(ctx, j, now)
		a.Log.InfoContext(ctx, "job", "job", j.Name, "at", at, "ms", time.Since(start).Milliseconds(), "err", err)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", j.Name, err))
		}
	}
	return errors.Join(errs...)
}

func runJob(ctx context.Context, j Scheduled, now time.Time) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return j.Run(ctx, now)
}
