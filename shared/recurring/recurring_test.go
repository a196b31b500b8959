package recurring_test

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// recClock is a settable clock for the recurring tests.
type recClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *recClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *recClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// eachBackendAt is eachBackend with the service's clock at start; it also
// hands the test the store, so that it can open a second service on it (a
// second scheduler).
func eachBackendAt(t *testing.T, start time.Time, fn func(t *testing.T, svc *services, st store.Store, clock *recClock)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := b.Open(t, nil)
		clock := &recClock{t: start}
		fn(t, newClockService(t, st, clock), st, clock)
	})
}

func newClockService(t *testing.T, st store.Store, clock *recClock) *services {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return newServices(t, st, signer, clock.Now)
}

// utc parses "2006-01-02 15:04" in UTC.
func utc(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		v, err = time.Parse("2006-01-02 15:04", s)
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func standup(cron, tz string) recurring.CreateRecurringInput {
	return recurring.CreateRecurringInput{Title: "Daily standup report", Description: "what was done, blockers", AssignedTo: "carol",
		Priority: "medium", CronExpression: cron, Timezone: tz, Project: "vantage-peers"}
}

func TestRecurringCronAndTimezoneValidation(t *testing.T) {
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, _ store.Store, _ *recClock) {
		bob := as("acme", "bob")
		cases := []struct {
			name, cron, tz string
			want           []string // substrings of the error; nil: valid
		}{
			{"weekdays", "0 9 * * 1-5", "", nil},
			{"every 30 minutes", "*/30 * * * *", "UTC", nil},
			{"first of the month", "0 0 1 * *", "Europe/Paris", nil},
			{"names", "15 8 * JAN-MAR MON,FRI", "America/New_York", nil},
			{"surrounding spaces", "  0 9 * * *  ", "Asia/Tokyo", nil},
			{"four fields", "0 9 * *", "", []string{"cronExpression", "4 fields", "0 9 * * 1-5"}},
			{"six fields (seconds)", "0 0 9 * * *", "", []string{"cronExpression", "6 fields", "0 9 * * 1-5"}},
			{"minute out of range", "61 * * * *", "", []string{"cronExpression", "not a valid cron", "0 9 * * 1-5"}},
			{"garbage", "every day at 9", "", []string{"cronExpression", "0 9 * * 1-5"}},
			{"bad step", "*/0 * * * *", "", []string{"cronExpression"}},
			{"descriptor", "@daily", "", []string{"cronExpression", "@daily", "0 9 * * 1-5"}},
			{"inline zone", "TZ=Europe/Paris 0 9 * * *", "", []string{"cronExpression", "timezone"}},
			{"inline zone without space", "CRON_TZ=Europe/Paris", "", []string{"cronExpression", "timezone"}},
			{"never fires", "0 0 30 2 *", "", []string{"cronExpression", "never fires"}},
			{"empty", "", "", []string{"cronExpression", "required"}},
			{"oversize", strings.Repeat("1,", 100) + " * * * *", "", []string{"cronExpression", "128"}},
			{"unknown zone", "0 9 * * *", "Mars/Olympus_Mons", []string{"timezone", "IANA", "Europe/Paris"}},
			{"local zone", "0 9 * * *", "Local", []string{"timezone", "IANA"}},
			{"path as zone", "0 9 * * *", "../../etc/passwd", []string{"timezone"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				r, err := svc.CreateRecurringTask(ctx(), bob, standup(c.cron, c.tz))
				if c.want == nil {
					if err != nil {
						t.Fatalf("valid schedule refused: %v", err)
					}
					if r.NextRunAt <= utc(t, "2025-01-06 07:30").UnixMilli() || r.Timezone == "" {
						t.Fatalf("created %+v", r)
					}
					return
				}
				kind := vp.KindInvalid
				if c.name == "oversize" {
					kind = vp.KindTooLarge
				}
				wantKind(t, err, kind, "")
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
			})
		}
		for _, c := range []struct {
			name  string
			edit  func(*recurring.CreateRecurringInput)
			field string
		}{
			{"no title", func(in *recurring.CreateRecurringInput) { in.Title = "" }, "title"},
			{"no assignee", func(in *recurring.CreateRecurringInput) { in.AssignedTo = "" }, "assignedTo"},
			{"bad priority", func(in *recurring.CreateRecurringInput) { in.Priority = "critical" }, "urgent, high, medium, low"},
			{"impersonation", func(in *recurring.CreateRecurringInput) { in.CreatedBy = "alice" }, "createdBy"},
		} {
			t.Run(c.name, func(t *testing.T) {
				in := standup("0 9 * * *", "")
				c.edit(&in)
				_, err := svc.CreateRecurringTask(ctx(), bob, in)
				if err == nil || !strings.Contains(err.Error(), c.field) {
					t.Fatalf("got %v, want an error naming %q", err, c.field)
				}
			})
		}
	})
}

