package reservation_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/reservation"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

var (
	as  = domaintest.As
	ctx = domaintest.Ctx
)

// clock is a settable clock shared by the store and the service.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClock() *clock { return &clock{t: time.Date(2026, 7, 1, 12, 0, 0, 500_000_000, time.UTC)} }

func eachBackend(t *testing.T, fn func(t *testing.T, svc *reservation.Service, clk *clock)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		clk := newClock()
		svc := reservation.New(reservation.Options{Store: b.Open(t, clk.Now), Cursors: domaintest.Signer(t), Now: clk.Now})
		fn(t, svc, clk)
	})
}

func ptr[T any](v T) *T { return &v }

func reserve(t *testing.T, svc *reservation.Service, who string, in reservation.ReserveInput) reservation.ReserveResult {
	t.Helper()
	if in.Project == "" {
		in.Project = "web"
	}
	res, err := svc.Reserve(ctx(), as("t1", who), in)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestReserveIsAllOrNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *reservation.Service, clk *clock) {
		a := reserve(t, svc, "alice", reservation.ReserveInput{Paths: []string{"src/api/**"}, Reason: "auth refactor"})
		if !a.Reserved || a.Reservation == nil || a.Reservation.Holder != "alice" || !a.Reservation.Exclusive {
			t.Fatalf("alice: %+v", a)
		}
		if want := clk.Now().UnixMilli() + 60*60_000; a.Reservation.ExpiresAt != want {
			t.Fatalf("expiresAt %d, want now + 60 min (%d)", a.Reservation.ExpiresAt, want)
		}
		b := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{"docs/x.md", "src/api/users.go"}})
		if b.Reserved || b.Reservation != nil || len(b.Conflicts) != 1 {
			t.Fatalf("bob: %+v, want one conflict and nothing reserved", b)
		}
		c := b.Conflicts[0]
		if c.ReservationID != a.Reservation.ID || c.Holder != "alice" || strings.Join(c.Paths, ",") != "src/api/**" ||
			!c.Exclusive || c.ExpiresAt != a.Reservation.ExpiresAt || c.Reason != "auth refactor" {
			t.Fatalf("conflict %+v", c)
		}
		// Nothing of bob's request was reserved: carol may take docs/x.md.
		if got, err := svc.Check(ctx(), as("t1", "carol"), reservation.CheckInput{Project: "web", Paths: []string{"docs/**"}}); err != nil || len(got.Conflicts) != 0 {
			t.Fatalf("carol's check of docs/**: %+v, %v; want no conflict", got, err)
		}
		// Another project and another tenant are apart.
		if r := reserve(t, svc, "bob", reservation.ReserveInput{Project: "api", Paths: []string{"src/api/**"}}); !r.Reserved {
			t.Fatalf("another project: %+v", r)
		}
		if r, err := svc.Reserve(ctx(), as("t2", "bob"), reservation.ReserveInput{Project: "web", Paths: []string{"src/api/**"}}); err != nil || !r.Reserved {
			t.Fatalf("another tenant: %+v, %v", r, err)
		}
		// Non-overlapping globs coexist.
		if r := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{"src/*.go", "docs/**/*.md"}}); !r.Reserved {
			t.Fatalf("src/*.go and docs/**/*.md beside src/api/**: %+v", r)
		}
	})
}

func TestSharedExclusiveAndSelf(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *reservation.Service, _ *clock) {
		shared := ptr(false)
		if r := reserve(t, svc, "alice", reservation.ReserveInput{Paths: []string{"src/**"}, Exclusive: shared}); !r.Reserved {
			t.Fatal(r)
		}
		if r := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{"src/a.go"}, Exclusive: shared}); !r.Reserved {
			t.Fatalf("shared beside shared: %+v", r)
		}
		r := reserve(t, svc, "carol", reservation.ReserveInput{Paths: []string{"src/a.go"}})
		if r.Reserved || len(r.Conflicts) != 2 {
			t.Fatalf("exclusive over two shared: %+v, want 2 conflicts", r)
		}
		// A holder never conflicts with itself (src/b.go is under alice's
		// shared src/** only).
		if r := reserve(t, svc, "alice", reservation.ReserveInput{Paths: []string{"src/b.go"}}); !r.Reserved {
			t.Fatalf("alice over her own shared one: %+v", r)
		}
		// A shared check reports only exclusive reservations in the way.
		got, err := svc.Check(ctx(), as("t1", "dave"), reservation.CheckInput{Project: "web", Paths: []string{"src/**"}, Exclusive: shared})
		if err != nil || len(got.Conflicts) != 1 || got.Conflicts[0].Holder != "alice" || !got.Conflicts[0].Exclusive ||
			strings.Join(got.Conflicts[0].Paths, ",") != "src/b.go" {
			t.Fatalf("shared check: %+v, %v; want alice's exclusive one", got, err)
		}
	})
}

