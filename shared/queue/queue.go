// Package queue is the job-queue port used for asynchronous work such as
// embedding: the local durable queue (over the store port) in embedded mode,
// SQS on AWS. Delivery is at least once; handlers are idempotent.
package queue

import (
	"context"
	"time"
)

// Job is one unit of work.
type Job struct {
	ID      string
	Kind    string // e.g. "embed"
	Tenant  string
	Payload []byte
	// Attempts counts deliveries so far (1 on the first).
	Attempts int
}

// Queue is the port.
type Queue interface {
	Enqueue(ctx context.Context, jobs ...Job) error
	// Receive leases up to max jobs for visibility; a job not acked within
	// it is delivered again.
	Receive(ctx context.Context, max int, visibility time.Duration) ([]Job, error)
	// Ack removes a finished job.
	Ack(ctx context.Context, job Job) error
	// Fail records a failed attempt: retried with backoff, dead-lettered
	// after the queue's maximum attempts.
	Fail(ctx context.Context, job Job, cause error) error
}
