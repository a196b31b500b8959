package okfsvc_test

import (
	"encoding/base64"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Validations and imports share the Service's one memory budget: 8 at once
// each get through or are refused with rate_limited, what they hold at once
// never exceeds the budget, and a bundle larger than the whole budget is
// refused naming it.
func TestCallsShareOneMemoryBudget(t *testing.T) {
	e := newEnv(t, openSQLite(t))
	e.seed(t, "team/src", 6)
	data := e.export(t, "team/src")
	sc, err := okf.Scan("test", data, okf.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	need := sc.Hold()
	limit := 2*need + need/2 // two calls at once, never three
	svc := okfsvc.New(okfsvc.Options{Store: e.st, Memory: e.mem, Tasks: e.tasks, Version: "test", MemoryBudget: limit, BudgetWait: 5 * time.Millisecond})
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, limited := 0, 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var err error
			if i%2 == 0 {
				_, err = svc.Validate(ctx, e.p, data)
			} else {
				_, err = svc.Import(ctx, e.p, "team/dst", okfsvc.ModeDryRun, data)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
			case vp.IsKind(err, vp.KindRateLimited):
				limited++
			default:
				t.Errorf("call %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	st := svc.BudgetStats()
	t.Logf("hold %d bytes per call, budget %d: %d done, %d rate-limited, peak %d", need, limit, ok, limited, st.Peak)
	if st.Limit != limit || st.Peak > limit || st.Peak < need || st.InUse != 0 || ok == 0 {
		t.Fatalf("stats %+v after %d calls done: the peak must be within the budget, and count them", st, ok)
	}

	small := okfsvc.New(okfsvc.Options{Store: e.st, Memory: e.mem, Tasks: e.tasks, Version: "test", MemoryBudget: need / 2})
	_, err = small.Validate(ctx, e.p, data)
	domaintest.WantKind(t, err, vp.KindTooLarge, strconv.FormatInt(need/2, 10))
	_, err = small.Import(ctx, e.p, "team/dst", okfsvc.ModeMerge, data)
	domaintest.WantKind(t, err, vp.KindTooLarge, strconv.FormatInt(need/2, 10))
}

// A bundle received inline is read with the inline limits (64 MiB in
// all), a file with the Service's (the path transport's).
func TestReceiveChoosesTheTransportsLimits(t *testing.T) {
	data := []byte("bundle bytes")
	r, err := okfsvc.Receive("x", base64.StdEncoding.EncodeToString(data), "", false, okf.DefaultLimits)
	if err != nil || string(r.Data) != string(data) || r.Limits != okf.InlineLimits {
		t.Fatalf("inline: %+v %v", r, err)
	}
}
