package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue"
)

// Defaults of EmbedderOptions.
const (
	DefaultEmbedBatch      = 32
	DefaultEmbedVisibility = 2 * time.Minute
	DefaultEmbedPoll       = 100 * time.Millisecond
)

// EmbedderOptions configures the embedding worker. The queue should carry
// only "embed" and "reembed" jobs (memory.JobEmbed, memory.JobReembed):
// other kinds fail and are dead-lettered.
type EmbedderOptions struct {
	Queue  queue.Queue
	Memory *memory.Service
	// Batch is how many jobs one receive takes (their texts are embedded
	// in one call); default 32.
	Batch int
	// Visibility is the lease of a received batch, and the time limit of
	// its processing; default 2 minutes.
	Visibility time.Duration
	Logger     *slog.Logger
}

func (o *EmbedderOptions) defaults() {
	if o.Batch <= 0 {
		o.Batch = DefaultEmbedBatch
	}
	if o.Visibility <= 0 {
		o.Visibility = DefaultEmbedVisibility
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// ProcessEmbedJobs receives one batch of embedding jobs and handles it
// (HandleEmbedJobs). It returns how many jobs it received.
func ProcessEmbedJobs(ctx context.Context, o EmbedderOptions) (int, error) {
	o.defaults()
	if o.Queue == nil || o.Memory == nil {
		return 0, errors.New("jobs.ProcessEmbedJobs: Queue and Memory are required")
	}
	batch, err := o.Queue.Receive(ctx, o.Batch, o.Visibility)
	if err != nil {
		return 0, fmt.Errorf("embedder: receive: %w", err)
	}
	if len(batch) == 0 {
		return 0, nil
	}
	return len(batch), HandleEmbedJobs(ctx, o, batch)
}

// HandleEmbedJobs embeds a batch of jobs already received (by Receive, or
// handed over by an SQS event source): each job is acked when done, or
// failed — retried with backoff, dead-lettered after the queue's maximum
// attempts. The memory itself is never touched by a failure: it stays
// stored and text-searchable. The returned error reports acks and fails
// that could not be recorded.
func HandleEmbedJobs(ctx context.Context, o EmbedderOptions, batch []queue.Job) error {
	o.defaults()
	wctx, cancel := context.WithTimeout(ctx, o.Visibility)
	errs := o.Memory.EmbedJobs(wctx, batch)
	cancel()
	var failed []error
	for i, j := range batch {
		if errs[i] == nil {
			if err := o.Queue.Ack(ctx, j); err != nil {
				failed = append(failed, err)
			}
			continue
		}
		o.Logger.WarnContext(ctx, "embedding job failed", "job", j.ID, "kind", j.Kind, "tenant", j.Tenant,
			"attempt", j.Attempts, "err", errs[i])
		if err := o.Queue.Fail(ctx, j, errs[i]); err != nil {
			failed = append(failed, err)
		}
	}
	return errors.Join(failed...)
}

// readier is implemented by queues that signal new work (storequeue).
type readier interface{ Ready() <-chan struct{} }

// RunEmbedder drains the queue until ctx is done: batch after batch while
// jobs are waiting, then it waits for the queue's signal (an in-process
// enqueue) or poll, whichever comes first. With the in-process queue a
// stored memory is semantically searchable within milliseconds; poll bounds
// the delay for jobs enqueued by another process. It returns once ctx is
// done and the batch in progress has finished.
func RunEmbedder(ctx context.Context, o EmbedderOptions, poll time.Duration) {
	o.defaults()
	if poll <= 0 {
		poll = DefaultEmbedPoll
	}
	var ready <-chan struct{}
	if r, ok := o.Queue.(readier); ok {
		ready = r.Ready()
	}
	log := o.Logger.With("job", "embedder")
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		n, err := processSafely(ctx, o)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.ErrorContext(ctx, "embedding batch failed", "err", err)
		}
		if n == o.Batch && err == nil {
			continue // more may be waiting
		}
		timer.Reset(poll)
		select {
		case <-ctx.Done():
			return
		case <-ready:
		case <-timer.C:
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

func processSafely(ctx context.Context, o EmbedderOptions) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("embedder panicked: %v\n%s", r, debug.Stack())
		}
	}()
	return ProcessEmbedJobs(ctx, o)
}
