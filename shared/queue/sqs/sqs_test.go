package sqs_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awssqs "github.com/aws/aws-sdk-go-v2/service/sqs"

	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/queue/sqs"
	"github.com/vantagepeers/vantagepeers/shared/queue/sqs/sqstest"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { sqstest.Main(m) }

func ctx() context.Context { return context.Background() }

func newQueue(t *testing.T, o sqs.Options) (*sqs.Queue, *awssqs.Client) {
	t.Helper()
	client := sqstest.Client(t)
	if o.QueueURL == "" {
		o.QueueURL = sqstest.NewQueue(t, client, nil)
	}
	o.Client = client
	q, err := sqs.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return q, client
}

// receiveAll receives until a receive comes back empty.
func receiveAll(t *testing.T, q *sqs.Queue, visibility time.Duration) []queue.Job {
	t.Helper()
	var out []queue.Job
	for {
		got, err := q.Receive(ctx(), 10, visibility)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 {
			return out
		}
		out = append(out, got...)
	}
}

func TestEnqueueReceiveAck(t *testing.T) {
	q, _ := newQueue(t, sqs.Options{})
	var jobs []queue.Job
	for i := 0; i < 25; i++ {
		jobs = append(jobs, queue.Job{Kind: "embed", Tenant: "acme", Payload: []byte(fmt.Sprintf(`{"id":"m%d"}`, i))})
	}
	jobs[3].ID = "job_fixed"
	if err := q.Enqueue(ctx(), jobs...); err != nil {
		t.Fatal(err)
	}
	got := receiveAll(t, q, time.Minute)
	if len(got) != 25 {
		t.Fatalf("received %d jobs, want 25", len(got))
	}
	payloads := map[string]bool{}
	fixed := false
	for _, j := range got {
		if j.Kind != "embed" || j.Tenant != "acme" || j.Attempts != 1 || j.ID == "" {
			t.Fatalf("job %+v", j)
		}
		payloads[string(j.Payload)] = true
		fixed = fixed || j.ID == "job_fixed"
	}
	if len(payloads) != 25 || !fixed {
		t.Fatalf("payloads %d, fixed id kept %v", len(payloads), fixed)
	}
	for _, j := range got {
		if err := q.Ack(ctx(), j); err != nil {
			t.Fatal(err)
		}
	}
	if err := q.Ack(ctx(), got[0]); err == nil {
		t.Fatal("a second ack of the same delivery succeeded")
	}
	if err := q.Enqueue(ctx(), queue.Job{ID: "x"}); err == nil {
		t.Fatal("a job without kind was accepted")
	}
}

