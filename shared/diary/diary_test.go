package diary_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/listing/listingtest"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func day(i int) string {
	return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format("2006-01-02")
}

func TestDiaryUpsertAndGet(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *diary.Service) {
		sigma := as("acme", "sigma")
		first, err := svc.WriteDiary(ctx(), sigma, diary.WriteInput{Date: "2026-05-29", Content: "M3 shipped",
			Highlights: []string{"M3 on time"}, Blockers: []string{"CI flaky"}})
		if err != nil {
			t.Fatal(err)
		}
		if !first.Created || first.Orchestrator != "sigma" || first.DiaryID == "" {
			t.Fatalf("first write %+v", first)
		}
		before, err := svc.GetDiary(ctx(), as("acme", "pi"), "Sigma", "2026-05-29") // anyone in the tenant reads
		if err != nil {
			t.Fatal(err)
		}
		second, err := svc.WriteDiary(ctx(), sigma, diary.WriteInput{Date: "2026-05-29", Orchestrator: "SIGMA", Content: "M3 shipped, M4 started",
			Highlights: []string{"M4 kickoff"}})
		if err != nil {
			t.Fatal(err)
		}
		if second.Created || second.DiaryID != first.DiaryID {
			t.Fatalf("overwrite made a new entry: %+v vs %+v", second, first)
		}
		e, err := svc.GetDiary(ctx(), sigma, "", "2026-05-29") // defaults to the caller
		if err != nil {
			t.Fatal(err)
		}
		if e.ID != first.DiaryID || e.Content != "M3 shipped, M4 started" || fmt.Sprint(e.Highlights) != "[M4 kickoff]" ||
			len(e.Blockers) != 0 || e.CreatedAt != before.CreatedAt || e.CreationTime != before.CreationTime || e.UpdatedAt < before.UpdatedAt {
			t.Fatalf("after overwrite: %+v (before %+v)", e, before)
		}
		page, _ := svc.ListDiaries(ctx(), sigma, diary.ListInput{})
		if len(page.Items) != 1 {
			t.Fatalf("upsert left %d entries, want 1", len(page.Items))
		}
		// A miss blames the date when the orchestrator has a diary, the
		// orchestrator when it has none (an unknown or mistyped id).
		for _, c := range []struct {
			name       string
			p          vp.Principal
			orch, date string
			field      string
		}{
			{"day without an entry", sigma, "", "2026-05-30", "date"},
			{"unknown orchestrator", sigma, "sigmaa", "2026-05-29", "orchestrator"},
			{"another tenant sees nothing", admin("other"), "sigma", "2026-05-29", "orchestrator"},
		} {
			_, err = svc.GetDiary(ctx(), c.p, c.orch, c.date)
			var e *vp.Error
			if !errors.As(err, &e) || e.Kind != vp.KindNotFound || e.Field != c.field {
				t.Errorf("%s: %v, want not_found naming %s", c.name, err, c.field)
			}
		}
		// Admin writes for anyone, including system.
		if _, err := svc.WriteDiary(ctx(), admin("acme"), diary.WriteInput{Date: "2026-05-29", Orchestrator: "system", Content: "cron ran"}); err != nil {
			t.Fatal(err)
		}
	})
}

func TestDiaryValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *diary.Service) {
		alice := as("acme", "alice")
		ok := diary.WriteInput{Date: "2026-05-29", Content: "x"}
		with := func(f func(*diary.WriteInput)) diary.WriteInput { in := ok; f(&in); return in }
		many := make([]string, vp.MaxDiaryListItems+1)
		for i := range many {
			many[i] = "h"
		}
		cases := []struct {
			name  string
			in    diary.WriteInput
			kind  vp.Kind
			field string
		}{
			{"no date", with(func(in *diary.WriteInput) { in.Date = "" }), vp.KindInvalid, "date"},
			{"not a calendar day", with(func(in *diary.WriteInput) { in.Date = "2026-02-30" }), vp.KindInvalid, "YYYY-MM-DD"},
			{"one-digit month", with(func(in *diary.WriteInput) { in.Date = "2026-5-29" }), vp.KindInvalid, "date"},
			{"french order", with(func(in *diary.WriteInput) { in.Date = "29/05/2026" }), vp.KindInvalid, "date"},
			{"datetime", with(func(in *diary.WriteInput) { in.Date = "2026-05-29T10:00:00Z" }), vp.KindInvalid, "date"},
			{"empty content", with(func(in *diary.WriteInput) { in.Content = " " }), vp.KindInvalid, "content"},
			{"oversize content", with(func(in *diary.WriteInput) { in.Content = strings.Repeat("x", vp.MaxDiaryContentBytes+1) }), vp.KindTooLarge, "content"},
			{"too many highlights", with(func(in *diary.WriteInput) { in.Highlights = many }), vp.KindTooLarge, "highlights"},
			{"empty blocker", with(func(in *diary.WriteInput) { in.Blockers = []string{""} }), vp.KindInvalid, "blockers"},
			{"bad orchestrator", with(func(in *diary.WriteInput) { in.Orchestrator = "a#b" }), vp.KindInvalid, "orchestrator"},
			{"impersonation", with(func(in *diary.WriteInput) { in.Orchestrator = "bob" }), vp.KindForbidden, "orchestrator"},
			{"system needs admin", with(func(in *diary.WriteInput) { in.Orchestrator = "system" }), vp.KindForbidden, "orchestrator"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := svc.WriteDiary(ctx(), alice, c.in)
				wantKind(t, err, c.kind, c.field)
			})
		}
		page, err := svc.ListDiaries(ctx(), admin("acme"), diary.ListInput{})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("refused writes stored %d entries (%v)", len(page.Items), err)
		}
		_, err = svc.GetDiary(ctx(), alice, "", "2026-13-01")
		wantKind(t, err, vp.KindInvalid, "date")
		_, err = svc.GetDiary(ctx(), as("acme", "*"), "", "2026-05-01")
		wantKind(t, err, vp.KindInvalid, "orchestrator")
		_, err = svc.ListDiaryByDateRange(ctx(), alice, diary.ListInput{From: "2026-05-01"})
		wantKind(t, err, vp.KindInvalid, "to")
		_, err = svc.ListDiaryByDateRange(ctx(), alice, diary.ListInput{From: "2026-05-10", To: "2026-05-01"})
		wantKind(t, err, vp.KindInvalid, "from")
		_, err = svc.ListDiaries(ctx(), alice, diary.ListInput{To: "2026-02-29"}) // 2026 is not a leap year
		wantKind(t, err, vp.KindInvalid, "to")
	})
}

