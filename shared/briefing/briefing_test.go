package briefing_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/listing/listingtest"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func strp(s string) *string { return &s }

func TestBriefingCreateGetUpdate(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *briefing.Service) {
		pi, sigma := as("acme", "pi"), as("acme", "sigma")
		n, err := svc.CreateBriefingNote(ctx(), pi, briefing.Input{Title: "Day 82 close", Topic: " sprint-review ",
			Participants: []string{"Pi", "pi", "sigma"}, Content: "M3 done.", Decisions: []string{"ship M4 Monday"}})
		if err != nil {
			t.Fatal(err)
		}
		if n.CreatedBy != "pi" || n.Topic != "sprint-review" || fmt.Sprint(n.Participants) != "[pi sigma]" || n.UpdatedAt != 0 || n.ID == "" {
			t.Fatalf("created %+v", n)
		}
		got, err := svc.GetBriefingNote(ctx(), sigma, n.ID) // everyone in the tenant reads
		if err != nil || got.Content != "M3 done." {
			t.Fatalf("get: %+v %v", got, err)
		}
		// Deny by default: only the creator or system updates.
		_, err = svc.UpdateBriefingNote(ctx(), sigma, briefing.Update{NoteID: n.ID, Title: strp("hijacked")})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		_, err = svc.UpdateBriefingNote(ctx(), sigma, briefing.Update{NoteID: n.ID, CallerOrchestrator: "pi", Title: strp("hijacked")})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		_, err = svc.UpdateBriefingNote(ctx(), as("acme", "*"), briefing.Update{NoteID: n.ID, CallerOrchestrator: "system", Title: strp("hijacked")})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		if got, _ := svc.GetBriefingNote(ctx(), pi, n.ID); got.Title != "Day 82 close" {
			t.Fatalf("a refused update changed the note: %+v", got)
		}
		up, err := svc.UpdateBriefingNote(ctx(), pi, briefing.Update{NoteID: n.ID, Title: strp("Day 82 wrap-up"), Decisions: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if up.Title != "Day 82 wrap-up" || up.Content != "M3 done." || len(up.Decisions) != 0 || fmt.Sprint(up.Participants) != "[pi sigma]" ||
			up.UpdatedBy != "pi" || up.UpdatedAt < up.CreatedAt || up.CreatedBy != "pi" || up.ID != n.ID {
			t.Fatalf("partial update: %+v", up)
		}
		// system (admin only) may update anyone's note; a topic change moves it between topic lists.
		if _, err := svc.UpdateBriefingNote(ctx(), admin("acme"), briefing.Update{NoteID: n.ID, CallerOrchestrator: "system", Topic: strp("standup")}); err != nil {
			t.Fatal(err)
		}
		old, _ := svc.ListBriefingNotes(ctx(), pi, briefing.ListInput{Topic: "sprint-review"})
		moved, _ := svc.ListBriefingNotes(ctx(), pi, briefing.ListInput{Topic: "standup"})
		if len(old.Items) != 0 || len(moved.Items) != 1 || moved.Items[0].(vp.BriefingNote).UpdatedBy != "system" {
			t.Fatalf("topic change: old topic %d, new topic %d", len(old.Items), len(moved.Items))
		}
		_, err = svc.UpdateBriefingNote(ctx(), pi, briefing.Update{NoteID: n.ID})
		wantKind(t, err, vp.KindInvalid, "nothing to update")
		_, err = svc.UpdateBriefingNote(ctx(), pi, briefing.Update{NoteID: n.ID, Participants: []string{}})
		wantKind(t, err, vp.KindInvalid, "participants")
		_, err = svc.UpdateBriefingNote(ctx(), pi, briefing.Update{NoteID: "brf_nope", Title: strp("x")})
		wantKind(t, err, vp.KindNotFound, "noteId")
		_, err = svc.GetBriefingNote(ctx(), admin("other"), n.ID)
		wantKind(t, err, vp.KindNotFound, "noteId")
		_, err = svc.UpdateBriefingNote(ctx(), admin("other"), briefing.Update{NoteID: n.ID, CallerOrchestrator: "system", Title: strp("x")})
		wantKind(t, err, vp.KindNotFound, "noteId")
	})
}

func TestBriefingValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *briefing.Service) {
		pi := as("acme", "pi")
		ok := briefing.Input{Title: "t", Topic: "standup", Participants: []string{"pi"}, Content: "c"}
		with := func(f func(*briefing.Input)) briefing.Input { in := ok; f(&in); return in }
		cases := []struct {
			name  string
			in    briefing.Input
			kind  vp.Kind
			field string
		}{
			{"no title", with(func(in *briefing.Input) { in.Title = "" }), vp.KindInvalid, "title"},
			{"no topic", with(func(in *briefing.Input) { in.Topic = "  " }), vp.KindInvalid, "topic"},
			{"control character in topic", with(func(in *briefing.Input) { in.Topic = "a\nb" }), vp.KindInvalid, "topic"},
			{"no participants", with(func(in *briefing.Input) { in.Participants = nil }), vp.KindInvalid, "participants"},
			{"bad participant", with(func(in *briefing.Input) { in.Participants = []string{"a,b"} }), vp.KindInvalid, "participants"},
			{"no content", with(func(in *briefing.Input) { in.Content = "" }), vp.KindInvalid, "content"},
			{"oversize content", with(func(in *briefing.Input) { in.Content = strings.Repeat("x", vp.MaxBriefingContentBytes+1) }), vp.KindTooLarge, "content"},
			{"long title", with(func(in *briefing.Input) { in.Title = strings.Repeat("x", vp.MaxShortTextBytes+1) }), vp.KindTooLarge, "title"},
			{"too many decisions", with(func(in *briefing.Input) { in.Decisions = make([]string, vp.MaxBriefingListItems+1) }), vp.KindTooLarge, "decisions"},
			{"empty decision", with(func(in *briefing.Input) { in.Decisions = []string{""} }), vp.KindInvalid, "decisions"},
			{"bad memory id", with(func(in *briefing.Input) { in.LinkedMemoryIDs = []string{"m#1"} }), vp.KindInvalid, "linkedMemoryIds"},
			{"impersonation", with(func(in *briefing.Input) { in.CreatedBy = "sigma" }), vp.KindForbidden, "createdBy"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := svc.CreateBriefingNote(ctx(), pi, c.in)
				wantKind(t, err, c.kind, c.field)
			})
		}
		page, err := svc.ListBriefingNotes(ctx(), pi, briefing.ListInput{})
		if err != nil || len(page.Items) != 0 {
			t.Fatalf("refused creates stored %d notes (%v)", len(page.Items), err)
		}
		neg := int64(-1)
		_, err = svc.ListBriefingNotes(ctx(), pi, briefing.ListInput{UpdatedSince: &neg})
		wantKind(t, err, vp.KindInvalid, "updatedSince")
	})
}

func TestBriefingLists(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *briefing.Service) {
		const n = 45 // 30 sprint-review, 15 standup
		pi := as("acme", "pi")
		var ids []string
		for i := 0; i < n; i++ {
			topic := "sprint-review"
			if i%3 == 0 {
				topic = "standup"
			}
			note, err := svc.CreateBriefingNote(ctx(), pi, briefing.Input{Title: fmt.Sprint("note ", i), Topic: topic,
				Participants: []string{"pi", "sigma"}, Content: strings.Repeat("body ", 50)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, note.ID)
		}
		reader := as("acme", "tau")
		all := listingtest.Contract(t, n, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{Params: p})
		})
		if all[0].(vp.BriefingNote).ID != ids[n-1] || all[n-1].(vp.BriefingNote).ID != ids[0] {
			t.Fatalf("not newest first")
		}
		review := listingtest.Contract(t, 30, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{Topic: "sprint-review", Params: p})
		})
		for _, r := range review {
			if r.(vp.BriefingNote).Topic != "sprint-review" {
				t.Fatalf("topic filter let through %+v", r)
			}
		}
		listingtest.Contract(t, 15, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{Topic: "standup", Params: p})
		})
		// updatedSince: only the notes changed after the mark, most recent change first.
		time.Sleep(5 * time.Millisecond)
		since := time.Now().UnixMilli()
		for _, i := range []int{0, 1, 2, 3, 4} { // standup: 0 and 3
			if _, err := svc.UpdateBriefingNote(ctx(), pi, briefing.Update{NoteID: ids[i], Content: strp("revised")}); err != nil {
				t.Fatal(err)
			}
		}
		changed := listingtest.Contract(t, 5, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{UpdatedSince: &since, Params: p})
		})
		if changed[0].(vp.BriefingNote).ID != ids[4] {
			t.Fatalf("updatedSince: not most recently changed first: %v", changed[0])
		}
		listingtest.Contract(t, 2, func(p listing.Params) (listing.Page[any], error) {
			return svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{Topic: "standup", UpdatedSince: &since, Params: p})
		})
		// Cursors are bound to filters and tenant.
		first, _ := svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{})
		_, err := svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{Topic: "sprint-review", Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{UpdatedSince: &since, Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListBriefingNotes(ctx(), admin("other"), briefing.ListInput{Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		lite, _ := svc.ListBriefingNotes(ctx(), reader, briefing.ListInput{Params: listing.Params{Fields: "lite"}})
		listingtest.LiteKeys(t, lite.Items[0], "_id", "_creationTime", "topic", "title", "participants", "createdBy")
		other, _ := svc.ListBriefingNotes(ctx(), admin("other"), briefing.ListInput{})
		if len(other.Items) != 0 {
			t.Fatalf("another tenant lists %d notes", len(other.Items))
		}
	})
}
