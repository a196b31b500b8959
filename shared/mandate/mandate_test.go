package mandate_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/listing/listingtest"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// newMandate creates a mandate from bob to alice in tenant acme.
func newMandate(t *testing.T, svc *mandate.Service, budget float64) vp.Mandate {
	t.Helper()
	m, err := svc.CreateMandate(ctx(), as("acme", "bob"), mandate.CreateMandateInput{FulfilledBy: "alice", Service: "Build landing page", Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mandateAt returns a mandate driven (as system) to status.
func mandateAt(t *testing.T, svc *mandate.Service, status string) vp.Mandate {
	t.Helper()
	m := newMandate(t, svc, 100000)
	root := admin("acme")
	for m.Status != status {
		var err error
		switch m.Status {
		case vp.MandateRequested:
			m, err = svc.AcceptMandate(ctx(), root, m.ID, "system")
		case vp.MandateAccepted:
			m, err = svc.UpdateMandate(ctx(), root, mandate.UpdateMandateInput{MandateID: m.ID, Caller: "system", Status: vp.MandateInProgress})
		case vp.MandateInProgress:
			m, err = svc.UpdateMandate(ctx(), root, mandate.UpdateMandateInput{MandateID: m.ID, Caller: "system", Status: vp.MandateDelivered})
		case vp.MandateDelivered:
			m, err = svc.SettleMandate(ctx(), root, m.ID, 85000, "system")
		default:
			t.Fatalf("cannot drive a mandate past %s", m.Status)
		}
		if err != nil {
			t.Fatalf("driving to %s: %v", status, err)
		}
	}
	return m
}

func TestMandateLifecycle(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *mandate.Service) {
		bob, alice := as("acme", "bob"), as("acme", "alice")
		limits := &vp.SpendingLimits{MaxPerTransaction: 50000, MaxPerPeriod: 200000, PeriodDays: 30}
		m, err := svc.CreateMandate(ctx(), bob, mandate.CreateMandateInput{FulfilledBy: "Alice", Service: "Build landing page",
			Budget: 100000, SpendingLimits: limits, ApprovedCategories: []string{"seo", "development"}})
		if err != nil {
			t.Fatal(err)
		}
		if m.Status != vp.MandateRequested || m.RequestedBy != "bob" || m.FulfilledBy != "alice" || m.CreationTime == 0 || !strings.HasPrefix(m.ID, "mnd_") {
			t.Fatalf("created %+v", m)
		}
		// The requester cannot accept; the fulfiller can.
		_, err = svc.AcceptMandate(ctx(), bob, m.ID, "")
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		_, err = svc.AcceptMandate(ctx(), bob, m.ID, "alice")
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator") // bob's token may not act as alice
		if m, err = svc.AcceptMandate(ctx(), alice, m.ID, ""); err != nil || m.Status != vp.MandateAccepted || m.AcceptedBy != "alice" {
			t.Fatalf("accept: %+v %v", m, err)
		}
		// Progress is the fulfiller's; the terms are the requester's.
		_, err = svc.UpdateMandate(ctx(), bob, mandate.UpdateMandateInput{MandateID: m.ID, Status: vp.MandateInProgress})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		budget := 120000.0
		_, err = svc.UpdateMandate(ctx(), alice, mandate.UpdateMandateInput{MandateID: m.ID, Budget: &budget})
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		if m, err = svc.UpdateMandate(ctx(), bob, mandate.UpdateMandateInput{MandateID: m.ID, Budget: &budget}); err != nil || m.Budget != budget {
			t.Fatalf("raise budget: %+v %v", m, err)
		}
		newFul := "carol"
		_, err = svc.UpdateMandate(ctx(), bob, mandate.UpdateMandateInput{MandateID: m.ID, FulfilledBy: &newFul})
		wantKind(t, err, vp.KindConflict, "fulfilledBy")
		for _, st := range []string{vp.MandateInProgress, vp.MandateDelivered} {
			if m, err = svc.UpdateMandate(ctx(), alice, mandate.UpdateMandateInput{MandateID: m.ID, Status: st}); err != nil || m.Status != st {
				t.Fatalf("to %s: %+v %v", st, m, err)
			}
		}
		// Settling: the requester only, within the budget.
		_, err = svc.SettleMandate(ctx(), alice, m.ID, 85000, "")
		wantKind(t, err, vp.KindForbidden, "callerOrchestrator")
		_, err = svc.SettleMandate(ctx(), bob, m.ID, 130000, "")
		wantKind(t, err, vp.KindInvalid, "finalCost")
		if !strings.Contains(err.Error(), "130000") || !strings.Contains(err.Error(), "120000") || !strings.Contains(err.Error(), "10000") {
			t.Fatalf("over-budget settle does not give the numbers: %v", err)
		}
		if m, err = svc.SettleMandate(ctx(), bob, m.ID, 85000, ""); err != nil || m.Status != vp.MandateSettled || m.FinalCost == nil || *m.FinalCost != 85000 || m.SettledBy != "bob" {
			t.Fatalf("settle: %+v %v", m, err)
		}
		got, err := svc.GetMandate(ctx(), admin("acme"), m.ID)
		if err != nil || got.Status != vp.MandateSettled || got.DeliveredAt == 0 || got.SettledAt == 0 || got.SpendingLimits == nil {
			t.Fatalf("get: %+v %v", got, err)
		}
		// Closed: terms are frozen.
		_, err = svc.UpdateMandate(ctx(), bob, mandate.UpdateMandateInput{MandateID: m.ID, Budget: &budget})
		wantKind(t, err, vp.KindConflict, "settled")
		// Another tenant sees nothing.
		_, err = svc.GetMandate(ctx(), admin("other"), m.ID)
		wantKind(t, err, vp.KindNotFound, "mandateId")
		_, err = svc.AcceptMandate(ctx(), admin("other"), m.ID, "system")
		wantKind(t, err, vp.KindNotFound, "mandateId")
	})
}

// TestMandateTransitions tries every (current status, target status) pair
// through the tool that performs it: exactly the lifecycle's next step is
// allowed, every other is refused naming the current and allowed states.
func TestMandateTransitions(t *testing.T) {
	next := map[string]string{
		vp.MandateRequested: vp.MandateAccepted, vp.MandateAccepted: vp.MandateInProgress,
		vp.MandateInProgress: vp.MandateDelivered, vp.MandateDelivered: vp.MandateSettled,
	}
	eachBackend(t, func(t *testing.T, svc *mandate.Service) {
		root := admin("acme")
		move := func(m vp.Mandate, to string) (vp.Mandate, error) {
			switch to {
			case vp.MandateAccepted:
				return svc.AcceptMandate(ctx(), root, m.ID, "system")
			case vp.MandateSettled:
				return svc.SettleMandate(ctx(), root, m.ID, 1, "system")
			}
			return svc.UpdateMandate(ctx(), root, mandate.UpdateMandateInput{MandateID: m.ID, Caller: "system", Status: to})
		}
		for _, from := range vp.MandateStatuses {
			for _, to := range vp.MandateStatuses {
				t.Run(from+"->"+to, func(t *testing.T) {
					m := mandateAt(t, svc, from)
					got, err := move(m, to)
					if next[from] == to {
						if err != nil || got.Status != to {
							t.Fatalf("allowed transition refused: %+v %v", got, err)
						}
						return
					}
					wantKind(t, err, vp.KindConflict, "status")
					msg := err.Error()
					if !strings.Contains(msg, "is "+from) {
						t.Errorf("refusal does not name the current state %s: %s", from, msg)
					}
					if n, ok := next[from]; ok && !strings.Contains(msg, "allowed next state is "+n) {
						t.Errorf("refusal does not name the allowed next state %s: %s", n, msg)
					}
					if from == vp.MandateSettled && !strings.Contains(msg, "closed") {
						t.Errorf("refusal on a settled mandate does not say it is closed: %s", msg)
					}
					if cur, _ := svc.GetMandate(ctx(), root, m.ID); cur.Status != from {
						t.Errorf("a refused transition changed the status to %s", cur.Status)
					}
				})
			}
		}
	})
}

// TestAcceptMandateRace: 50 callers accept the same mandate at once; exactly
// one wins and every other is refused because it is already accepted.
func TestAcceptMandateRace(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *mandate.Service) {
		m := newMandate(t, svc, 1000)
		const n = 50
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			wins     int
			failures []error
		)
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				p, caller := as("acme", "alice"), ""
				if i%2 == 1 {
					p, caller = admin("acme"), "system"
				}
				<-start
				_, err := svc.AcceptMandate(ctx(), p, m.ID, caller)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else {
					failures = append(failures, err)
				}
			}(i)
		}
		close(start)
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d accepts won, want exactly 1", wins)
		}
		for _, err := range failures {
			if vp.KindOf(err) != vp.KindConflict || !strings.Contains(err.Error(), "is accepted") {
				t.Fatalf("losing accept: %v (kind %s), want a conflict saying it is accepted", err, vp.KindOf(err))
			}
		}
		got, _ := svc.GetMandate(ctx(), admin("acme"), m.ID)
		if got.Status != vp.MandateAccepted || got.AcceptedBy == "" {
			t.Fatalf("after the race: %+v", got)
		}
	})
}

