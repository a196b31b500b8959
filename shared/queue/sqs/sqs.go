// Package sqs implements the job-queue port on Amazon SQS (AWS mode) with
// aws-sdk-go-v2. Tests run it against fauxqs (see sqstest).
//
// A job travels as the message body {"id","kind","tenant","payload"}; its
// Attempts is SQS's ApproximateReceiveCount. Receive leases messages for
// the visibility timeout (SQS gives each message to one consumer until the
// timeout runs out); Ack deletes; Fail makes the message visible again after
// an exponential backoff (ChangeMessageVisibility) and, after MaxAttempts
// deliveries, moves it to DeadLetterURL when one is configured. Without
// DeadLetterURL, dead-lettering is the queue's redrive policy
// (maxReceiveCount = MaxAttempts), which the infrastructure sets.
//
// The port's Job carries no receipt handle, so the adapter remembers the
// handle of every job it received (by id and attempt) until it is acked or
// failed; jobs from a Lambda SQS event are decoded with Decode and
// acknowledged by the event source (batch item failures).
package sqs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// API is the part of the SQS client the adapter uses (*sqs.Client).
type API interface {
	SendMessage(context.Context, *awssqs.SendMessageInput, ...func(*awssqs.Options)) (*awssqs.SendMessageOutput, error)
	SendMessageBatch(context.Context, *awssqs.SendMessageBatchInput, ...func(*awssqs.Options)) (*awssqs.SendMessageBatchOutput, error)
	ReceiveMessage(context.Context, *awssqs.ReceiveMessageInput, ...func(*awssqs.Options)) (*awssqs.ReceiveMessageOutput, error)
	DeleteMessage(context.Context, *awssqs.DeleteMessageInput, ...func(*awssqs.Options)) (*awssqs.DeleteMessageOutput, error)
	ChangeMessageVisibility(context.Context, *awssqs.ChangeMessageVisibilityInput, ...func(*awssqs.Options)) (*awssqs.ChangeMessageVisibilityOutput, error)
}

// Options configures New. Client and QueueURL are required.
type Options struct {
	Client   API
	QueueURL string
	// DeadLetterURL receives jobs failed MaxAttempts times (optional; see
	// the package comment).
	DeadLetterURL string
	// MaxAttempts is how many deliveries a job gets (default 5).
	MaxAttempts int
	// Backoff is the delay before the second delivery of a failed job,
	// doubled each time up to MaxBackoff (SQS allows at most 12 hours).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Wait is the long-polling time of Receive (0 to 20 s; default 0: return
	// at once).
	Wait time.Duration
}

// Queue is the SQS adapter. It is safe for concurrent use.
type Queue struct {
	o       Options
	ids     *vp.IDs
	handles sync.Map // handleKey -> receipt handle
}

var _ queue.Queue = (*Queue)(nil)

// New returns an SQS queue.
func New(o Options) (*Queue, error) {
	if o.Client == nil || o.QueueURL == "" {
		return nil, errors.New("sqs: Client and QueueURL are required")
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 5 * time.Minute
	}
	o.MaxBackoff = min(o.MaxBackoff, 12*time.Hour)
	o.Wait = min(max(o.Wait, 0), 20*time.Second)
	return &Queue{o: o, ids: vp.NewIDs(nil)}, nil
}

// body is a job on the wire.
type body struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Tenant  string `json:"tenant,omitempty"`
	Payload []byte `json:"payload,omitempty"`
	// LastError is set on dead-lettered copies.
	LastError string `json:"lastError,omitempty"`
}

// Decode turns a message body and its receive count into a Job (for a
// Lambda handler fed by an SQS event source).
func Decode(msgBody string, receiveCount int) (queue.Job, error) {
	var b body
	if err := json.Unmarshal([]byte(msgBody), &b); err != nil {
		return queue.Job{}, fmt.Errorf("sqs: message is not a job: %w", err)
	}
	if b.ID == "" || b.Kind == "" {
		return queue.Job{}, errors.New("sqs: message is not a job: id and kind are required")
	}
	return queue.Job{ID: b.ID, Kind: b.Kind, Tenant: b.Tenant, Payload: b.Payload, Attempts: receiveCount}, nil
}

// Enqueue sends jobs, ten per request (SQS's batch limit). Jobs without an
// ID get one.
func (q *Queue) Enqueue(ctx context.Context, jobs ...queue.Job) error {
	for len(jobs) > 0 {
		n := min(len(jobs), 10)
		entries := make([]types.SendMessageBatchRequestEntry, 0, n)
		for i, j := range jobs[:n] {
			if j.Kind == "" {
				return errors.New("sqs: a job needs a kind")
			}
			if j.ID == "" {
				j.ID = q.ids.New("job")
			}
			data, _ := json.Marshal(body{ID: j.ID, Kind: j.Kind, Tenant: j.Tenant, Payload: j.Payload})
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(string(data))})
		}
		out, err := q.o.Client.SendMessageBatch(ctx, &awssqs.SendMessageBatchInput{QueueUrl: aws.String(q.o.QueueURL), Entries: entries})
		if err != nil {
			return fmt.Errorf("sqs: enqueue: %w", err)
		}
		if len(out.Failed) > 0 {
			f := out.Failed[0]
			return fmt.Errorf("sqs: enqueue: %d of %d jobs refused (first: %s %s)", len(out.Failed), n, aws.ToString(f.Code), aws.ToString(f.Message))
		}
		jobs = jobs[n:]
	}
	return nil
}