func TestVisibilityAndBackoff(t *testing.T) {
	q, _ := newQueue(t, sqs.Options{Backoff: time.Second})
	if err := q.Enqueue(ctx(), queue.Job{ID: "j", Kind: "embed", Tenant: "acme"}); err != nil {
		t.Fatal(err)
	}
	first, _ := q.Receive(ctx(), 1, time.Second)
	if len(first) != 1 {
		t.Fatalf("first receive %+v", first)
	}
	if again, _ := q.Receive(ctx(), 1, time.Second); len(again) != 0 {
		t.Fatal("a leased job was delivered twice")
	}
	time.Sleep(1500 * time.Millisecond) // no ack: the lease runs out
	second, _ := q.Receive(ctx(), 1, time.Minute)
	if len(second) != 1 || second[0].Attempts != 2 {
		t.Fatalf("after the visibility timeout: %+v", second)
	}
	if err := q.Fail(ctx(), second[0], errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	// The backoff after 2 deliveries is 2 s.
	if got, _ := q.Receive(ctx(), 1, time.Minute); len(got) != 0 {
		t.Fatal("a failed job came back before its backoff")
	}
	time.Sleep(2500 * time.Millisecond)
	third, _ := q.Receive(ctx(), 1, time.Minute)
	if len(third) != 1 || third[0].Attempts != 3 {
		t.Fatalf("after the backoff: %+v", third)
	}
}

func TestDeadLetterAfterMaxAttempts(t *testing.T) {
	client := sqstest.Client(t)
	dlq := sqstest.NewQueue(t, client, nil)
	q, _ := newQueue(t, sqs.Options{DeadLetterURL: dlq, MaxAttempts: 2, Backoff: time.Second})
	if err := q.Enqueue(ctx(), queue.Job{ID: "j", Kind: "embed", Tenant: "acme", Payload: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	for attempt := 1; attempt <= 2; attempt++ {
		var got []queue.Job
		for deadline := time.Now().Add(5 * time.Second); len(got) == 0 && time.Now().Before(deadline); {
			got, _ = q.Receive(ctx(), 1, time.Minute)
			if len(got) == 0 {
				time.Sleep(100 * time.Millisecond)
			}
		}
		if len(got) != 1 || got[0].Attempts != attempt {
			t.Fatalf("attempt %d: %+v", attempt, got)
		}
		if err := q.Fail(ctx(), got[0], fmt.Errorf("boom %d", attempt)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(1500 * time.Millisecond)
	if got, _ := q.Receive(ctx(), 10, time.Minute); len(got) != 0 {
		t.Fatalf("a dead-lettered job is still in the queue: %+v", got)
	}
	out, err := client.ReceiveMessage(ctx(), &awssqs.ReceiveMessageInput{QueueUrl: aws.String(dlq), MaxNumberOfMessages: 10})
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("dead-letter queue: %+v %v", out, err)
	}
	dead, err := sqs.DecodeDeadLetter(aws.ToString(out.Messages[0].Body))
	if err != nil || dead.ID != "j" || dead.LastError != "boom 2" || string(dead.Payload) != "p" {
		t.Fatalf("dead letter %+v %v", dead, err)
	}
}

// TestTwoConsumersNeverShareAJob: two adapters on one queue, racing.
func TestTwoConsumersNeverShareAJob(t *testing.T) {
	client := sqstest.Client(t)
	url := sqstest.NewQueue(t, client, nil)
	a, _ := newQueue(t, sqs.Options{QueueURL: url})
	b, _ := newQueue(t, sqs.Options{QueueURL: url})
	const n = 60
	var in []queue.Job
	for i := 0; i < n; i++ {
		in = append(in, queue.Job{ID: fmt.Sprint("job_", i), Kind: "embed"})
	}
	if err := a.Enqueue(ctx(), in...); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for _, q := range []*sqs.Queue{a, b, a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for empty := 0; empty < 3; {
				got, err := q.Receive(ctx(), 10, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					empty++
					continue
				}
				mu.Lock()
				for _, j := range got {
					seen[j.ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("%d distinct jobs received, want %d", len(seen), n)
	}
	for id, k := range seen {
		if k != 1 {
			t.Fatalf("job %s received %d times within its lease", id, k)
		}
	}
}

// TestEmbedWorkerOverSQS runs the memory service and the embedding worker
// with SQS as the queue (AWS mode): the job is enqueued after the store
// write, not in its transaction.
func TestEmbedWorkerOverSQS(t *testing.T) {
	q, _ := newQueue(t, sqs.Options{})
	dir := t.TempDir()
	st, err := sqlite.Open(ctx(), sqlite.Options{Path: filepath.Join(dir, "vp.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	idx, err := searchlocal.Open(ctx(), searchlocal.Options{Path: filepath.Join(dir, "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, _ := listing.NewSigner(key)
	svc := memory.New(memory.Options{Store: st, Index: idx, Embedder: embedlocal.New(embedlocal.Options{}), Queue: q, Cursors: signer})
	p := vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}
	r, err := svc.StoreMemory(ctx(), p, memory.StoreInput{Namespace: "global", Type: "fact", Content: "The nightly export lands in the analytics bucket."})
	if err != nil {
		t.Fatal(err)
	}
	n, err := jobs.ProcessEmbedJobs(ctx(), jobs.EmbedderOptions{Queue: q, Memory: svc})
	if err != nil || n != 1 {
		t.Fatalf("worker: %d jobs, %v", n, err)
	}
	res, err := svc.Recall(ctx(), p, memory.SearchInput{Query: "where does the nightly export land"})
	if err != nil || res.Count != 1 || res.Results[0].ID != r.MemoryID {
		t.Fatalf("recall %+v %v", res, err)
	}
	if n, _ := jobs.ProcessEmbedJobs(ctx(), jobs.EmbedderOptions{Queue: q, Memory: svc}); n != 0 {
		t.Fatalf("%d jobs left after the ack", n)
	}
}

func TestDecode(t *testing.T) {
	if _, err := sqs.Decode("not json", 1); err == nil {
		t.Fatal("garbage decoded")
	}
	if _, err := sqs.Decode(`{"kind":"embed"}`, 1); err == nil {
		t.Fatal("a job without id decoded")
	}
	j, err := sqs.Decode(`{"id":"j","kind":"embed","tenant":"acme","payload":"eyJ4IjoxfQ=="}`, 3)
	if err != nil || j.ID != "j" || j.Attempts != 3 || string(j.Payload) != `{"x":1}` {
		t.Fatalf("%+v %v", j, err)
	}
}