func TestMandateValidation(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *mandate.Service) {
		bob := as("acme", "bob")
		ok := mandate.CreateMandateInput{FulfilledBy: "alice", Service: "x", Budget: 10}
		cases := []struct {
			name  string
			edit  func(*mandate.CreateMandateInput)
			kind  vp.Kind
			field string
		}{
			{"no fulfiller", func(in *mandate.CreateMandateInput) { in.FulfilledBy = "" }, vp.KindInvalid, "fulfilledBy"},
			{"bad fulfiller", func(in *mandate.CreateMandateInput) { in.FulfilledBy = "a#b" }, vp.KindInvalid, "fulfilledBy"},
			{"no service", func(in *mandate.CreateMandateInput) { in.Service = " " }, vp.KindInvalid, "service"},
			{"long service", func(in *mandate.CreateMandateInput) { in.Service = strings.Repeat("x", 600) }, vp.KindTooLarge, "service"},
			{"zero budget", func(in *mandate.CreateMandateInput) { in.Budget = 0 }, vp.KindInvalid, "budget"},
			{"negative budget", func(in *mandate.CreateMandateInput) { in.Budget = -5 }, vp.KindInvalid, "budget"},
			{"huge budget", func(in *mandate.CreateMandateInput) { in.Budget = 1e18 }, vp.KindTooLarge, "budget"},
			{"impersonation", func(in *mandate.CreateMandateInput) { in.RequestedBy = "carol" }, vp.KindForbidden, "requestedBy"},
			{"zero per-transaction", func(in *mandate.CreateMandateInput) {
				in.SpendingLimits = &vp.SpendingLimits{MaxPerPeriod: 10, PeriodDays: 1}
			}, vp.KindInvalid, "spendingLimits.maxPerTransaction"},
			{"fractional period", func(in *mandate.CreateMandateInput) {
				in.SpendingLimits = &vp.SpendingLimits{MaxPerTransaction: 1, MaxPerPeriod: 10, PeriodDays: 1.5}
			}, vp.KindInvalid, "spendingLimits.periodDays"},
			{"transaction over period", func(in *mandate.CreateMandateInput) {
				in.SpendingLimits = &vp.SpendingLimits{MaxPerTransaction: 20, MaxPerPeriod: 10, PeriodDays: 7}
			}, vp.KindInvalid, "maxPerTransaction"},
			{"empty category", func(in *mandate.CreateMandateInput) { in.ApprovedCategories = []string{""} }, vp.KindInvalid, "approvedCategories"},
			{"too many categories", func(in *mandate.CreateMandateInput) { in.ApprovedCategories = make([]string, 51) }, vp.KindTooLarge, "approvedCategories"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				in := ok
				c.edit(&in)
				_, err := svc.CreateMandate(ctx(), bob, in)
				wantKind(t, err, c.kind, c.field)
			})
		}
		m := newMandate(t, svc, 10)
		_, err := svc.UpdateMandate(ctx(), bob, mandate.UpdateMandateInput{MandateID: m.ID})
		wantKind(t, err, vp.KindInvalid, "nothing to update")
		_, err = svc.UpdateMandate(ctx(), bob, mandate.UpdateMandateInput{MandateID: m.ID, Status: "done"})
		wantKind(t, err, vp.KindInvalid, "in_progress")
		_, err = svc.UpdateMandate(ctx(), admin("acme"), mandate.UpdateMandateInput{MandateID: m.ID, Caller: "system", Status: vp.MandateAccepted})
		wantKind(t, err, vp.KindInvalid, "status")
		wantRemedy(t, err, mandate.RemedyAccept)
		_, err = svc.UpdateMandate(ctx(), admin("acme"), mandate.UpdateMandateInput{MandateID: m.ID, Caller: "system", Status: vp.MandateSettled})
		wantKind(t, err, vp.KindInvalid, "status")
		wantRemedy(t, err, mandate.RemedySettle)
		_, err = svc.SettleMandate(ctx(), bob, m.ID, -1, "")
		wantKind(t, err, vp.KindInvalid, "finalCost")
		_, err = svc.GetMandate(ctx(), bob, "mnd_nope")
		wantKind(t, err, vp.KindNotFound, "mandateId")
		_, err = svc.AcceptMandate(ctx(), as("acme", "alice"), "", "")
		wantKind(t, err, vp.KindInvalid, "mandateId")
	})
}

