package errormon_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch/cloudwatchfake"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/store"
)

// Reading a burst to the end, against a fake Convex that answers in
// chunks (as stream_function_logs does), long-polls when caught up and
// counts requests.

// burstCauses are the causes a burst's failures cycle through.
var burstCauses = []string{"messages:send", "orders:get", "ai:run", "cart:add", "pay:charge"}

// burstEntries logs n failed completions, cycling through burstCauses,
// and a success after every 49th (read past, not counted), spread evenly
// over [from, to]. It returns the entries and the failures per function.
func burstEntries(n int, from, to time.Time) ([]convexfake.Entry, map[string]int64) {
	var es []convexfake.Entry
	want := map[string]int64{}
	step := to.Sub(from) / time.Duration(n+n/49+1)
	at := from
	for k := range n {
		fn := burstCauses[k%len(burstCauses)]
		es = append(es, convexfake.Entry{Identifier: fn, ExecutionID: fmt.Sprintf("burst-%d", k), RequestID: fmt.Sprintf("req-%d", k), Time: at,
			Error: fmt.Sprintf("Uncaught Error: %s failed for item %d\n    at handler (../convex/%s.ts:%d:9)", fn, k, fn[:3], 10+k%7)})
		want[fn]++
		at = at.Add(step)
		if k%49 == 48 {
			es = append(es, convexfake.Entry{Identifier: "messages:list", UdfType: "Query", ExecutionID: fmt.Sprintf("ok-%d", k), Time: at})
			at = at.Add(step)
		}
	}
	return es, want
}

func burstSize(t *testing.T) int {
	if testing.Short() {
		return 2000
	}
	return 20000
}

func TestBurstIsReadToTheEndInOneScanAgainstFakeConvex(t *testing.T) {
	for _, chunk := range []int{50, 1000} {
		t.Run(fmt.Sprintf("chunks of %d", chunk), func(t *testing.T) {
			n := burstSize(t)
			// Convex holds a long poll a minute; the reader's own bound is
			// DefaultMaxWait (20 s): paying it once would show.
			e := newRealEnv(t, realOpts{convex: convexfake.Options{Chunk: chunk, Hold: convexfake.DefaultHold}})
			e.addConvex(t, "app", keyEnvVar)
			es, want := burstEntries(n, time.Now().Add(-4*time.Minute), time.Now().Add(-10*time.Second))
			e.convex.Append(es...)

			began := time.Now()
			got, err := e.mon.ScanAll(ctx(), tenant)
			took := time.Since(began)
			if err != nil || got != n {
				t.Fatalf("one run read %d of %d failed completions: %v", got, n, err)
			}
			reqs := e.convex.Requests()
			// Every chunk once, and one follow-up that finds nothing.
			chunks := (len(es) + chunk - 1) / chunk
			t.Logf("%d events in %d entries, chunks of %d: one scan took %v, %d requests (%.0f events/s)",
				n, len(es), chunk, took.Round(time.Millisecond), len(reqs), float64(n)/took.Seconds())
			if len(reqs) != chunks+1 {
				t.Fatalf("%d requests, want %d chunks and one follow-up", len(reqs), chunks)
			}
			if last := reqs[len(reqs)-1]; last.Entries != 0 || last.Answered.Sub(last.Received) > 2*errormon.DefaultFollowUpWait {
				t.Fatalf("the follow-up %+v: want an empty answer cut after at most the follow-up wait", last)
			}
			if took >= convexfake.DefaultHold/2 {
				t.Fatalf("the scan took %v: a long poll was paid", took)
			}
			e.checkCounts(t, "app", want)
			if st := e.status(t, "app"); st.Status != "ok" || st.EventsScanned != int64(n) || st.LagSeconds != 0 {
				t.Fatalf("after the burst: %+v", st)
			}
			if !containsAll(e.logs.String(), `"msg":"error monitor: scanned a deployment"`, fmt.Sprintf(`"events":%d`, n), fmt.Sprintf(`"chunks":%d`, chunks+1)) {
				t.Fatalf("the scan's progress is not in the log:\n%.2000s", e.logs.String())
			}
		})
	}
}

