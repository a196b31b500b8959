package awsapp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/queue"
	sqsqueue "github.com/vantagepeers/vantagepeers/shared/queue/sqs"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
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
	Name string
	// Every is the job's period: it runs on the events whose minute is a
	// multiple of it (the schedule fires every minute).
	Every time.Duration
	Run   jobs.Func
}

// ScheduledJobs are the periodic jobs the scheduler function runs — the
// same job functions the embedded binary runs in process (DESIGN.md §10).
//
// TODO: add the monitors here as they are built (error monitor every 5
// minutes, PR monitor hourly, issue statistics daily at 06:00 UTC). Other
// expired rows need no job: DynamoDB TTL deletes them and every read
// filters them.
func (a *App) ScheduledJobs() []Scheduled {
	js := []Scheduled{
		{Name: "recurring-tasks", Every: time.Minute, Run: jobs.RecurringTasks(a.Recurring, a.Log)},
		{Name: "iframe-session-cleanup", Every: time.Hour, Run: jobs.IframeCleanup(a.Coord, a.Log)},
	}
	if a.Config.SearchEndpoint != "" { // Load gave the coordination service the index
		js = append(js, Scheduled{Name: "search-backfill", Every: SearchBackfillEvery,
			Run: beforeDeadline(jobs.SearchBackfill(a.Coord, a.Tenants, a.Log))})
	}
	return js
}

// SearchBackfillEvery is the period of the keyword-search backfill. Writes
// index themselves, so it only matters after a deployment that brings the
// index (or a new one) and for data written while none was configured;
// each run reads the credential indexes (see Tenants), so not every minute.
const SearchBackfillEvery = 10 * time.Minute

// backfillMargin is left of the invocation's time when a long backfill
// stops, so that it ends with its own error and log line instead of being
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
// scheduler knows of tenants (a Lambda keeps no list): the default tenant
// (the master token's), the tenant of every token an admin or a Clerk
// exchange made (the TOKENS index) and the tenant of every OAuth client
// (client-credentials tokens act there). Tokens of an authorization-code
// grant act in the tenant of the token that approved it, which is listed
// while that token lives. Two queries on server-wide indexes, no scan.
//
// Not listed: a tenant only the master token reaches (X-VP-Tenant), and
// one whose only credentials are OAuth grants approved by tokens that have
// since expired (Clerk tokens live 7 days); such a tenant is backfilled
// when it next gets a token.
func (a *App) Tenants(ctx context.Context) ([]string, error) {
	return credentialTenants(ctx, a.Store)
}

func credentialTenants(ctx context.Context, st store.Store) ([]string, error) {
	tokens := auth.New(auth.Options{Store: st}) // lists only: no master token
	toks, err := tokens.List(ctx, "")
	if err != nil {
		return nil, err
	}
	clients, err := oauth.New(oauth.Options{Store: st, Tokens: tokens}).ListClients(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{vp.DefaultTenant: true}
	out := []string{vp.DefaultTenant}
	add := func(t string) {
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	for _, t := range toks {
		add(t.Tenant)
	}
	for _, c := range clients {
		add(c.Tenant)
	}
	return out, nil
}

// HandleSchedule is the scheduler function: an EventBridge schedule invokes
// it every minute and it runs the jobs due at the event's time (its
// scheduled minute, so a retried invocation replays the same run). Every
// due job runs even when one fails; the error makes Lambda retry the
// invocation, which the jobs tolerate (recurring slots fire once).
func (a *App) HandleSchedule(ctx context.Context, ev events.EventBridgeEvent) error {
	now := ev.Time
	if now.IsZero() {
		now = time.Now()
	}
	at := now.UTC().Truncate(time.Minute)
	var errs []error
	for _, j := range a.ScheduledJobs() {
		if at.UnixNano()%int64(j.Every) != 0 {
			continue
		}
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