func TestValidateMandateSpending(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *mandate.Service) {
		bob := as("acme", "bob")
		m, err := svc.CreateMandate(ctx(), bob, mandate.CreateMandateInput{FulfilledBy: "alice", Service: "SEO audit", Budget: 100000,
			SpendingLimits: &vp.SpendingLimits{MaxPerTransaction: 50000, MaxPerPeriod: 80000, PeriodDays: 30}, ApprovedCategories: []string{"seo", "content"}})
		if err != nil {
			t.Fatal(err)
		}
		plain := newMandate(t, svc, 1000)
		cases := []struct {
			name     string
			id       string
			amount   float64
			category string
			kind     vp.Kind
			want     []string // substrings of the verdict error
		}{
			{"within", m.ID, 25000, "seo", 0, nil},
			{"within, no category", m.ID, 50000, "", 0, nil},
			{"over budget", plain.ID, 1500, "", vp.KindInvalid, []string{"proposedAmount", "1500", "budget", "1000", "by 500"}},
			{"at budget", plain.ID, 1000, "", 0, nil},
			{"over per-transaction", m.ID, 60000, "", vp.KindInvalid, []string{"60000", "maxPerTransaction", "50000", "by 10000"}},
			{"unapproved category", m.ID, 10, "travel", vp.KindInvalid, []string{"category", "travel", "seo, content"}},
			{"zero", m.ID, 0, "", vp.KindInvalid, []string{"proposedAmount"}},
			{"unknown mandate", "mnd_nope", 1, "", vp.KindNotFound, []string{"mandateId"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				v, err := svc.ValidateMandateSpending(ctx(), bob, c.id, c.amount, c.category)
				if c.kind == 0 {
					if err != nil || !v.WithinLimits || v.ProposedAmount != c.amount {
						t.Fatalf("verdict %+v %v", v, err)
					}
					return
				}
				wantKind(t, err, c.kind, "")
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("refusal %q does not mention %q", err, w)
					}
				}
			})
		}
		settled := mandateAt(t, svc, vp.MandateSettled)
		_, err = svc.ValidateMandateSpending(ctx(), bob, settled.ID, 1, "")
		wantKind(t, err, vp.KindConflict, "settled")
	})
}

