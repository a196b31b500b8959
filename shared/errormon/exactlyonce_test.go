package errormon_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

// crashingStore fails the crashAt-th batch write of a scan (a transaction
// that writes error groups and the deployment), once: a process that died
// between two batches of one page.
type crashingStore struct {
	store.Store
	mu      sync.Mutex
	crashAt int // 0: never
	batches int
}

var errCrash = errors.New("injected: the process died here")

func (s *crashingStore) Write(ctx context.Context, ops ...store.Op) error {
	groups, deployment := 0, false
	for _, op := range ops {
		groups += btoi(strings.Contains(op.Key.PK, "ERRGRP#"))
		deployment = deployment || strings.Contains(op.Key.PK, "DEPLOY#")
	}
	if groups > 0 && deployment {
		s.mu.Lock()
		s.batches++
		crash := s.batches == s.crashAt
		if crash {
			s.crashAt = 0
		}
		s.mu.Unlock()
		if crash {
			return errCrash
		}
	}
	return s.Store.Write(ctx, ops...)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestARereadPageCountsEachGroupOnceOnBothStores: a page of 45 groups is
// committed in two batches (groupsPerBatch is 30) and the cursor moves
// with the second; the process dies between them. The next scan reads the
// same page again — with more events logged since, so the page it reads is
// longer — and every group's count is exact: the first batch's groups are
// not counted twice, the events logged since are counted once.
func TestARereadPageCountsEachGroupOnceOnBothStores(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		st := &crashingStore{Store: b.Open(t, nil)}
		gh, src := &memGitHub{}, &memSource{}
		e := newEnvOn(t, st, gh, src)
		e.addDeployment(t, "app")
		const causes = 45
		want := map[string]int64{}
		add := func(c, k int) {
			ev := cause(c, k)
			src.add(ev)
			want[ev.Function]++
		}
		for c := range causes {
			for k := range 1 + c%3 {
				add(c, k)
			}
		}
		st.mu.Lock()
		st.crashAt = st.batches + 2
		st.mu.Unlock()
		if _, err := e.mon.Scan(ctx(), tenant, "app"); !errors.Is(err, errCrash) {
			t.Fatalf("the scan that dies in its second batch: %v", err)
		}
		half := e.groups(t)
		if len(half) != 30 {
			t.Fatalf("after the crash: %d groups committed, want the first batch's 30", len(half))
		}
		// Logged while the monitor was down: the re-read page is longer.
		for c := range causes + 1 {
			add(c, 100+c)
		}
		if n := e.scan(t, "app"); n == 0 {
			t.Fatal("the scan after the crash read nothing")
		}
		if n := e.scan(t, "app"); n != 0 {
			t.Fatalf("a third scan read %d events, want none", n)
		}
		got := map[string]int64{}
		for _, g := range e.groups(t) {
			if g.MergedInto == "" {
				got[g.Function] += g.Count
			}
		}
		total := int64(0)
		for f, n := range want {
			total += n
			if got[f] != n {
				t.Errorf("%s: counted %d times, want %d", f, got[f], n)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%d groups, want %d", len(got), len(want))
		}
		l, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{Deployment: "app"})
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Deployments) != 1 || l.Deployments[0].EventsScanned != total {
			t.Errorf("deployment status %+v, want %d events scanned", l.Deployments, total)
		}
	})
}