func TestRecurringNextRunInTimezone(t *testing.T) {
	// Monday 6 January 2025, 07:30 UTC = 08:30 in Paris (UTC+1).
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, _ store.Store, clock *recClock) {
		bob := as("acme", "bob")
		r, err := svc.CreateRecurringTask(ctx(), bob, standup("0 9 * * 1-5", "Europe/Paris"))
		if err != nil {
			t.Fatal(err)
		}
		if want := utc(t, "2025-01-06 08:00").UnixMilli(); r.NextRunAt != want {
			t.Fatalf("nextRunAt %v, want 09:00 Paris = 08:00 UTC", time.UnixMilli(r.NextRunAt).UTC())
		}
		if r.CreatedBy != "bob" || r.AssignedTo != "carol" || r.Paused || r.Timezone != "Europe/Paris" || !strings.HasPrefix(r.ID, "rec_") {
			t.Fatalf("created %+v", r)
		}
		// Rescheduling recomputes from now; other fields keep the slot.
		clock.Set(utc(t, "2025-01-06 07:45"))
		title := "Standup"
		if r, err = svc.UpdateRecurringTask(ctx(), bob, recurring.UpdateRecurringInput{RecurringTaskID: r.ID, Title: &title}); err != nil || r.NextRunAt != utc(t, "2025-01-06 08:00").UnixMilli() {
			t.Fatalf("title update moved the slot: %+v %v", r, err)
		}
		tz := "America/New_York"
		if r, err = svc.UpdateRecurringTask(ctx(), bob, recurring.UpdateRecurringInput{RecurringTaskID: r.ID, Timezone: &tz}); err != nil || r.NextRunAt != utc(t, "2025-01-06 14:00").UnixMilli() {
			t.Fatalf("09:00 New York (UTC-5) should be 14:00 UTC: %v %v", time.UnixMilli(r.NextRunAt).UTC(), err)
		}
		bad := "0 25 * * *"
		_, err = svc.UpdateRecurringTask(ctx(), bob, recurring.UpdateRecurringInput{RecurringTaskID: r.ID, CronExpression: &bad})
		wantKind(t, err, vp.KindInvalid, "cronExpression")
		_, err = svc.UpdateRecurringTask(ctx(), bob, recurring.UpdateRecurringInput{RecurringTaskID: r.ID})
		wantKind(t, err, vp.KindInvalid, "nothing to update")
	})
}

