package keyword_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
)

// cutIndex counts the coordination documents written to it and can fail
// every write after a number of calls: a backfill cut short.
type cutIndex struct {
	search.Index
	mu        sync.Mutex
	calls     int
	failAfter int // 0: never fail
	docs      int // documents of coordination kinds (not markers)
}

func (x *cutIndex) Upsert(ctx context.Context, docs ...search.Doc) error {
	x.mu.Lock()
	x.calls++
	cut := x.failAfter > 0 && x.calls > x.failAfter
	if !cut {
		for _, d := range docs {
			if d.Kind != "marker" {
				x.docs++
			}
		}
	}
	x.mu.Unlock()
	if cut {
		return errors.New("cut short")
	}
	return x.Index.Upsert(ctx, docs...)
}

func (x *cutIndex) reset(failAfter int) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.calls, x.failAfter, x.docs = 0, failAfter, 0
}

func (x *cutIndex) written() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.docs
}

// backfillMessages is enough for three index writes of messages (200, 200, 50).
const backfillMessages = 450

// seedLegacy writes messages and tasks with no index, as a server did
// before keyword search existed.
func seedLegacy(t *testing.T, st store.Store) {
	t.Helper()
	old := newSearchService(t, st, nil)
	oldTasks, _ := taskServices(t, st, nil)
	alice := as("acme", "alice")
	for i := range backfillMessages {
		if _, err := messagesOf(old).Send(ctx(), alice, message.SendInput{Channel: "bob", Content: fmt.Sprint("legacy kestrel note ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		mustTask(t, oldTasks, alice, task.CreateTaskInput{Title: fmt.Sprint("legacy kestrel task ", i), AssignedTo: "alice", Priority: "low"})
	}
}

// indexedMessages counts acme's message documents in the index, past the
// keyword tools' 50-hit cap (the partition is "<tenant>/<kind>").
func indexedMessages(t *testing.T, idx search.Index) int {
	t.Helper()
	hits, err := idx.Text(ctx(), "kestrel", search.Filter{Tenant: "acme/message", Kinds: []string{"message"}}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return len(hits)
}

// TestBackfillResumes: a backfill cut short after two batches resumes at
// its checkpoint, and the tenant ends fully indexed.
func TestBackfillResumes(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		seedLegacy(t, st)
		idx := &cutIndex{Index: openIndex(t), failAfter: 3} // the run document, then two batches
		svc := newSearchService(t, st, idx)
		if _, err := svc.EnsureIndexed(ctx(), "acme"); err == nil {
			t.Fatal("a backfill cut short reported success")
		}
		if got := idx.written(); got != 400 {
			t.Fatalf("before the cut: %d documents, want 400", got)
		}
		idx.reset(0)
		rep, err := svc.EnsureIndexed(ctx(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		if !rep.Resumed || rep.Messages != backfillMessages || rep.Tasks != 3 {
			t.Fatalf("resumed run: %+v", rep)
		}
		if got := idx.written(); got != backfillMessages-400+3 {
			t.Fatalf("the resumed run wrote %d documents, want %d: it did not start at its checkpoint", got, backfillMessages-400+3)
		}
		if n := indexedMessages(t, idx); n != backfillMessages {
			t.Fatalf("%d messages indexed, want %d", n, backfillMessages)
		}
		// Finished: the marker decides, and the next run writes nothing.
		idx.reset(0)
		if rep, err := newSearchService(t, st, idx).EnsureIndexed(ctx(), "acme"); err != nil || !rep.AlreadyIndexed || idx.written() != 0 {
			t.Fatalf("after the backfill: %+v %v, %d documents written", rep, err, idx.written())
		}
	})
}

// TestBackfillStartsOverOnAnotherIndex: a checkpoint is worth nothing to an
// index that does not hold its run (replaced since): that run starts over.
func TestBackfillStartsOverOnAnotherIndex(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		seedLegacy(t, st)
		idx := &cutIndex{Index: openIndex(t), failAfter: 3}
		if _, err := newSearchService(t, st, idx).EnsureIndexed(ctx(), "acme"); err == nil {
			t.Fatal("a backfill cut short reported success")
		}
		idx.Index = openIndex(t).Index
		idx.reset(0)
		rep, err := newSearchService(t, st, idx).EnsureIndexed(ctx(), "acme")
		if err != nil {
			t.Fatal(err)
		}
		if rep.Resumed || rep.Messages != backfillMessages || idx.written() != backfillMessages+3 {
			t.Fatalf("on a new index: %+v, %d documents written, want a full run of %d", rep, idx.written(), backfillMessages+3)
		}
		if n := indexedMessages(t, idx); n != backfillMessages {
			t.Fatalf("%d messages indexed, want %d", n, backfillMessages)
		}
	})
}

// stuckIndex never finishes a write until its context ends.
type stuckIndex struct{ search.Index }

func (stuckIndex) Upsert(ctx context.Context, _ ...search.Doc) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestSearchBoundsItsBackfill: a search for a tenant whose backfill cannot
// finish answers from what is indexed once its budget is spent.
func TestSearchBoundsItsBackfill(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		if _, err := messagesOf(newSearchService(t, st, nil)).Send(ctx(), as("acme", "alice"), message.SendInput{Channel: "bob", Content: "kestrel"}); err != nil {
			t.Fatal(err)
		}
		svc := keyword.New(keyword.Options{Store: st, Index: stuckIndex{openIndex(t)}, SearchBackfillBudget: 50 * time.Millisecond})
		done := make(chan error, 1)
		go func() {
			_, err := svc.SearchMessages(ctx(), as("acme", "alice"), keyword.SearchMessagesInput{Query: "kestrel"})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("the search failed instead of answering from the index: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the search waited for a backfill that cannot finish")
		}
	})
}