// TestFortyRacersOneWins: 40 agents race for overlapping exclusive
// reservations of one project; exactly one wins, the others are told who.
func TestFortyRacersOneWins(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *reservation.Service, _ *clock) {
		globs := []string{"src/api/**", "src/api/users.go", "src/**", "**/users.go", "src/*/users.go"}
		const n = 40
		var wg sync.WaitGroup
		results := make([]reservation.ReserveResult, n)
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				results[i], errs[i] = svc.Reserve(ctx(), as("t1", fmt.Sprintf("agent%d", i)),
					reservation.ReserveInput{Project: "web", Paths: []string{globs[i%len(globs)]}})
			}()
		}
		close(start)
		wg.Wait()
		winner := ""
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("agent%d: %v", i, errs[i])
			}
			if results[i].Reserved {
				if winner != "" {
					t.Fatalf("two winners: %s and agent%d", winner, i)
				}
				winner = results[i].Reservation.Holder
			}
		}
		if winner == "" {
			t.Fatal("no winner")
		}
		for i := range n {
			if !results[i].Reserved && (len(results[i].Conflicts) != 1 || results[i].Conflicts[0].Holder != winner) {
				t.Fatalf("agent%d lost with %+v, want the winner %s named", i, results[i].Conflicts, winner)
			}
		}
	})
}

func TestExpiryIsHonest(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *reservation.Service, clk *clock) {
		a := reserve(t, svc, "alice", reservation.ReserveInput{Paths: []string{"src/**"}, TTLMinutes: ptr(1.0)})
		clk.Add(time.Minute - time.Millisecond)
		if r := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{"src/a.go"}}); r.Reserved {
			t.Fatal("bob got alice's paths 1 ms before her reservation ended")
		}
		clk.Add(time.Millisecond)
		if clk.Now().UnixMilli() != a.Reservation.ExpiresAt {
			t.Fatal("clock arithmetic")
		}
		if r := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{"src/a.go"}}); !r.Reserved {
			t.Fatalf("at expiresAt: %+v, want bob reserved", r)
		}
		// Alice cannot renew what ended: bob holds it now.
		got, err := svc.Renew(ctx(), as("t1", "alice"), reservation.RenewInput{ReservationIDs: []string{a.Reservation.ID}})
		if err != nil || len(got.Renewed) != 0 || len(got.NotFound) != 1 {
			t.Fatalf("renewing an expired reservation: %+v, %v", got, err)
		}
	})
}

func TestRenewAndRelease(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *reservation.Service, clk *clock) {
		a := reserve(t, svc, "alice", reservation.ReserveInput{Paths: []string{"src/**", "docs/**", "Makefile"}, TTLMinutes: ptr(10.0)})
		clk.Add(9 * time.Minute)
		got, err := svc.Renew(ctx(), as("t1", "alice"), reservation.RenewInput{Project: "web"})
		if err != nil || len(got.Renewed) != 1 || got.Renewed[0].ExpiresAt != clk.Now().UnixMilli()+10*60_000 {
			t.Fatalf("renew: %+v, %v", got, err)
		}
		clk.Add(5 * time.Minute) // past the first expiry, within the renewed one
		if r := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{"docs/a.md"}}); r.Reserved {
			t.Fatal("the renewal did not hold")
		}
		// Bob cannot renew or release alice's.
		if got, err := svc.Renew(ctx(), as("t1", "bob"), reservation.RenewInput{ReservationIDs: []string{a.Reservation.ID}}); err != nil || len(got.Renewed) != 0 {
			t.Fatalf("bob renewed alice's: %+v, %v", got, err)
		}
		if got, err := svc.Release(ctx(), as("t1", "bob"), reservation.ReleaseInput{ReservationIDs: []string{a.Reservation.ID}}); err != nil || len(got.Released) != 0 {
			t.Fatalf("bob released alice's: %+v, %v", got, err)
		}
		// Alice gives up docs/**: bob may take docs, not src.
		rel, err := svc.Release(ctx(), as("t1", "alice"), reservation.ReleaseInput{Project: "web", Paths: []string{"docs/**"}})
		if err != nil || len(rel.Narrowed) != 1 || strings.Join(rel.Narrowed[0].Paths, ",") != "src/**,Makefile" {
			t.Fatalf("narrowing: %+v, %v", rel, err)
		}
		if r := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{"docs/a.md"}}); !r.Reserved {
			t.Fatalf("docs after alice gave it up: %+v", r)
		}
		for _, p := range []string{"src/x.go", "Makefile"} {
			if r := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{p}}); r.Reserved {
				t.Fatalf("%s was released with docs/**", p)
			}
		}
		rel, err = svc.Release(ctx(), as("t1", "alice"), reservation.ReleaseInput{ReservationIDs: []string{a.Reservation.ID}})
		if err != nil || len(rel.Released) != 1 {
			t.Fatalf("release: %+v, %v", rel, err)
		}
		if r := reserve(t, svc, "bob", reservation.ReserveInput{Paths: []string{"src/**", "Makefile"}}); !r.Reserved {
			t.Fatalf("after release: %+v", r)
		}
	})
}