func TestRecurringPauseResumeAndRBAC(t *testing.T) {
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, _ store.Store, clock *recClock) {
		bob, carol, dave := as("acme", "bob"), as("acme", "carol"), as("acme", "dave")
		r, err := svc.CreateRecurringTask(ctx(), bob, standup("0 * * * *", ""))
		if err != nil {
			t.Fatal(err)
		}
		// Strangers may not touch it; the assignee may pause, only the
		// creator may delete.
		_, err = svc.PauseRecurringTask(ctx(), dave, r.ID, "")
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		title := "x"
		_, err = svc.UpdateRecurringTask(ctx(), dave, recurring.UpdateRecurringInput{RecurringTaskID: r.ID, Title: &title})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		if r, err = svc.PauseRecurringTask(ctx(), carol, r.ID, ""); err != nil || !r.Paused || r.NextRunAt != 0 {
			t.Fatalf("pause: %+v %v", r, err)
		}
		_, err = svc.PauseRecurringTask(ctx(), bob, r.ID, "")
		wantKind(t, err, vp.KindConflict, "paused already")
		if !strings.Contains(err.Error(), "resume_recurring_task") {
			t.Fatalf("refusal does not name the allowed transition: %v", err)
		}
		clock.Set(utc(t, "2025-01-06 12:10"))
		if r, err = svc.ResumeRecurringTask(ctx(), bob, r.ID, ""); err != nil || r.Paused || r.NextRunAt != utc(t, "2025-01-06 13:00").UnixMilli() {
			t.Fatalf("resume: %+v %v", r, err)
		}
		_, err = svc.ResumeRecurringTask(ctx(), bob, r.ID, "")
		wantKind(t, err, vp.KindConflict, "active already")
		_, err = svc.DeleteRecurringTask(ctx(), carol, r.ID, "")
		wantKind(t, err, vp.KindForbidden, "creator")
		if res, err := svc.DeleteRecurringTask(ctx(), bob, r.ID, ""); err != nil || !res.Deleted {
			t.Fatalf("delete: %+v %v", res, err)
		}
		_, err = svc.GetRecurringTask(ctx(), bob, r.ID)
		wantKind(t, err, vp.KindNotFound, "recurringTaskId")
		_, err = svc.DeleteRecurringTask(ctx(), bob, r.ID, "")
		wantKind(t, err, vp.KindNotFound, "recurringTaskId")
		// Another tenant cannot see or touch templates.
		r2, _ := svc.CreateRecurringTask(ctx(), bob, standup("0 * * * *", ""))
		_, err = svc.GetRecurringTask(ctx(), admin("other"), r2.ID)
		wantKind(t, err, vp.KindNotFound, "recurringTaskId")
		_, err = svc.PauseRecurringTask(ctx(), admin("other"), r2.ID, "system")
		wantKind(t, err, vp.KindNotFound, "recurringTaskId")
	})
}

func TestListRecurringTasksContract(t *testing.T) {
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, _ store.Store, clock *recClock) {
		const n = 45
		bob := as("acme", "bob")
		for i := 0; i < n; i++ {
			clock.Set(utc(t, "2025-01-06 07:30").Add(time.Duration(i) * time.Second))
			in := standup(fmt.Sprintf("%d * * * *", i), "")
			in.Title = fmt.Sprint("t", i)
			if _, err := svc.CreateRecurringTask(ctx(), bob, in); err != nil {
				t.Fatal(err)
			}
		}
		all := pageAll(t, func(cursor string) (listing.Page[any], error) {
			return svc.ListRecurringTasks(ctx(), bob, listing.Params{Cursor: cursor, Limit: mandateLimit(20)})
		})
		ids := map[string]bool{}
		for _, it := range all {
			ids[it.(vp.RecurringTask).ID] = true
		}
		if len(all) != n || len(ids) != n {
			t.Fatalf("paged %d templates (%d unique), want %d", len(all), len(ids), n)
		}
		if all[0].(vp.RecurringTask).Title != fmt.Sprint("t", n-1) {
			t.Fatalf("not newest first: %+v", all[0])
		}
		big, err := svc.ListRecurringTasks(ctx(), bob, listing.Params{Limit: mandateLimit(500)})
		if err != nil || len(big.Items) > 200 || len(big.Items) != n || big.NextCursor != "" {
			t.Fatalf("limit 500: %d rows, cursor %q, %v", len(big.Items), big.NextCursor, err)
		}
		first, _ := svc.ListRecurringTasks(ctx(), bob, listing.Params{})
		_, err = svc.ListRecurringTasks(ctx(), bob, listing.Params{Cursor: "x" + first.NextCursor[1:]})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListRecurringTasks(ctx(), admin("other"), listing.Params{Cursor: first.NextCursor})
		wantKind(t, err, vp.KindInvalid, "cursor")
		lite, _ := svc.ListRecurringTasks(ctx(), bob, listing.Params{Fields: "lite"})
		row, _ := lite.Items[0].(map[string]json.RawMessage)
		if row == nil || row["cronExpression"] == nil || row["description"] != nil {
			t.Fatalf("lite row %v", lite.Items[0])
		}
		other, _ := svc.ListRecurringTasks(ctx(), admin("other"), listing.Params{})
		if len(other.Items) != 0 {
			t.Fatalf("another tenant lists %d templates", len(other.Items))
		}
	})
}

// fire runs the scheduler at now and fails the test on an error.
func fire(t *testing.T, svc *services, now time.Time) recurring.FireReport {
	t.Helper()
	rep, err := svc.FireDue(ctx(), now)
	if err != nil {
		t.Fatalf("FireDue(%v): %v", now, err)
	}
	return rep
}

