package keyword_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The effects as the binaries wire them: index writes and mission
// auto-completion through an outbox, run right after their commits.

// countingStore records the number of ops of every Write.
type countingStore struct {
	store.Store
	mu     sync.Mutex
	writes []int
}

func (c *countingStore) Write(ctx context.Context, ops ...store.Op) error {
	c.mu.Lock()
	c.writes = append(c.writes, len(ops))
	c.mu.Unlock()
	return c.Store.Write(ctx, ops...)
}

func (c *countingStore) take() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := c.writes
	c.writes = nil
	return w
}

type wired struct {
	kw       *keyword.Service
	ob       *outbox.Outbox
	messages *message.Service
	tasks    *task.Service
	missions *mission.Service
	st       *countingStore
}

func wire(t *testing.T, st store.Store, idx search.Index) wired {
	t.Helper()
	return wireWith(t, st, idx, outbox.Options{})
}

// wireWith is wire with the outbox's options (its Store is st).
func wireWith(t *testing.T, st store.Store, idx search.Index, o outbox.Options) wired {
	t.Helper()
	cs := &countingStore{Store: st}
	o.Store = st
	ob, err := outbox.New(o)
	if err != nil {
		t.Fatal(err)
	}
	// By hand, not through app.Build: the outbox writes on st and the
	// services on cs, so that cs counts only the services' commits.
	kw := keyword.New(keyword.Options{Store: cs, Cursors: domaintest.Signer(t), Index: idx})
	w := &search.Writer{Index: idx, Outbox: ob}
	ts := task.New(task.Options{Store: cs, Search: w})
	ms := mission.New(mission.Options{Store: cs, Tasks: ts})
	ts.UseMissions(ms)
	ts.UseEvents(ob)
	if err := ob.Handle(search.IndexTopic, kw.IndexJob); err != nil {
		t.Fatal(err)
	}
	if err := ob.Subscribe(task.TopicFinished, "mission.autocomplete", ms.OnTaskFinished); err != nil {
		t.Fatal(err)
	}
	msgs := message.New(message.Options{Store: cs, Directory: profile.New(profile.Options{Store: cs}), Search: w})
	return wired{kw, ob, msgs, ts, ms, cs}
}

// leftover drains the outbox on a clock past every lease: what a writer
// did not finish itself.
func leftover(t *testing.T, st store.Store, w wired) int {
	t.Helper()
	ob, err := outbox.New(outbox.Options{Store: st, Now: func() time.Time { return time.Now().Add(outbox.DefaultLease + time.Minute) }})
	if err != nil {
		t.Fatal(err)
	}
	_ = ob.Handle(search.IndexTopic, w.kw.IndexJob)
	_ = ob.Subscribe(task.TopicFinished, "mission.autocomplete", w.missions.OnTaskFinished)
	n, err := ob.Drain(ctx())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestIndexJobsThroughOutbox(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, _ *keyword.Service, st store.Store, idx *flakyIndex) {
		w := wire(t, st, idx)
		alice := as("acme", "alice")
		found := func(q string) int {
			t.Helper()
			res, err := w.kw.SearchMessages(ctx(), alice, keyword.SearchMessagesInput{Query: q})
			if err != nil {
				t.Fatal(err)
			}
			return res.Count
		}
		// A message to vp.MaxRecipients: 99 receipts and the message fill a
		// transaction, and the index job still commits (ahead of it).
		names := make([]string, vp.MaxRecipients)
		for i := range names {
			names[i] = fmt.Sprintf("r%02d", i)
		}
		res, err := w.messages.Send(ctx(), alice, message.SendInput{Channel: strings.Join(names, ","), Content: "the quokka smiles"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Recipients) != vp.MaxRecipients {
			t.Fatalf("%d recipients, want %d", len(res.Recipients), vp.MaxRecipients)
		}
		if n := found("quokka"); n != 1 {
			t.Fatalf("right after send_message to %d recipients the search finds %d, want 1", vp.MaxRecipients, n)
		}
		// An ordinary message: its index job is in its transaction.
		w.st.take()
		if _, err := w.messages.Send(ctx(), alice, message.SendInput{Channel: "bob", Content: "the axolotl waves"}); err != nil {
			t.Fatal(err)
		}
		if got := w.st.take(); len(got) != 1 || got[0] != 3 {
			t.Fatalf("send_message to one recipient wrote %v through the services, want one transaction of 3 ops (message, receipt, index job)", got)
		}
		if n := found("axolotl"); n != 1 {
			t.Fatalf("right after send_message the search finds %d, want 1", n)
		}
		if n := leftover(t, st, w); n != 0 {
			t.Fatalf("%d index jobs were left to the worker", n)
		}

		// Deleting the 99-recipient message removes its document, and a
		// stale job naming it (an old upsert delivered late) does not bring
		// it back: the job reads the store, where it is gone.
		if _, err := w.messages.DeleteMessage(ctx(), alice, res.MessageID, ""); err != nil {
			t.Fatal(err)
		}
		if n := found("quokka"); n != 0 {
			t.Fatalf("after delete_message the search finds %d", n)
		}
		stale, _ := json.Marshal(search.IndexJob{Kind: keyword.KindMessage, IDs: []string{res.MessageID}})
		if err := idx.Upsert(ctx(), message.Doc("acme", vp.Message{ID: res.MessageID, Content: "the quokka smiles", Channel: "x"})); err != nil {
			t.Fatal(err)
		}
		if err := w.kw.IndexJob(ctx(), outbox.Job{ID: "late", Tenant: "acme", Topic: search.IndexTopic, Payload: stale}); err != nil {
			t.Fatal(err)
		}
		if n := found("quokka"); n != 0 {
			t.Fatalf("a late job left %d hits of a deleted message", n)
		}

		// The index down: the write stands, the job is retried by the
		// worker and the message becomes searchable then.
		idx.fail.Store(true)
		if _, err := w.messages.Send(ctx(), alice, message.SendInput{Channel: "bob", Content: "the pangolin rolls"}); err != nil {
			t.Fatal(err)
		}
		idx.fail.Store(false)
		if n := found("pangolin"); n != 0 {
			t.Fatalf("found %d while the index was down", n)
		}
		if n := leftover(t, st, w); n != 1 {
			t.Fatalf("the worker ran %d jobs, want the failed one", n)
		}
		if n := found("pangolin"); n != 1 {
			t.Fatalf("after the retry the search finds %d, want 1", n)
		}
	})
}