func TestListMandatesContract(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *mandate.Service) {
		const n = 45
		root := admin("acme")
		for i := 0; i < n; i++ {
			req := "carol"
			if i%3 == 0 {
				req = "bob"
			}
			m, err := svc.CreateMandate(ctx(), root, mandate.CreateMandateInput{RequestedBy: req, FulfilledBy: "alice", Service: fmt.Sprint("s", i), Budget: 10})
			if err != nil {
				t.Fatal(err)
			}
			if i%5 == 0 {
				if _, err := svc.AcceptMandate(ctx(), root, m.ID, "alice"); err != nil {
					t.Fatal(err)
				}
			}
		}
		list := func(in mandate.ListMandatesInput) []any {
			return pageAll(t, func(cursor string) (listing.Page[any], error) {
				in.Params = listing.Params{Cursor: cursor, Limit: mandateLimit(20)}
				return svc.ListMandates(ctx(), root, in)
			})
		}
		all := list(mandate.ListMandatesInput{})
		ids := map[string]bool{}
		for _, it := range all {
			ids[it.(vp.Mandate).ID] = true
		}
		if len(all) != n || len(ids) != n {
			t.Fatalf("paged %d mandates (%d unique), want %d", len(all), len(ids), n)
		}
		if all[0].(vp.Mandate).Service != fmt.Sprint("s", n-1) {
			t.Fatalf("not newest first: %+v", all[0])
		}
		for _, c := range []struct {
			name string
			in   mandate.ListMandatesInput
			want int
		}{
			{"by requester", mandate.ListMandatesInput{RequestedBy: "bob"}, 15},
			{"by status", mandate.ListMandatesInput{Status: vp.MandateAccepted}, 9},
			{"by requester and status", mandate.ListMandatesInput{RequestedBy: "Carol", Status: vp.MandateAccepted}, 6},
			{"by fulfiller", mandate.ListMandatesInput{FulfilledBy: "alice"}, n},
			{"by fulfiller and status", mandate.ListMandatesInput{FulfilledBy: "alice", Status: vp.MandateRequested}, 36},
			{"both parties", mandate.ListMandatesInput{RequestedBy: "bob", FulfilledBy: "alice"}, 15},
			{"unknown party", mandate.ListMandatesInput{FulfilledBy: "zed"}, 0},
		} {
			t.Run(c.name, func(t *testing.T) {
				got := list(c.in)
				if len(got) != c.want {
					t.Fatalf("%d mandates, want %d", len(got), c.want)
				}
				for _, it := range got {
					m := it.(vp.Mandate)
					if (c.in.Status != "" && m.Status != c.in.Status) || (c.in.RequestedBy != "" && m.RequestedBy != strings.ToLower(c.in.RequestedBy)) {
						t.Fatalf("row %+v does not match the filter %+v", m, c.in)
					}
				}
			})
		}
		// A party's listing shows mandates waiting on someone first.
		byAlice := list(mandate.ListMandatesInput{FulfilledBy: "alice"})
		if byAlice[0].(vp.Mandate).Status != vp.MandateRequested || byAlice[n-1].(vp.Mandate).Status != vp.MandateAccepted {
			t.Fatalf("party listing order: first %s, last %s", byAlice[0].(vp.Mandate).Status, byAlice[n-1].(vp.Mandate).Status)
		}
		big, err := svc.ListMandates(ctx(), root, mandate.ListMandatesInput{Params: listing.Params{Limit: mandateLimit(500)}})
		if err != nil || len(big.Items) > 200 || len(big.Items) != n || big.NextCursor != "" {
			t.Fatalf("limit 500: %d rows, cursor %q, %v", len(big.Items), big.NextCursor, err)
		}
		first, _ := svc.ListMandates(ctx(), root, mandate.ListMandatesInput{})
		tampered := listingtest.Tamper(first.NextCursor)
		_, err = svc.ListMandates(ctx(), root, mandate.ListMandatesInput{Params: listing.Params{Cursor: tampered}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListMandates(ctx(), root, mandate.ListMandatesInput{Status: vp.MandateAccepted, Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListMandates(ctx(), admin("other"), mandate.ListMandatesInput{Params: listing.Params{Cursor: first.NextCursor}})
		wantKind(t, err, vp.KindInvalid, "cursor")
		_, err = svc.ListMandates(ctx(), root, mandate.ListMandatesInput{Status: "open"})
		wantKind(t, err, vp.KindInvalid, "requested, accepted")
		lite, _ := svc.ListMandates(ctx(), root, mandate.ListMandatesInput{Params: listing.Params{Fields: "lite"}})
		row, _ := lite.Items[0].(map[string]json.RawMessage)
		if row == nil || row["status"] == nil || row["_id"] == nil {
			t.Fatalf("lite row %v", lite.Items[0])
		}
		if _, has := row["budget"]; has {
			t.Fatalf("lite row carries budget: %v", row)
		}
		other, _ := svc.ListMandates(ctx(), admin("other"), mandate.ListMandatesInput{})
		if len(other.Items) != 0 {
			t.Fatalf("another tenant lists %d mandates", len(other.Items))
		}
	})
}

func mandateLimit(n int) *int { return &n }
