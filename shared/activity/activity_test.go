package activity_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) {
	if childMain() {
		return
	}
	dynamotest.Main(m)
}

const tenant = "t1"

var (
	ctx   = context.Background()
	alice = domaintest.As(tenant, "alice")
	bob   = domaintest.As(tenant, "bob")
)

// build makes the services over st as the binaries do (app.Build), with
// wait_for_activity configured by o.
func build(t testing.TB, st store.Store, o activity.Options) *app.Services {
	t.Helper()
	s, err := app.Build(ctx, app.Ports{Groups: app.Coordination, Store: st, Cursors: domaintest.Signer(t), Activity: o})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func send(t testing.TB, s *app.Services, to, text string) {
	t.Helper()
	if _, err := s.Messages.Send(ctx, alice, message.SendInput{Channel: to, Content: text}); err != nil {
		t.Fatal(err)
	}
}

func ms(n int64) *int64 { return &n }

func kinds(r activity.Result) []string {
	var out []string
	for _, it := range r.Items {
		out = append(out, it.Kind+":"+it.Title)
	}
	return out
}

// What waits is answered at once, and nothing is marked read: the message
// is still unread for check_messages; the cursor then skips it.
func TestAnswersAtOnceAndMarksNothingRead(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		s := build(t, b.Open(t, nil), activity.Options{})
		send(t, s, "bob", "API merged, rebase")
		if _, err := s.Tasks.CreateTask(ctx, alice, task.CreateTaskInput{Title: "Fix login", AssignedTo: "bob", Priority: "high"}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		res, err := s.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(20_000)})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 2*time.Second || res.TimedOut || res.Count != 2 {
			t.Fatalf("got %v (timedOut %v) after %v; want the message and the task at once", kinds(res), res.TimedOut, took)
		}
		got := strings.Join(kinds(res), " ")
		if got != "messages:API merged, rebase tasks:Fix login" {
			t.Fatalf("items %q", got)
		}
		for _, it := range res.Items {
			if res.Since < it.At {
				t.Fatalf("cursor %d is before item %+v", res.Since, it)
			}
		}
		box, err := s.Messages.Check(ctx, bob, message.CheckInput{})
		if err != nil || box.Count != 1 {
			t.Fatalf("after the wait check_messages has %d unread (%v); want the message still unread", box.Count, err)
		}
		again, err := s.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(0), Since: &res.Since})
		if err != nil || again.Count != 0 || !again.TimedOut || again.Since < res.Since {
			t.Fatalf("with the cursor: %v (timedOut %v, since %d, err %v); want nothing new", kinds(again), again.TimedOut, again.Since, err)
		}
	})
}

// Nothing arrives: the call holds for its timeout and says so.
func TestReturnsAtTheTimeoutWithNothing(t *testing.T) {
	s := build(t, teststores.All[0].Open(t, nil), activity.Options{})
	start := time.Now()
	res, err := s.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(400)})
	took := time.Since(start)
	if err != nil || !res.TimedOut || res.Count != 0 {
		t.Fatalf("got %v, timedOut %v, err %v", kinds(res), res.TimedOut, err)
	}
	if took < 400*time.Millisecond || took > 2*time.Second {
		t.Fatalf("held %v; want the 400 ms asked for", took)
	}
	if res.Since <= 0 || res.Since > time.Now().UnixMilli() {
		t.Fatalf("cursor %d is not a time before now", res.Since)
	}
}

// The server's bound shortens a longer wait, with a note.
func TestMaxWaitBoundsTheWait(t *testing.T) {
	s := build(t, teststores.All[0].Open(t, nil), activity.Options{MaxWait: 200 * time.Millisecond})
	start := time.Now()
	res, err := s.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(5_000)})
	if took := time.Since(start); err != nil || took > 2*time.Second || !res.TimedOut {
		t.Fatalf("held %v (timedOut %v, err %v); want at most the server's 200 ms", took, res.TimedOut, err)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "at most 200 ms") {
		t.Fatalf("notes %q; want the bound named", res.Notes)
	}
}

func TestRefusesBadArguments(t *testing.T) {
	s := build(t, teststores.All[0].Open(t, nil), activity.Options{})
	for _, c := range []struct {
		name  string
		p     vp.Principal
		in    activity.Input
		kind  vp.Kind
		field string
	}{
		{"timeout over 25 s", bob, activity.Input{TimeoutMs: ms(25_001)}, vp.KindInvalid, "timeoutMs"},
		{"negative timeout", bob, activity.Input{TimeoutMs: ms(-1)}, vp.KindInvalid, "timeoutMs"},
		{"unknown kind", bob, activity.Input{Kinds: []string{"mail"}}, vp.KindInvalid, "kinds"},
		{"too many kinds", bob, activity.Input{Kinds: []string{"messages", "tasks", "unblocked", "reservations", "messages"}}, vp.KindTooLarge, "kinds"},
		{"negative since", bob, activity.Input{Since: ms(-5)}, vp.KindInvalid, "since"},
		{"someone else's activity", bob, activity.Input{Recipient: "alice"}, vp.KindForbidden, "recipient"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Activity.Wait(ctx, c.p, c.in)
			domaintest.WantKind(t, err, c.kind, c.field)
		})
	}
	// A server with no source of a kind (here: messages only) says so: a
	// wait on that kind alone is refused, with others it is a note.
	bare := activity.New(activity.Options{Sources: []activity.Source{activity.Messages(s.Messages)}})
	_, err := bare.Wait(ctx, bob, activity.Input{Kinds: []string{"reservations"}})
	domaintest.WantKind(t, err, vp.KindInvalid, "kinds")
	res, err := bare.Wait(ctx, bob, activity.Input{TimeoutMs: ms(0), Kinds: []string{"messages", "reservations"}})
	if err != nil || len(res.Notes) != 1 || !strings.Contains(res.Notes[0], "reservations not watched") {
		t.Fatalf("notes %q (err %v); want reservations named as not watched", res.Notes, err)
	}
}