func TestListSeedNListN(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *reservation.Service, _ *clock) {
		const n = 45
		for i := range n {
			who := []string{"alice", "bob", "carol"}[i%3]
			reserve(t, svc, who, reservation.ReserveInput{Paths: []string{fmt.Sprintf("pkg%d/**", i)}})
		}
		reserve(t, svc, "alice", reservation.ReserveInput{Project: "other", Paths: []string{"pkg1/**"}})
		count := func(in reservation.ListInput) int {
			return len(domaintest.PageAll(t, func(c string) (listing.Page[any], error) {
				in.Params = listing.Params{Limit: ptr(7), Cursor: c}
				return svc.List(ctx(), as("t1", "dave"), in)
			}))
		}
		for _, c := range []struct {
			in   reservation.ListInput
			want int
		}{
			{reservation.ListInput{Project: "web"}, n},
			{reservation.ListInput{}, n + 1},
			{reservation.ListInput{Holder: "alice"}, n/3 + 1},
			{reservation.ListInput{Project: "web", Holder: "alice"}, n / 3},
			{reservation.ListInput{Project: "web", Path: "pkg1*/x.go"}, 11}, // pkg1, pkg10..pkg19
			{reservation.ListInput{Project: "web", Path: "docs/**"}, 0},
		} {
			if got := count(c.in); got != c.want {
				t.Errorf("list %+v: %d, want %d", c.in, got, c.want)
			}
		}
	})
}

func TestInputsAreChecked(t *testing.T) {
	svc := reservation.New(reservation.Options{Store: teststores.All[0].Open(t, nil), Cursors: domaintest.Signer(t)})
	many := make([]string, reservation.MaxPaths+1)
	for i := range many {
		many[i] = fmt.Sprintf("f%d", i)
	}
	for _, c := range []struct {
		in    reservation.ReserveInput
		kind  vp.Kind
		field string
	}{
		{reservation.ReserveInput{Paths: []string{"a"}}, vp.KindInvalid, "project"},
		{reservation.ReserveInput{Project: "web"}, vp.KindInvalid, "paths"},
		{reservation.ReserveInput{Project: "web", Paths: many}, vp.KindTooLarge, "paths"},
		{reservation.ReserveInput{Project: "web", Paths: []string{"ok", "src/[ab].go"}}, vp.KindInvalid, "paths[1]"},
		{reservation.ReserveInput{Project: "web", Paths: []string{strings.Repeat("a", 513)}}, vp.KindTooLarge, "paths[0]"},
		{reservation.ReserveInput{Project: "web", Paths: []string{"a"}, TTLMinutes: ptr(0.0)}, vp.KindInvalid, "ttlMinutes"},
		{reservation.ReserveInput{Project: "web", Paths: []string{"a"}, TTLMinutes: ptr(1441.0)}, vp.KindInvalid, "ttlMinutes"},
		{reservation.ReserveInput{Project: "web", Paths: []string{"a"}, TTLMinutes: ptr(1.5)}, vp.KindInvalid, "ttlMinutes"},
		{reservation.ReserveInput{Project: "web", Paths: []string{"a"}, Reason: strings.Repeat("r", 513)}, vp.KindTooLarge, "reason"},
	} {
		_, err := svc.Reserve(ctx(), as("t1", "alice"), c.in)
		domaintest.WantKind(t, err, c.kind, c.field)
	}
	_, err := svc.Release(ctx(), as("t1", "alice"), reservation.ReleaseInput{Project: "web"})
	domaintest.WantKind(t, err, vp.KindInvalid, "reservationIds")
	_, err = svc.Reserve(ctx(), as("t1", "alice"), reservation.ReserveInput{Project: "web", Paths: []string{"a"}, Caller: "bob"})
	domaintest.WantKind(t, err, vp.KindForbidden, "callerOrchestrator")
}