func TestTinyBudgetStopsBehindAndTheNextScanResumesAgainstFakeConvex(t *testing.T) {
	const n = 1000
	e := newRealEnv(t, realOpts{convex: convexfake.Options{Chunk: 50, Latency: 40 * time.Millisecond, Hold: time.Second},
		mon: func(o *errormon.Options) { o.ScanBudget = 400 * time.Millisecond }})
	e.addConvex(t, "app", keyEnvVar)
	es, want := burstEntries(n, time.Now().Add(-4*time.Minute), time.Now().Add(-10*time.Second))
	e.convex.Append(es...)

	first := e.scan(t, "app")
	st := e.status(t, "app")
	if first == 0 || first >= n || st.LagSeconds <= 0 || st.Status != "ok" || st.EventsScanned != int64(first) {
		t.Fatalf("a scan out of budget read %d of %d, status %+v: want part, lagSeconds > 0", first, n, st)
	}
	t.Logf("the first scan read %d of %d and stopped %d s behind", first, n, st.LagSeconds)
	total, scans, lag := first, 1, st.LagSeconds
	// Until a scan has caught up: one whose budget cut its last wait does
	// not know that it read everything, and says it is behind.
	for (total < n || lag != 0) && scans < 50 {
		// The lease was released: the next scan runs at once and resumes.
		// (Under -race a scan's whole budget may go before its first
		// answer: it reads nothing, and the next goes on.)
		total += e.scan(t, "app")
		scans++
		st = e.status(t, "app")
		if st.LagSeconds != 0 && lag != 0 && st.LagSeconds > lag {
			t.Fatalf("scan %d: lag rose from %d to %d s", scans, lag, st.LagSeconds)
		}
		if st.LagSeconds != 0 || total == n {
			lag = st.LagSeconds
		}
	}
	if total != n || st.LagSeconds != 0 || st.EventsScanned != n {
		t.Fatalf("%d scans read %d of %d, status %+v", scans, total, n, st)
	}
	e.checkCounts(t, "app", want) // no event counted twice
	t.Logf("%d scans of 400 ms read the %d events", scans, n)
}

// inFlight counts the Reads in progress at once.
type inFlight struct {
	source.Source
	now, peak atomic.Int32
}

func (f *inFlight) Read(ctx context.Context, t source.Target, cursor string, since time.Time, max int) (source.Page, error) {
	now := f.now.Add(1)
	defer f.now.Add(-1)
	for {
		p := f.peak.Load()
		if now <= p || f.peak.CompareAndSwap(p, now) {
			break
		}
	}
	return f.Source.Read(ctx, t, cursor, since, max)
}

func TestDeploymentsAreScannedConcurrentlyWithinTheBoundAgainstFakeConvex(t *testing.T) {
	for _, c := range []struct{ deployments, bound, want int }{{4, 0, errormon.DefaultScanConcurrency}, {5, 2, 2}} {
		t.Run(fmt.Sprintf("%d deployments, bound %d", c.deployments, c.bound), func(t *testing.T) {
			const n = 250
			counter := &inFlight{}
			e := newRealEnv(t, realOpts{convex: convexfake.Options{Chunk: 50, Latency: 20 * time.Millisecond, Hold: time.Second},
				mon: func(o *errormon.Options) {
					o.ScanConcurrency = c.bound
					counter.Source = o.Sources[errormon.SourceConvex]
					o.Sources[errormon.SourceConvex] = counter
				}})
			es, want := burstEntries(n, time.Now().Add(-4*time.Minute), time.Now().Add(-10*time.Second))
			e.convex.Append(es...)
			for d := range c.deployments {
				e.addConvex(t, fmt.Sprintf("app-%d", d), keyEnvVar)
			}
			began := time.Now()
			got, err := e.mon.ScanAll(ctx(), tenant)
			if err != nil || got != n*c.deployments {
				t.Fatalf("read %d events, want %d: %v", got, n*c.deployments, err)
			}
			t.Logf("%d deployments of %d events: %v, at most %d reads at once", c.deployments, n, time.Since(began).Round(time.Millisecond), counter.peak.Load())
			if p := int(counter.peak.Load()); p != c.want {
				t.Fatalf("at most %d reads at once, want %d (the bound)", p, c.want)
			}
			for d := range c.deployments {
				e.checkCounts(t, fmt.Sprintf("app-%d", d), want)
			}
		})
	}
}