func TestDiaryLists(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *diary.Service) {
		const n = 45 // alice 30 days, bob 15 days (days 10..24), interleaved
		root := admin("acme")
		for i := 0; i < 30; i++ {
			if _, err := svc.WriteDiary(ctx(), root, diary.WriteInput{Orchestrator: "alice", Date: day(i), Content: fmt.Sprint("a", i)}); err != nil {
				t.Fatal(err)
			}
			if i >= 10 && i < 25 {
				if _, err := svc.WriteDiary(ctx(), root, diary.WriteInput{Orchestrator: "bob", Date: day(i), Content: fmt.Sprint("b", i)}); err != nil {
					t.Fatal(err)
				}
			}
		}
		reader := as("acme", "carol")
		all := listingtest.Contract(t, n, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListDiaries(ctx(), reader, diary.ListInput{Params: p})
		})
		for i := 1; i < len(all); i++ {
			if all[i].(vp.DiaryEntry).Date > all[i-1].(vp.DiaryEntry).Date {
				t.Fatalf("list_diaries not newest first at %d: %s after %s", i, all[i].(vp.DiaryEntry).Date, all[i-1].(vp.DiaryEntry).Date)
			}
		}
		alice := listingtest.Contract(t, 30, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListDiaries(ctx(), reader, diary.ListInput{Orchestrator: "Alice", Params: p})
		})
		if alice[0].(vp.DiaryEntry).Date != day(29) || alice[29].(vp.DiaryEntry).Date != day(0) {
			t.Fatalf("alice's diary: first %s last %s", alice[0].(vp.DiaryEntry).Date, alice[29].(vp.DiaryEntry).Date)
		}
		// list_diaries with a range; both ends inclusive.
		ranged := listingtest.Contract(t, 2*11, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListDiaries(ctx(), reader, diary.ListInput{From: day(10), To: day(20), Params: p})
		})
		if ranged[0].(vp.DiaryEntry).Date != day(20) || ranged[len(ranged)-1].(vp.DiaryEntry).Date != day(10) {
			t.Fatalf("range bounds not inclusive: %v .. %v", ranged[0], ranged[len(ranged)-1])
		}
		// list_diary_by_date_range: ascending, every orchestrator, then one.
		asc := listingtest.Contract(t, n, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListDiaryByDateRange(ctx(), reader, diary.ListInput{From: day(0), To: day(29), Params: p})
		})
		for i := 1; i < len(asc); i++ {
			if asc[i].(vp.DiaryEntry).Date < asc[i-1].(vp.DiaryEntry).Date {
				t.Fatalf("list_diary_by_date_range not ascending at %d", i)
			}
		}
		bob := listingtest.Contract(t, 5, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListDiaryByDateRange(ctx(), reader, diary.ListInput{Orchestrator: "bob", From: day(20), To: day(40), Params: p})
		})
		if bob[0].(vp.DiaryEntry).Date != day(20) || bob[4].(vp.DiaryEntry).Date != day(24) {
			t.Fatalf("bob's range: %v .. %v", bob[0], bob[4])
		}
		// A cursor is bound to its filters and to the tenant.
		first, _ := svc.ListDiaries(ctx(), reader, diary.ListInput{})
		_, err := svc.ListDiaries(ctx(), reader, diary.ListInput{Orchestrator: "alice", Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListDiaryByDateRange(ctx(), reader, diary.ListInput{From: day(0), To: day(28), Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListDiaries(ctx(), admin("other"), diary.ListInput{Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		lite, err := svc.ListDiaries(ctx(), reader, diary.ListInput{Params: listing.Params{Fields: "lite"}})
		if err != nil || len(lite.Items) != 20 {
			t.Fatalf("lite: %d rows %v", len(lite.Items), err)
		}
		listingtest.LiteKeys(t, lite.Items[0], "_id", "_creationTime", "date", "orchestrator", "highlights")
		other, _ := svc.ListDiaries(ctx(), admin("other"), diary.ListInput{})
		if len(other.Items) != 0 {
			t.Fatalf("another tenant lists %d entries", len(other.Items))
		}
	})
}

// TestDiaryLimitClamp: with more than 200 entries, limit 500 returns 200 and a cursor.
func TestDiaryLimitClamp(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *diary.Service) {
		alice := as("acme", "alice")
		for i := 0; i < 205; i++ {
			if _, err := svc.WriteDiary(ctx(), alice, diary.WriteInput{Date: day(i), Content: "x"}); err != nil {
				t.Fatal(err)
			}
		}
		big := 500
		p, err := svc.ListDiaries(ctx(), alice, diary.ListInput{Params: listing.Params{Limit: &big}})
		if err != nil || len(p.Items) != listing.MaxLimit || p.NextCursor == "" {
			t.Fatalf("limit 500: %d rows, cursor %q, %v", len(p.Items), p.NextCursor, err)
		}
		listingtest.Contract(t, 205, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListDiaries(ctx(), alice, diary.ListInput{Params: p})
		})
	})
}

// TestDiaryWriteRace: 50 writers on one (orchestrator, date) leave one entry
// holding one of their contents; exactly one of them created it.
func TestDiaryWriteRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *diary.Service) {
		const writers = 50
		sigma := as("acme", "sigma")
		var wg sync.WaitGroup
		results := make([]diary.WriteResult, writers)
		errs := make([]error, writers)
		for i := 0; i < writers; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				results[i], errs[i] = svc.WriteDiary(ctx(), sigma, diary.WriteInput{Date: "2026-05-29", Content: fmt.Sprint("writer ", i)})
			}(i)
		}
		wg.Wait()
		created, ids := 0, map[string]bool{}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("writer %d: %v", i, err)
			}
			ids[results[i].DiaryID] = true
			if results[i].Created {
				created++
			}
		}
		if created != 1 || len(ids) != 1 {
			t.Fatalf("%d writers created the entry, %d distinct ids; want 1 and 1", created, len(ids))
		}
		page, _ := svc.ListDiaries(ctx(), sigma, diary.ListInput{Orchestrator: "sigma"})
		if len(page.Items) != 1 {
			t.Fatalf("%d entries for one day", len(page.Items))
		}
		e := page.Items[0].(vp.DiaryEntry)
		if !ids[e.ID] || !strings.HasPrefix(e.Content, "writer ") {
			t.Fatalf("entry %+v", e)
		}
	})
}