// carolsTasks lists carol's todo tasks of tenant, following cursors.
func carolsTasks(t *testing.T, svc *services, tenant string) []vp.Task {
	t.Helper()
	var out []vp.Task
	for _, it := range pageAll(t, func(cursor string) (listing.Page[any], error) {
		return svc.ListTasks(ctx(), admin(tenant), task.ListTasksInput{AssignedTo: "carol", Status: "all", Params: listing.Params{Cursor: cursor, Limit: mandateLimit(200)}})
	}) {
		out = append(out, it.(vp.Task))
	}
	return out
}

func getTemplate(t *testing.T, svc *services, id string) vp.RecurringTask {
	t.Helper()
	r, err := svc.GetRecurringTask(ctx(), admin("acme"), id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestRecurringFiresAtExactSlots(t *testing.T) {
	// Monday 6 January 2025; 09:00 in Paris is 08:00 UTC.
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, _ store.Store, _ *recClock) {
		r, err := svc.CreateRecurringTask(ctx(), as("acme", "bob"), standup("0 9 * * 1-5", "Europe/Paris"))
		if err != nil {
			t.Fatal(err)
		}
		if rep := fire(t, svc, utc(t, "2025-01-06 07:59:59").Add(999*time.Millisecond)); rep.Fired != 0 {
			t.Fatalf("fired a millisecond early: %+v", rep)
		}
		rep := fire(t, svc, utc(t, "2025-01-06 08:00"))
		if rep.Fired != 1 || len(rep.TaskIDs) != 1 || rep.Missed != 0 {
			t.Fatalf("at the slot: %+v", rep)
		}
		tk, err := svc.GetTask(ctx(), admin("acme"), task.TaskRef{TaskID: rep.TaskIDs[0]})
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != vp.TaskTodo || tk.Title != "Daily standup report" || tk.AssignedTo != "carol" || tk.Priority != "medium" ||
			tk.Project != "vantage-peers" || tk.Description == "" || tk.CreatedBy != recurring.RecurringCreator ||
			!slices.Contains(tk.Tags, "recurring:"+r.ID) || tk.CreationTime != utc(t, "2025-01-06 08:00").UnixMilli() {
			t.Fatalf("task %+v", tk)
		}
		got := getTemplate(t, svc, r.ID)
		if got.NextRunAt != utc(t, "2025-01-07 08:00").UnixMilli() || got.LastSlot != utc(t, "2025-01-06 08:00").UnixMilli() ||
			got.LastTaskID != tk.ID || got.FiredCount != 1 || got.LastTriggered == 0 {
			t.Fatalf("template after firing: %+v", got)
		}
		// A retried run at the same time creates nothing new.
		if rep := fire(t, svc, utc(t, "2025-01-06 08:00")); rep.Fired != 0 {
			t.Fatalf("retried run fired again: %+v", rep)
		}
		if rep := fire(t, svc, utc(t, "2025-01-06 08:00:30")); rep.Fired != 0 {
			t.Fatalf("a later run in the same minute fired again: %+v", rep)
		}
		// Friday: Tuesday to Thursday were missed; one task, for Friday.
		rep = fire(t, svc, utc(t, "2025-01-10 08:00:20"))
		if rep.Fired != 1 || rep.Missed != 3 {
			t.Fatalf("friday: %+v", rep)
		}
		got = getTemplate(t, svc, r.ID)
		if got.LastSlot != utc(t, "2025-01-10 08:00").UnixMilli() || got.NextRunAt != utc(t, "2025-01-13 08:00").UnixMilli() || got.MissedSlots != 3 {
			t.Fatalf("template after friday: slot %v next %v missed %d", time.UnixMilli(got.LastSlot).UTC(), time.UnixMilli(got.NextRunAt).UTC(), got.MissedSlots)
		}
		// The weekend has no slot.
		if rep := fire(t, svc, utc(t, "2025-01-12 23:59")); rep.Fired != 0 {
			t.Fatalf("fired on the weekend: %+v", rep)
		}
		if n := len(carolsTasks(t, svc, "acme")); n != 2 {
			t.Fatalf("%d tasks, want 2", n)
		}
	})
}

