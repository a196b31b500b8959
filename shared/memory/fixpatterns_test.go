package memory_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func fixInput(symptom, project string) memory.FixPatternInput {
	return memory.FixPatternInput{Symptom: symptom, RootCause: "Race condition in the validation mutation",
		Tags: []string{"race-condition"}, Stack: []string{"convex"}, SourceProject: project, Severity: "critical"}
}

func TestFixPatterns(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		dave := as("acme", "dave")
		credits, err := e.svc.CreateFixPattern(ctx(), dave, fixInput("Credits not deducted after video generation", "myreeldream"))
		if err != nil {
			t.Fatal(err)
		}
		chat, err := e.svc.CreateFixPattern(ctx(), dave, fixInput("Message disappears after sending in chat", "vantage"))
		if err != nil {
			t.Fatal(err)
		}
		d, err := e.svc.GetFixPattern(ctx(), dave, credits.PatternID)
		if err != nil || d.CreatedBy != "dave" || d.ValidatedFix != "" || len(d.Attempts) != 0 || d.Severity != "critical" {
			t.Fatalf("pattern %+v %v", d, err)
		}
		a1, err := e.svc.AddFixAttempt(ctx(), dave, memory.AttemptInput{PatternID: credits.PatternID, Description: "Retry the mutation", Worked: false, Why: "Still racing"})
		if err != nil || a1.ValidatedFixSet || a1.AttemptCount != 1 {
			t.Fatalf("attempt 1 %+v %v", a1, err)
		}
		a2, err := e.svc.AddFixAttempt(ctx(), dave, memory.AttemptInput{PatternID: credits.PatternID, Description: "Optimistic locking on the credit row",
			Worked: true, Why: "Concurrent mutations no longer read a stale balance", Commit: "abc1234"})
		if err != nil || !a2.ValidatedFixSet {
			t.Fatalf("attempt 2 %+v %v", a2, err)
		}
		a3, err := e.svc.AddFixAttempt(ctx(), dave, memory.AttemptInput{PatternID: credits.PatternID, Description: "Another fix", Worked: true, Why: "also works"})
		if err != nil || a3.ValidatedFixSet {
			t.Fatalf("a later working attempt replaced the validated fix: %+v %v", a3, err)
		}
		d, _ = e.svc.GetFixPattern(ctx(), dave, credits.PatternID)
		if d.ValidatedFix != "Optimistic locking on the credit row" || d.AttemptCount != 3 || len(d.Attempts) != 3 ||
			d.Attempts[0].ID != a3.AttemptID || d.Attempts[1].Commit != "abc1234" || d.Attempts[2].Worked {
			t.Fatalf("pattern after attempts %+v", d)
		}
		f, err := e.svc.ValidateFix(ctx(), dave, credits.PatternID, "Optimistic locking with retry on conflict")
		if err != nil || f.ValidatedFix != "Optimistic locking with retry on conflict" || f.ValidatedAt == 0 {
			t.Fatalf("validate_fix %+v %v", f, err)
		}
		// The validated fix is searchable text at once (keyword side of the index).
		res, err := e.svc.SearchFixPatterns(ctx(), dave, memory.FixSearchInput{Query: "video credits are not deducted"})
		if err != nil || res.Count != 0 {
			t.Fatalf("semantic search before the worker: %+v %v", res, err)
		}
		e.drain()
		res, err = e.svc.SearchFixPatterns(ctx(), dave, memory.FixSearchInput{Query: "credits not deducted after generating a video", Limit: 5})
		if err != nil || res.Count != 2 || res.Results[0].ID != credits.PatternID || res.Results[0].Score <= res.Results[1].Score {
			t.Fatalf("search_fix_patterns %+v %v", res, err)
		}
		res, _ = e.svc.SearchFixPatterns(ctx(), dave, memory.FixSearchInput{Query: "chat message disappears", Limit: 1})
		if res.Count != 1 || res.Results[0].ID != chat.PatternID {
			t.Fatalf("search_fix_patterns chat %+v", res)
		}
		// Tenants are isolated.
		other := as("beta", "eve")
		_, err = e.svc.GetFixPattern(ctx(), other, credits.PatternID)
		wantKind(t, err, vp.KindNotFound, "patternId")
		_, err = e.svc.AddFixAttempt(ctx(), other, memory.AttemptInput{PatternID: credits.PatternID, Description: "x", Why: "y"})
		wantKind(t, err, vp.KindNotFound, "patternId")
		if res, _ := e.svc.SearchFixPatterns(ctx(), other, memory.FixSearchInput{Query: "credits not deducted"}); res.Count != 0 {
			t.Fatalf("tenant beta finds %d patterns of acme", res.Count)
		}
	})
}

