package reservation_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/reservation"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// built is the coordination services on one backend, with a settable
// clock: reservations wired to tasks and messages as the binary wires them.
func built(t *testing.T, b teststores.Backend) (*app.Services, *clock) {
	clk := newClock()
	s, err := app.Build(ctx(), app.Ports{Groups: app.Coordination, Store: b.Open(t, clk.Now), Cursors: domaintest.Signer(t), Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, clk
}

// TestExpiredReservationIsToldOnce: the holder gets one message when a
// reservation expires unrenewed, however often the job runs; a renewed
// one is not reported.
func TestExpiredReservationIsToldOnce(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		s, clk := built(t, b)
		alice := as("t1", "alice")
		gone := reserve(t, s.Reservations, "alice", reservation.ReserveInput{Paths: []string{"src/**"}, TTLMinutes: ptr(1.0)})
		kept := reserve(t, s.Reservations, "alice", reservation.ReserveInput{Paths: []string{"docs/**"}, TTLMinutes: ptr(1.0)})
		clk.Add(30 * time.Second)
		if _, err := s.Reservations.Renew(ctx(), alice, reservation.RenewInput{ReservationIDs: []string{kept.Reservation.ID}}); err != nil {
			t.Fatal(err)
		}
		rep, err := s.Reservations.NotifyExpired(ctx(), clk.Now())
		if err != nil || rep.Notified != 0 {
			t.Fatalf("before any expiry: %+v, %v", rep, err)
		}
		clk.Add(31 * time.Second) // gone expired 1 s ago; kept lives 29 s more
		for run := range 3 {
			rep, err := s.Reservations.NotifyExpired(ctx(), clk.Now())
			if want := map[bool]int{true: 1, false: 0}[run == 0]; err != nil || rep.Notified != want {
				t.Fatalf("run %d: %+v, %v; want %d notified", run, rep, err, want)
			}
		}
		in, err := s.Messages.Check(ctx(), alice, message.CheckInput{})
		if err != nil {
			t.Fatal(err)
		}
		if in.Count != 1 || in.Messages[0].From != vp.SystemCaller || !strings.Contains(in.Messages[0].Content, gone.Reservation.ID) ||
			!strings.Contains(in.Messages[0].Content, "src/**") {
			t.Fatalf("alice's inbox: %+v, want one notice of %s", in.Messages, gone.Reservation.ID)
		}
	})
}

// TestLinkedTaskEndReleases: completing, cancelling or deleting the task a
// reservation is linked to releases it; another task's end does not.
func TestLinkedTaskEndReleases(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		s, _ := built(t, b)
		alice := as("t1", "alice")
		newTask := func(title string) string {
			tk, err := s.Tasks.CreateTask(ctx(), alice, task.CreateTaskInput{Title: title, AssignedTo: "alice", Priority: "medium"})
			if err != nil {
				t.Fatal(err)
			}
			return tk.ID
		}
		held := func(glob string) bool {
			t.Helper()
			got, err := s.Reservations.Check(ctx(), as("t1", "bob"), reservation.CheckInput{Project: "web", Paths: []string{glob}})
			if err != nil {
				t.Fatal(err)
			}
			return len(got.Conflicts) > 0
		}
		done, cancelled, deleted, other := newTask("api"), newTask("docs"), newTask("ci"), newTask("unrelated")
		for _, c := range []struct{ task, glob string }{{done, "src/api/**"}, {cancelled, "docs/**"}, {deleted, ".ci/**"}} {
			if r := reserve(t, s.Reservations, "alice", reservation.ReserveInput{Paths: []string{c.glob}, TaskID: c.task}); !r.Reserved {
				t.Fatal(r)
			}
		}
		if _, err := s.Tasks.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: other, CompletionNote: "done"}); err != nil {
			t.Fatal(err)
		}
		if !held("src/api/x.go") || !held("docs/a.md") || !held(".ci/run") {
			t.Fatal("another task's completion released a reservation")
		}
		if _, err := s.Tasks.CompleteTask(ctx(), alice, task.CompleteTaskInput{TaskID: done, CompletionNote: "merged abc123"}); err != nil {
			t.Fatal(err)
		}
		status, reason := vp.TaskCancelled, "not needed"
		if _, err := s.Tasks.UpdateTask(ctx(), alice, task.UpdateTaskInput{TaskID: cancelled, Status: &status, CancelReason: &reason}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Tasks.DeleteTask(ctx(), alice, task.TaskRef{TaskID: deleted}); err != nil {
			t.Fatal(err)
		}
		domaintest.Drain(t, s.Outbox)
		for _, g := range []string{"src/api/x.go", "docs/a.md", ".ci/run"} {
			if held(g) {
				t.Errorf("%s is still reserved after its task ended", g)
			}
		}
		// A reservation cannot be linked to a task that already ended.
		_, err := s.Reservations.Reserve(ctx(), alice, reservation.ReserveInput{Project: "web", Paths: []string{"x"}, TaskID: done})
		domaintest.WantKind(t, err, vp.KindConflict, "taskId")
	})
}

// TestAboutToExpireReachesWaitForActivity: a holder's reservation that
// enters its last ExpiringWithin arrives in wait_for_activity once, not
// another holder's, not an expired one; a renewal moves it out again.
func TestAboutToExpireReachesWaitForActivity(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		s, clk := built(t, b)
		alice := as("t1", "alice")
		long := reserve(t, s.Reservations, "alice", reservation.ReserveInput{Paths: []string{"src/**"}, TTLMinutes: ptr(60.0)})
		short := reserve(t, s.Reservations, "alice", reservation.ReserveInput{Paths: []string{"docs/**"}, TTLMinutes: ptr(5.0)})
		reserve(t, s.Reservations, "bob", reservation.ReserveInput{Paths: []string{"lib/**"}, TTLMinutes: ptr(5.0)})
		look := func(since *int64) activity.Result {
			t.Helper()
			zero := int64(0)
			res, err := s.Activity.Wait(ctx(), alice, activity.Input{TimeoutMs: &zero, Kinds: []string{activity.KindReservations}, Since: since})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		res := look(nil)
		if res.Count != 1 || res.Items[0].ID != short.Reservation.ID || res.Items[0].Kind != activity.KindReservations ||
			!strings.Contains(res.Items[0].Title, "docs/**") || len(res.Notes) != 0 {
			t.Fatalf("at once: %+v; want alice's 5-minute reservation alone", res)
		}
		if again := look(&res.Since); again.Count != 0 {
			t.Fatalf("after its cursor: %+v; want nothing new", again)
		}
		clk.Add(51 * time.Minute) // docs expired; src has 9 minutes left
		res = look(&res.Since)
		if res.Count != 1 || res.Items[0].ID != long.Reservation.ID {
			t.Fatalf("51 min later: %+v; want the 60-minute one, now near its end", res)
		}
		if _, err := s.Reservations.Renew(ctx(), alice, reservation.RenewInput{ReservationIDs: []string{long.Reservation.ID}}); err != nil {
			t.Fatal(err)
		}
		if res = look(nil); res.Count != 0 {
			t.Fatalf("after the renewal: %+v; want nothing about to expire", res)
		}
	})
}