// TestRecurringFireRace: several schedulers (two services on one store, as
// two processes would be) fire the same slots at once; each (template,
// slot) creates exactly one task.
func TestRecurringFireRace(t *testing.T) {
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, st store.Store, clock *recClock) {
		const templates, schedulers = 5, 8
		ids := map[string]bool{}
		for i := 0; i < templates; i++ {
			r, err := svc.CreateRecurringTask(ctx(), as("acme", "bob"), standup("*/5 * * * *", ""))
			if err != nil {
				t.Fatal(err)
			}
			ids[r.ID] = true
		}
		other := newClockService(t, st, clock)
		var (
			wg    sync.WaitGroup
			mu    sync.Mutex
			fired int
		)
		start := make(chan struct{})
		for i := 0; i < schedulers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				s := svc
				if i%2 == 1 {
					s = other
				}
				<-start
				rep, err := s.FireDue(ctx(), utc(t, "2025-01-06 07:35:10"))
				mu.Lock()
				defer mu.Unlock()
				if err != nil {
					t.Errorf("scheduler %d: %v", i, err)
				}
				fired += rep.Fired
			}(i)
		}
		close(start)
		wg.Wait()
		if fired != templates {
			t.Fatalf("%d schedulers created %d tasks for %d (template, slot) pairs", schedulers, fired, templates)
		}
		tasks := carolsTasks(t, svc, "acme")
		if len(tasks) != templates {
			t.Fatalf("%d tasks stored, want %d", len(tasks), templates)
		}
		per := map[string]int{}
		for _, tk := range tasks {
			for _, tag := range tk.Tags {
				if id, ok := strings.CutPrefix(tag, "recurring:"); ok {
					per[id]++
				}
			}
		}
		for id := range ids {
			if per[id] != 1 || getTemplate(t, svc, id).FiredCount != 1 {
				t.Fatalf("template %s: %d tasks, firedCount %d", id, per[id], getTemplate(t, svc, id).FiredCount)
			}
		}
	})
}

// TestRecurringFiredMarkerBlocksDuplicates: even when the template still
// points at a slot (as if its advance had been lost), a slot whose marker
// exists creates no second task; the template just moves on.
func TestRecurringFiredMarkerBlocksDuplicates(t *testing.T) {
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, st store.Store, _ *recClock) {
		r, err := svc.CreateRecurringTask(ctx(), as("acme", "bob"), standup("0 8 * * *", ""))
		if err != nil {
			t.Fatal(err)
		}
		slot := utc(t, "2025-01-06 08:00").UnixMilli()
		marker := store.Item{Key: store.Key{PK: fmt.Sprintf("T#acme#RECFIRE#%s#%013d", r.ID, slot), SK: "FIRE"}, Data: []byte(`{}`)}
		if err := st.Write(ctx(), store.Put(marker, store.IfNotExists)); err != nil {
			t.Fatal(err)
		}
		rep := fire(t, svc, utc(t, "2025-01-06 08:00:05"))
		if rep.Fired != 0 {
			t.Fatalf("fired a slot that has a marker: %+v", rep)
		}
		got := getTemplate(t, svc, r.ID)
		if got.NextRunAt != utc(t, "2025-01-07 08:00").UnixMilli() || got.FiredCount != 0 {
			t.Fatalf("template not advanced past the fired slot: %+v", got)
		}
		if n := len(carolsTasks(t, svc, "acme")); n != 0 {
			t.Fatalf("%d tasks", n)
		}
	})
}

func TestRecurringDowntimeFiresOnce(t *testing.T) {
	eachBackendAt(t, utc(t, "2025-01-06 00:30"), func(t *testing.T, svc *services, _ store.Store, _ *recClock) {
		r, err := svc.CreateRecurringTask(ctx(), as("acme", "bob"), standup("0 * * * *", ""))
		if err != nil {
			t.Fatal(err)
		}
		// Down from 00:30 to 10:45: slots 01:00 … 10:00 (10 of them) passed.
		rep := fire(t, svc, utc(t, "2025-01-06 10:45"))
		if rep.Fired != 1 || rep.Missed != 9 {
			t.Fatalf("after 10 missed slots: %+v, want one task and 9 passed over", rep)
		}
		got := getTemplate(t, svc, r.ID)
		if got.LastSlot != utc(t, "2025-01-06 10:00").UnixMilli() || got.NextRunAt != utc(t, "2025-01-06 11:00").UnixMilli() || got.MissedSlots != 9 {
			t.Fatalf("template: slot %v next %v missed %d", time.UnixMilli(got.LastSlot).UTC(), time.UnixMilli(got.NextRunAt).UTC(), got.MissedSlots)
		}
		if n := len(carolsTasks(t, svc, "acme")); n != 1 {
			t.Fatalf("%d tasks after downtime, want 1", n)
		}
		// A very long downtime (two years of hourly slots) is bounded work
		// and still fires once.
		rep = fire(t, svc, utc(t, "2027-01-06 10:45"))
		if rep.Fired != 1 || getTemplate(t, svc, r.ID).NextRunAt != utc(t, "2027-01-06 11:00").UnixMilli() {
			t.Fatalf("after two years: %+v", rep)
		}
	})
}