func TestFixPatternBadInput(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		dave := as("acme", "dave")
		cases := []struct {
			name  string
			edit  func(*memory.FixPatternInput)
			kind  vp.Kind
			field string
		}{
			{"no symptom", func(f *memory.FixPatternInput) { f.Symptom = "" }, vp.KindInvalid, "symptom"},
			{"no root cause", func(f *memory.FixPatternInput) { f.RootCause = "" }, vp.KindInvalid, "rootCause"},
			{"no project", func(f *memory.FixPatternInput) { f.SourceProject = "" }, vp.KindInvalid, "sourceProject"},
			{"bad severity", func(f *memory.FixPatternInput) { f.Severity = "high" }, vp.KindInvalid, "critical, major, minor"},
			{"huge symptom", func(f *memory.FixPatternInput) { f.Symptom = strings.Repeat("s", vp.MaxSymptomBytes+1) }, vp.KindTooLarge, "symptom"},
			{"too many tags", func(f *memory.FixPatternInput) { f.Tags = make([]string, 51) }, vp.KindTooLarge, "tags"},
			{"empty file", func(f *memory.FixPatternInput) { f.Files = []string{""} }, vp.KindInvalid, "files"},
			{"impersonation", func(f *memory.FixPatternInput) { f.CreatedBy = "eve" }, vp.KindForbidden, "createdBy"},
		}
		for _, c := range cases {
			in := fixInput("symptom", "p")
			c.edit(&in)
			_, err := e.svc.CreateFixPattern(ctx(), dave, in)
			wantKind(t, err, c.kind, c.field)
		}
		page, _ := e.svc.ListFixPatterns(ctx(), dave, memory.ListFixPatternsInput{})
		if len(page.Items) != 0 {
			t.Fatalf("refused creates wrote %d patterns", len(page.Items))
		}
		_, err := e.svc.AddFixAttempt(ctx(), dave, memory.AttemptInput{PatternID: "fix_missing", Description: "x", Why: "y"})
		wantKind(t, err, vp.KindNotFound, "patternId")
		p, _ := e.svc.CreateFixPattern(ctx(), dave, fixInput("symptom", "p"))
		_, err = e.svc.AddFixAttempt(ctx(), dave, memory.AttemptInput{PatternID: p.PatternID, Why: "y"})
		wantKind(t, err, vp.KindInvalid, "description")
		_, err = e.svc.ValidateFix(ctx(), dave, p.PatternID, "")
		wantKind(t, err, vp.KindInvalid, "validatedFix")
		_, err = e.svc.SearchFixPatterns(ctx(), dave, memory.FixSearchInput{})
		wantKind(t, err, vp.KindInvalid, "query")
	})
}

// TestFixAttemptsRace: concurrent attempts are all recorded and counted.
func TestFixAttemptsRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		dave := as("acme", "dave")
		p, _ := e.svc.CreateFixPattern(ctx(), dave, fixInput("flaky test", "p"))
		const n = 10
		var wg sync.WaitGroup
		var setCount sync.Map
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := e.svc.AddFixAttempt(ctx(), dave, memory.AttemptInput{PatternID: p.PatternID, Description: fmt.Sprint("fix ", i), Worked: true, Why: "w"})
				if err != nil && !vp.IsKind(err, vp.KindConflict) {
					t.Error(err)
				}
				if err == nil && r.ValidatedFixSet {
					setCount.Store(i, true)
				}
			}()
		}
		wg.Wait()
		d, _ := e.svc.GetFixPattern(ctx(), dave, p.PatternID)
		sets := 0
		setCount.Range(func(any, any) bool { sets++; return true })
		if d.AttemptCount != len(d.Attempts) || sets != 1 || d.ValidatedFix == "" {
			t.Fatalf("attemptCount %d, attempts %d, validated fix set %d times", d.AttemptCount, len(d.Attempts), sets)
		}
	})
}

func TestListFixPatterns(t *testing.T) {
	eachBackend(t, func(t *testing.T, e *env) {
		dave := as("acme", "dave")
		var all, inA []string
		for i := 0; i < 45; i++ {
			project := "a"
			if i%2 == 1 {
				project = "b"
			}
			r, err := e.svc.CreateFixPattern(ctx(), dave, fixInput(fmt.Sprint("symptom ", i), project))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, r.PatternID)
			if project == "a" {
				inA = append(inA, r.PatternID)
			}
		}
		checkListContract(t, all, func(p listing.Params) (listing.Page[any], error) {
			return e.svc.ListFixPatterns(ctx(), dave, memory.ListFixPatternsInput{Params: p})
		})
		checkListContract(t, inA, func(p listing.Params) (listing.Page[any], error) {
			return e.svc.ListFixPatterns(ctx(), dave, memory.ListFixPatternsInput{Project: "a", Params: p})
		})
		page, _ := e.svc.ListFixPatterns(ctx(), as("beta", "eve"), memory.ListFixPatternsInput{})
		if len(page.Items) != 0 {
			t.Fatalf("tenant beta lists %d patterns of acme", len(page.Items))
		}
	})
}