func TestTaskEventsThroughOutbox(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, _ *keyword.Service, st store.Store, idx *flakyIndex) {
		w := wire(t, st, idx)
		alice := as("acme", "alice")
		m, err := w.missions.CreateMission(ctx(), alice, mission.CreateMissionInput{Name: "ship", Project: "web", Priority: "high"})
		if err != nil {
			t.Fatal(err)
		}
		in := newTaskIn("write the release notes", "alice")
		in.MissionID = m.ID
		a := mustTask(t, w.tasks, alice, in)
		in.Title = "tag the release"
		b := mustTask(t, w.tasks, alice, in)

		// checkout_task publishes nothing: one transaction of the task and
		// its index job, and the job's removal.
		w.st.take()
		if r, err := w.tasks.CheckoutTask(ctx(), alice, task.CheckoutInput{TaskID: a.ID}); err != nil || !r.Claimed {
			t.Fatalf("checkout: %+v %v", r, err)
		}
		if got := w.st.take(); len(got) != 1 || got[0] != 2 {
			t.Fatalf("checkout_task wrote %v through the services, want one transaction of 2 ops", got)
		}
		if _, err := w.tasks.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: a.ID, CompletionNote: "done"}); err != nil {
			t.Fatal(err)
		}
		v, _ := w.missions.GetMission(ctx(), alice, mission.MissionRef{MissionID: m.ID})
		if v.Status == vp.MissionComplete {
			t.Fatal("the mission completed with a task open")
		}
		// The last open task: complete_task returns with the mission
		// completed.
		if _, err := w.tasks.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: b.ID, CompletionNote: "done"}); err != nil {
			t.Fatal(err)
		}
		v, _ = w.missions.GetMission(ctx(), alice, mission.MissionRef{MissionID: m.ID})
		if v.Status != vp.MissionComplete || !v.AutoCompleted {
			t.Fatalf("after its last task the mission is %s", v.Status)
		}
		if n := leftover(t, st, w); n != 0 {
			t.Fatalf("%d jobs or events were left to the worker", n)
		}
		res, err := w.kw.SearchTasks(ctx(), alice, keyword.SearchTasksInput{Query: "release", Status: vp.TaskDone})
		if err != nil || res.Count != 2 {
			t.Fatalf("search of the done tasks: %d, %v", res.Count, err)
		}
	})
}

// bulk_complete_tasks publishes one event per mission of each transaction
// and one index job per transaction: 250 tasks over 3 missions (and none)
// take 3 transactions, and every mission completes before the call returns.
func TestBulkCompletionThroughOutbox(t *testing.T) {
	eachBackendSearch(t, func(t *testing.T, _ *keyword.Service, st store.Store, idx *flakyIndex) {
		w := wire(t, st, idx)
		alice := as("acme", "alice")
		var ms []string
		for i := range 3 {
			m, err := w.missions.CreateMission(ctx(), alice, mission.CreateMissionInput{Name: fmt.Sprintf("m%d", i), Project: "web", Priority: "high"})
			if err != nil {
				t.Fatal(err)
			}
			ms = append(ms, m.ID)
		}
		var ids []string
		for i := range 250 {
			in := newTaskIn(fmt.Sprintf("chore %d", i), "alice")
			if i%4 != 3 {
				in.MissionID = ms[i%4]
			}
			ids = append(ids, mustTask(t, w.tasks, alice, in).ID)
		}
		w.st.take()
		live := false
		res, err := w.tasks.BulkCompleteTasks(ctx(), alice, task.BulkCompleteInput{Filter: task.BulkFilter{TaskIDs: ids}, DryRun: &live})
		if err != nil || res.Count != 250 {
			t.Fatalf("bulk: %d closed, %v", res.Count, err)
		}
		for _, n := range w.st.take() {
			if n > store.MaxTransactOps {
				t.Fatalf("a transaction of %d ops", n)
			}
		}
		for _, id := range ms {
			v, _ := w.missions.GetMission(ctx(), alice, mission.MissionRef{MissionID: id})
			if v.Status != vp.MissionComplete {
				t.Fatalf("mission %s is %s after the bulk run", id, v.Status)
			}
		}
		if n := leftover(t, st, w); n != 0 {
			t.Fatalf("%d jobs or events were left to the worker", n)
		}
		found, err := w.kw.SearchTasks(ctx(), alice, keyword.SearchTasksInput{Query: "chore", Status: vp.TaskDone, Limit: 50})
		if err != nil || found.Count != 50 {
			t.Fatalf("search of the done chores: %d, %v", found.Count, err)
		}
	})
}