// The transport's Hold is taken only by a call that waits, and given back
// when it returns; a refused Hold refuses the wait.
func TestHoldIsTakenOnlyToWait(t *testing.T) {
	s := build(t, teststores.All[0].Open(t, nil), activity.Options{})
	var held, released atomic.Int32
	hold := func() (func(), error) {
		held.Add(1)
		return func() { released.Add(1) }, nil
	}
	if _, err := s.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(100), Hold: hold}); err != nil {
		t.Fatal(err)
	}
	if held.Load() != 1 || released.Load() != 1 {
		t.Fatalf("a wait held %d and released %d slots; want 1 and 1", held.Load(), released.Load())
	}
	send(t, s, "bob", "hi")
	if _, err := s.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(100), Hold: hold}); err != nil {
		t.Fatal(err)
	}
	if held.Load() != 1 {
		t.Fatal("an answer at once took a waiting slot")
	}
	refuse := func() (func(), error) {
		return nil, vp.E("wait_for_activity", vp.KindRateLimited, "timeoutMs", "budget spent")
	}
	_, err := s.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(100), Since: ms(time.Now().UnixMilli()), Hold: refuse})
	domaintest.WantKind(t, err, vp.KindRateLimited, "timeoutMs")
}

// waitThen starts a wait of p after since and returns its answer and when
// it came.
func waitThen(s *app.Services, p vp.Principal, in activity.Input) <-chan answer {
	out := make(chan answer, 1)
	go func() {
		r, err := s.Activity.Wait(ctx, p, in)
		out <- answer{r, err, time.Now()}
	}()
	return out
}

type answer struct {
	res activity.Result
	err error
	at  time.Time
}

// A send in this process wakes the waiter (the hub), with no change
// counter and no polling to help: polling is off (a minute) and the wait
// lasts 10 s, so an answer long before either can only come from the hub.
// How soon is BenchmarkWakeLatency's figure, not a test's.
func TestWokenInProcessByTheHub(t *testing.T) {
	s := build(t, teststores.All[0].Open(t, nil), activity.Options{PollMin: time.Minute, PollMax: time.Minute})
	since := time.Now().UnixMilli()
	got := waitThen(s, bob, activity.Input{TimeoutMs: ms(10_000), Since: &since})
	time.Sleep(200 * time.Millisecond)
	send(t, s, "bob", "wake up")
	sent := time.Now()
	a := <-got
	if a.err != nil || a.res.TimedOut || a.res.Count != 1 || a.res.Items[0].Title != "wake up" {
		t.Fatalf("got %v, timedOut %v, err %v", kinds(a.res), a.res.TimedOut, a.err)
	}
	if lat := a.at.Sub(sent); lat > 5*time.Second {
		t.Fatalf("woken %v after the send: by the timeout's last look, not the hub", lat)
	}
}

// A task of bob's that waited on alice's becomes startable when hers is
// done: that is "unblocked", though bob's task itself did not change.
func TestNewlyUnblocked(t *testing.T) {
	s := build(t, teststores.All[0].Open(t, nil), activity.Options{})
	pre, err := s.Tasks.CreateTask(ctx, alice, task.CreateTaskInput{Title: "Schema", AssignedTo: "alice", Priority: "high"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Tasks.CreateTask(ctx, alice, task.CreateTaskInput{Title: "API on the schema", AssignedTo: "bob", Priority: "high", DependsOn: []string{pre.ID}}); err != nil {
		t.Fatal(err)
	}
	first, err := s.Activity.Wait(ctx, bob, activity.Input{TimeoutMs: ms(0), Kinds: []string{"unblocked"}})
	if err != nil || first.Count != 0 {
		t.Fatalf("before the prerequisite is done: %v (err %v); want nothing unblocked", kinds(first), err)
	}
	got := waitThen(s, bob, activity.Input{TimeoutMs: ms(10_000), Since: ms(time.Now().UnixMilli())})
	time.Sleep(100 * time.Millisecond)
	if _, err := s.Tasks.StartTask(ctx, alice, task.TaskRef{TaskID: pre.ID}); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		t.Fatalf("woken by starting the prerequisite: %v (err %v)", kinds(a.res), a.err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := s.Tasks.CompleteTask(ctx, alice, task.CompleteTaskInput{TaskID: pre.ID, CompletionNote: "done, tests pass"}); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil || strings.Join(kinds(a.res), " ") != "unblocked:API on the schema" {
		t.Fatalf("got %v, err %v; want bob's task unblocked", kinds(a.res), a.err)
	}
}

// A server shutting down gracefully waits for its requests: Close has
// every waiter answer now rather than at its timeout.
func TestCloseAnswersEveryWaiter(t *testing.T) {
	s := build(t, teststores.All[0].Open(t, nil), activity.Options{})
	got := waitThen(s, bob, activity.Input{TimeoutMs: ms(20_000)})
	time.Sleep(100 * time.Millisecond)
	s.Activity.Close()
	closed := time.Now()
	select {
	case a := <-got:
		if a.err != nil || !a.res.TimedOut || a.at.Sub(closed) > 500*time.Millisecond {
			t.Fatalf("after Close: err %v, timedOut %v, %v later", a.err, a.res.TimedOut, a.at.Sub(closed))
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter still waits 5 s after Close")
	}
}