func TestRecurringPausedAndDeleted(t *testing.T) {
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, _ store.Store, clock *recClock) {
		bob := as("acme", "bob")
		paused, err := svc.CreateRecurringTask(ctx(), bob, standup("0 8 * * *", ""))
		if err != nil {
			t.Fatal(err)
		}
		kept, err := svc.CreateRecurringTask(ctx(), bob, standup("0 8 * * *", ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.PauseRecurringTask(ctx(), bob, paused.ID, ""); err != nil {
			t.Fatal(err)
		}
		rep := fire(t, svc, utc(t, "2025-01-06 08:00"))
		if rep.Fired != 1 || getTemplate(t, svc, paused.ID).FiredCount != 0 {
			t.Fatalf("a paused template fired: %+v", rep)
		}
		if rep := fire(t, svc, utc(t, "2025-01-09 08:00")); rep.Fired != 1 || getTemplate(t, svc, paused.ID).FiredCount != 0 {
			t.Fatalf("a paused template fired days later: %+v", rep)
		}
		// Resumed, it fires from its next slot on, not for the paused days.
		clock.Set(utc(t, "2025-01-09 09:00"))
		if _, err := svc.ResumeRecurringTask(ctx(), bob, paused.ID, ""); err != nil {
			t.Fatal(err)
		}
		rep = fire(t, svc, utc(t, "2025-01-10 08:00"))
		if rep.Fired != 2 || rep.Missed != 0 {
			t.Fatalf("after resume: %+v", rep)
		}
		// Deleting a template keeps the tasks it created.
		before := getTemplate(t, svc, kept.ID)
		if _, err := svc.DeleteRecurringTask(ctx(), bob, kept.ID, ""); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.GetTask(ctx(), admin("acme"), task.TaskRef{TaskID: before.LastTaskID}); err != nil {
			t.Fatalf("the deleted template's task is gone: %v", err)
		}
		rep = fire(t, svc, utc(t, "2025-01-11 08:00"))
		if rep.Fired != 1 {
			t.Fatalf("after delete: %+v, want only the other template", rep)
		}
		if n := len(carolsTasks(t, svc, "acme")); n != 5 {
			t.Fatalf("%d tasks, want 5 (3 + 2 from the paused one after resume)", n)
		}
	})
}

// TestRecurringFiresIntoEachTenant: the due scan spans tenants; each task
// lands in its template's tenant only.
func TestRecurringFiresIntoEachTenant(t *testing.T) {
	eachBackendAt(t, utc(t, "2025-01-06 07:30"), func(t *testing.T, svc *services, _ store.Store, _ *recClock) {
		for _, tenant := range []string{"tenant-a", "tenant-b"} {
			if _, err := svc.CreateRecurringTask(ctx(), as(tenant, "bob"), standup("0 8 * * *", "")); err != nil {
				t.Fatal(err)
			}
		}
		rep := fire(t, svc, utc(t, "2025-01-06 08:00"))
		if rep.Fired != 2 {
			t.Fatalf("%+v", rep)
		}
		for _, tenant := range []string{"tenant-a", "tenant-b"} {
			if n := len(carolsTasks(t, svc, tenant)); n != 1 {
				t.Fatalf("%s has %d tasks, want 1", tenant, n)
			}
		}
		for _, id := range rep.TaskIDs {
			_, errA := svc.GetTask(ctx(), admin("tenant-a"), task.TaskRef{TaskID: id})
			_, errB := svc.GetTask(ctx(), admin("tenant-b"), task.TaskRef{TaskID: id})
			if (errA == nil) == (errB == nil) {
				t.Fatalf("task %s visible in both tenants or neither: %v / %v", id, errA, errB)
			}
		}
	})
}