func handleKey(j queue.Job) string { return j.ID + "#" + strconv.Itoa(j.Attempts) }

// Receive leases up to n jobs (at most 10 per call, SQS's limit) for
// visibility. Messages that are not jobs are dead-lettered (or deleted).
func (q *Queue) Receive(ctx context.Context, n int, visibility time.Duration) ([]queue.Job, error) {
	if n <= 0 {
		return nil, nil
	}
	secs := int32(min(max(visibility.Round(time.Second), time.Second), 12*time.Hour) / time.Second)
	out, err := q.o.Client.ReceiveMessage(ctx, &awssqs.ReceiveMessageInput{
		QueueUrl:                    aws.String(q.o.QueueURL),
		MaxNumberOfMessages:         int32(min(n, 10)),
		VisibilityTimeout:           secs,
		WaitTimeSeconds:             int32(q.o.Wait / time.Second),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameApproximateReceiveCount},
	})
	if err != nil {
		return nil, fmt.Errorf("sqs: receive: %w", err)
	}
	jobs := make([]queue.Job, 0, len(out.Messages))
	for _, m := range out.Messages {
		count, _ := strconv.Atoi(m.Attributes[string(types.MessageSystemAttributeNameApproximateReceiveCount)])
		j, err := Decode(aws.ToString(m.Body), max(count, 1))
		if err != nil {
			q.discard(ctx, m, err)
			continue
		}
		q.handles.Store(handleKey(j), aws.ToString(m.ReceiptHandle))
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// discard moves an undecodable message out of the way.
func (q *Queue) discard(ctx context.Context, m types.Message, cause error) {
	if q.o.DeadLetterURL != "" {
		data, _ := json.Marshal(body{ID: aws.ToString(m.MessageId), Kind: "invalid", LastError: cause.Error(), Payload: []byte(aws.ToString(m.Body))})
		if _, err := q.o.Client.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(q.o.DeadLetterURL), MessageBody: aws.String(string(data))}); err != nil {
			return // leave it: it comes back after its visibility timeout
		}
	}
	_, _ = q.o.Client.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(q.o.QueueURL), ReceiptHandle: m.ReceiptHandle})
}

func (q *Queue) handle(j queue.Job) (string, error) {
	h, ok := q.handles.LoadAndDelete(handleKey(j))
	if !ok {
		return "", fmt.Errorf("sqs: job %s (attempt %d) was not received by this queue, or was already acked or failed", j.ID, j.Attempts)
	}
	return h.(string), nil
}

// Ack deletes a finished job.
func (q *Queue) Ack(ctx context.Context, job queue.Job) error {
	h, err := q.handle(job)
	if err != nil {
		return err
	}
	if _, err := q.o.Client.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(q.o.QueueURL), ReceiptHandle: aws.String(h)}); err != nil {
		return fmt.Errorf("sqs: ack %s: %w", job.ID, err)
	}
	return nil
}

// Fail schedules a retry after the backoff or, after MaxAttempts with a
// DeadLetterURL, moves the job there with its last error.
func (q *Queue) Fail(ctx context.Context, job queue.Job, cause error) error {
	h, err := q.handle(job)
	if err != nil {
		return err
	}
	if job.Attempts >= q.o.MaxAttempts && q.o.DeadLetterURL != "" {
		msg := "failed"
		if cause != nil {
			msg = cause.Error()
		}
		data, _ := json.Marshal(body{ID: job.ID, Kind: job.Kind, Tenant: job.Tenant, Payload: job.Payload, LastError: msg})
		if _, err := q.o.Client.SendMessage(ctx, &awssqs.SendMessageInput{QueueUrl: aws.String(q.o.DeadLetterURL), MessageBody: aws.String(string(data))}); err != nil {
			return fmt.Errorf("sqs: dead-letter %s: %w", job.ID, err)
		}
		if _, err := q.o.Client.DeleteMessage(ctx, &awssqs.DeleteMessageInput{QueueUrl: aws.String(q.o.QueueURL), ReceiptHandle: aws.String(h)}); err != nil {
			return fmt.Errorf("sqs: dead-letter %s: %w", job.ID, err)
		}
		return nil
	}
	delay := q.o.Backoff
	for i := 1; i < job.Attempts && delay < q.o.MaxBackoff; i++ {
		delay *= 2
	}
	delay = min(delay, q.o.MaxBackoff)
	if _, err := q.o.Client.ChangeMessageVisibility(ctx, &awssqs.ChangeMessageVisibilityInput{
		QueueUrl: aws.String(q.o.QueueURL), ReceiptHandle: aws.String(h), VisibilityTimeout: int32(delay.Round(time.Second) / time.Second),
	}); err != nil {
		return fmt.Errorf("sqs: fail %s: %w", job.ID, err)
	}
	return nil
}

// DeadLetter is a job read back from the dead-letter queue.
type DeadLetter struct {
	queue.Job
	LastError string
}

// DecodeDeadLetter reads a dead-letter message body.
func DecodeDeadLetter(msgBody string) (DeadLetter, error) {
	var b body
	if err := json.Unmarshal([]byte(msgBody), &b); err != nil {
		return DeadLetter{}, fmt.Errorf("sqs: dead letter is not a job: %w", err)
	}
	return DeadLetter{Job: queue.Job{ID: b.ID, Kind: b.Kind, Tenant: b.Tenant, Payload: b.Payload}, LastError: b.LastError}, nil
}