// dyingStore stops writing once dead: a process killed (kill -9) between
// two chunks commits nothing after the one it had committed.
type dyingStore struct {
	store.Store
	dead atomic.Bool
}

var errKilled = errors.New("killed")

func (s *dyingStore) Write(ctx context.Context, ops ...store.Op) error {
	if s.dead.Load() {
		return errKilled
	}
	return s.Store.Write(ctx, ops...)
}

// dieAfter lets reads through, and kills the store once the k-th read
// has answered (before its chunk is committed).
type dieAfter struct {
	source.Source
	mu    sync.Mutex
	reads int
	k     int
	st    *dyingStore
}

func (d *dieAfter) Read(ctx context.Context, t source.Target, cursor string, since time.Time, max int) (source.Page, error) {
	p, err := d.Source.Read(ctx, t, cursor, since, max)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.reads++; d.reads == d.k {
		d.st.dead.Store(true)
	}
	return p, err
}

func TestAKillBetweenChunksCountsEveryEventOnceAgainstFakeConvex(t *testing.T) {
	const n = 1000
	var dying *dyingStore
	var killer *dieAfter
	e := newRealEnv(t, realOpts{convex: convexfake.Options{Chunk: 50, Hold: time.Second},
		mon: func(o *errormon.Options) {
			dying = &dyingStore{Store: o.Store}
			o.Store = dying
			killer = &dieAfter{Source: o.Sources[errormon.SourceConvex], k: 7, st: dying}
			o.Sources[errormon.SourceConvex] = killer
		}})
	e.addConvex(t, "app", keyEnvVar)
	es, want := burstEntries(n, time.Now().Add(-4*time.Minute), time.Now().Add(-10*time.Second))
	e.convex.Append(es...)

	if _, err := e.mon.Scan(ctx(), tenant, "app"); err == nil {
		t.Fatal("the killed scan did not fail")
	}
	// Six chunks were committed, the seventh was read and lost.
	dying.dead.Store(false)
	st := e.status(t, "app")
	if st.EventsScanned == 0 || st.EventsScanned >= n {
		t.Fatalf("after the kill: %+v, want the chunks committed before it", st)
	}
	// The dead scan's lease runs out; a new one reads on from the cursor.
	e.clock.Add(2 * time.Minute)
	rest := e.scan(t, "app")
	if int64(rest)+st.EventsScanned != n {
		t.Fatalf("the kill committed %d, the rerun read %d: want %d in all", st.EventsScanned, rest, n)
	}
	e.checkCounts(t, "app", want)
	if st := e.status(t, "app"); st.EventsScanned != n || st.LagSeconds != 0 {
		t.Fatalf("after the rerun: %+v", st)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func TestTinyBudgetStopsBehindAndResumesAgainstFakeCloudWatchLogs(t *testing.T) {
	counts := []int{60, 40, 30}
	want := map[string]int64{cwFunctions[0]: 60, "checkout": 40, cwFunctions[2]: 30}
	e := newRealEnv(t, realOpts{cw: cloudwatchfake.Options{PageSize: 7},
		mon: func(o *errormon.Options) { o.ScanBudget = 1500 * time.Millisecond }})
	e.addCloudWatch(t, "checkout")
	e.putCloudWatch(counts, time.Now().Add(-10*time.Minute))
	e.cwAPI.setBefore(func(int) { time.Sleep(100 * time.Millisecond) }) // a slow region

	first := e.scan(t, "checkout")
	st := e.status(t, "checkout")
	// The events were logged 10 minutes ago, within a few ms: the scan
	// stopped among them, that far behind.
	if first == 0 || first >= 130 || st.LagSeconds < 590 || st.LagSeconds > 610 {
		t.Fatalf("a scan out of budget read %d of 130, status %+v: want part, lagSeconds about 600", first, st)
	}
	t.Logf("the first scan read %d of 130 and stopped %d s behind", first, st.LagSeconds)
	total, scans := first, 1
	for (total < 130 || st.LagSeconds != 0) && scans < 30 {
		total += e.scan(t, "checkout")
		scans++
		st = e.status(t, "checkout")
	}
	if total != 130 || st.LagSeconds != 0 || st.EventsScanned != 130 {
		t.Fatalf("%d scans read %d of 130, status %+v", scans, total, st)
	}
	e.checkCounts(t, "checkout", want)
}
