package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// waitServer is `vantagepeers serve` on a fresh data dir, with a token per
// agent.
type waitServer struct {
	base, dir string
	tokens    map[string]string
}

func startWaitServer(t testing.TB, agents ...string) *waitServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Setenv("VP_MASTER_TOKEN", strings.Repeat("ab", 32))
	t.Setenv("VP_SQLITE_SYNC", "NORMAL")
	t.Setenv("VP_PUBLIC_BASE_URL", "")
	t.Setenv("PUBLIC_BASE_URL", "")
	w := &waitServer{dir: filepath.Join(t.TempDir(), "data"), tokens: map[string]string{}}
	a, err := openApp(ctx, w.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range agents {
		rd, wr := auth.DefaultGrants(name)
		secret, _, err := a.Tokens.Create(ctx, auth.Spec{Tenant: vp.DefaultTenant, ActsAs: []string{name}, ReadPrefixes: rd, WritePrefixes: wr})
		if err != nil {
			t.Fatal(err)
		}
		w.tokens[name] = secret
	}
	_ = a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	errc := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		errc <- run(ctx, []string{"serve", "--addr", addr, "--data-dir", w.dir}, strings.NewReader(""), io.Discard, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	w.base = "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r, err := http.Get(w.base + "/health"); err == nil {
			_ = r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return w
}

// client is an MCP session over HTTP with agent's token.
func (w *waitServer) client(t testing.TB, agent string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: agent}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: w.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{w.tokens[agent]}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// stdioChild is `vantagepeers stdio` on the same data dir in another
// process, as a host starts it (no VP_TOKEN: the local admin).
func (w *waitServer) stdioChild(t testing.TB) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainExitStatus$")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "VP_TOKEN=") }),
		"VP_TEST_MAIN_ARGS=stdio --data-dir "+w.dir)
	testproc.DieWithParent(cmd)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out; a tool
// error is returned as an error with its text.
func call(cs *mcp.ClientSession, name string, args map[string]any, out any) error {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return fmt.Errorf("%s: %s", name, b.String())
	}
	if out == nil {
		return nil
	}
	b, _ := json.Marshal(res.StructuredContent)
	return json.Unmarshal(b, out)
}

type waited struct {
	res activity.Result
	err error
	at  time.Time
}

// waitOn starts a wait_for_activity call and returns its answer.
func waitOn(cs *mcp.ClientSession, args map[string]any) <-chan waited {
	out := make(chan waited, 1)
	go func() {
		var r activity.Result
		err := call(cs, "wait_for_activity", args, &r)
		out <- waited{r, err, time.Now()}
	}()
	return out
}

func sendTo(t testing.TB, cs *mcp.ClientSession, args map[string]any) time.Time {
	t.Helper()
	if err := call(cs, "send_message", args, nil); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// wait_for_activity end to end: over HTTP and stdio, woken within 100 ms
// of a send from another HTTP client, from another process on the data
// dir (stdio), and in that process by a send over HTTP; at the timeout it
// answers with nothing.
func TestWaitForActivityWokenOverHTTPAndStdio(t *testing.T) {
	w := startWaitServer(t, "alice", "bob")
	alice, bob, other := w.client(t, "alice"), w.client(t, "bob"), w.stdioChild(t)
	for _, c := range []struct {
		name         string
		waiter, from *mcp.ClientSession
		waitArgs     map[string]any
		sendArgs     map[string]any
	}{
		{"HTTP client to HTTP waiter", bob, alice, nil, map[string]any{"channel": "bob", "content": "over http"}},
		{"other process (stdio) to HTTP waiter", bob, other, nil, map[string]any{"from": "alice", "channel": "bob", "content": "from stdio"}},
		{"HTTP client to a waiter in the other process", other, alice, map[string]any{"recipient": "bob"}, map[string]any{"channel": "bob", "content": "to stdio"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"timeoutMs": 10_000, "since": time.Now().UnixMilli()}
			for k, v := range c.waitArgs {
				args[k] = v
			}
			got := waitOn(c.waiter, args)
			time.Sleep(300 * time.Millisecond)
			select {
			case a := <-got:
				t.Fatalf("answered before the send: %+v, %v", a.res, a.err)
			default:
			}
			sent := sendTo(t, c.from, c.sendArgs)
			a := <-got
			if a.err != nil || a.res.Count != 1 || a.res.Items[0].Title != c.sendArgs["content"] || a.res.Items[0].From != "alice" {
				t.Fatalf("got %+v, err %v", a.res, a.err)
			}
			// Woken by the send, long before the wait's 10 s; how soon is
			// BenchmarkWakeLatencyHTTP's figure (a timed assertion here
			// failed when make test's streams shared the machine), and
			// that a write in another process wakes a waiter with polling
			// off is shared/activity's TestWokenByAnotherProcess.
			lat := a.at.Sub(sent)
			t.Logf("woken %v after send_message returned", lat)
			if a.res.TimedOut || lat > 5*time.Second {
				t.Fatalf("woken %v after the send (timed out %v): by the timeout, not the send", lat, a.res.TimedOut)
			}
		})
	}
	start := time.Now()
	a := <-waitOn(bob, map[string]any{"timeoutMs": 300, "since": time.Now().UnixMilli()})
	if took := time.Since(start); a.err != nil || !a.res.TimedOut || a.res.Count != 0 || took < 300*time.Millisecond || took > 2*time.Second {
		t.Fatalf("nothing to wait for: %+v, err %v, after %v; want timedOut after 300 ms", a.res, a.err, took)
	}
	var inbox struct {
		Count int `json:"count"`
	}
	if err := call(bob, "check_messages", nil, &inbox); err != nil || inbox.Count != 3 {
		t.Fatalf("check_messages: %d unread, %v; want the 3 messages still unread", inbox.Count, err)
	}
}

// 200 agents each hold a wait over HTTP while each makes another call: no
// call is refused or slowed behind the waits (the same 200 calls with no
// wait are the baseline). One agent holding the 4 waits its token may
// still calls; a 5th wait is refused with an error naming the limit
// (httpapi's TestWaitsDoNotTakeTheTokensRequestSlots shows the slots).
// Then three sends wake all 200. The race pass (-short) runs the same
// paths with 50: under the race detector beside the other test streams
// 200 calls take seconds each, and the waits' 25 s ran out before the
// sends (CI, 2 cores).
func TestTwoHundredWaitersDoNotStarveOtherCalls(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 50
	}
	agents := make([]string, n)
	for i := range agents {
		agents[i] = fmt.Sprintf("agent%03d", i)
	}
	w := startWaitServer(t, append(agents, "alice")...)
	sessions := make([]*mcp.ClientSession, n)
	for i, a := range agents {
		sessions[i] = w.client(t, a)
	}
	beside := func() []time.Duration {
		lats := make([]time.Duration, n)
		errs := make(chan error, n)
		var wg sync.WaitGroup
		for i, cs := range sessions {
			wg.Go(func() {
				start := time.Now()
				errs <- call(cs, "check_messages", nil, nil)
				lats[i] = time.Since(start)
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatalf("a call failed: %v", err)
			}
		}
		slices.Sort(lats)
		return lats
	}
	base := beside()
	t.Logf("%d concurrent check_messages, no wait: p50 %v, p99 %v", n, base[n/2], base[n*99/100])

	since := time.Now().UnixMilli()
	answers := make([]<-chan waited, n)
	for i, cs := range sessions {
		answers[i] = waitOn(cs, map[string]any{"timeoutMs": activity.MaxTimeoutMs, "since": since})
	}
	time.Sleep(2 * time.Second) // every wait is in
	lats := beside()
	t.Logf("check_messages beside %d waits: p50 %v, p99 %v", n, lats[n/2], lats[n*99/100])
	// Starved calls would wait behind the waits' 25 s or be refused; the
	// machine's load (2 shared cores) moves both figures by seconds.
	if p99 := lats[n*99/100]; p99 > 3*base[n*99/100]+2*time.Second {
		t.Fatalf("check_messages p99 %v beside %d waits, %v without; want about the same", p99, n, base[n*99/100])
	}
	for i, ch := range answers {
		select {
		case a := <-ch:
			t.Fatalf("agent %d's wait answered before anything arrived: %+v, %v", i, a.res, a.err)
		default:
		}
	}

	// One token at its waiting budget.
	first := sessions[0]
	more := make([]<-chan waited, 3)
	for i := range more {
		more[i] = waitOn(first, map[string]any{"timeoutMs": 20_000, "since": since})
	}
	time.Sleep(500 * time.Millisecond)
	over := <-waitOn(first, map[string]any{"timeoutMs": 20_000, "since": since})
	if over.err == nil || !strings.Contains(over.err.Error(), "4 calls of wait_for_activity waiting") {
		t.Fatalf("a 5th wait of one token: %+v, %v; want refused naming the limit of 4", over.res, over.err)
	}
	if err := call(first, "check_messages", nil, nil); err != nil {
		t.Fatalf("a call of the token holding 4 waits: %v", err)
	}

	// Wake them all: sends of at most 99 recipients each.
	alice := w.client(t, "alice")
	wakes := make([]time.Duration, 0, n)
	for lo := 0; lo < n; lo += 99 {
		hi := min(lo+99, n)
		sent := sendTo(t, alice, map[string]any{"channel": strings.Join(agents[lo:hi], ","), "content": "wake"})
		for i := lo; i < hi; i++ {
			a := <-answers[i]
			if a.err != nil || a.res.Count != 1 {
				t.Fatalf("agent %d: %+v, %v", i, a.res, a.err)
			}
			wakes = append(wakes, max(a.at.Sub(sent), 0))
		}
	}
	for _, ch := range more {
		if a := <-ch; a.err != nil || a.res.Count != 1 {
			t.Fatalf("the first agent's other waits: %+v, %v", a.res, a.err)
		}
	}
	slices.Sort(wakes)
	t.Logf("%d waiters woken by the sends: p50 %v, p99 %v after the send", n, wakes[n/2], wakes[n*99/100])
	// Under half their 25 s: woken by the sends, not their timeouts, however
	// loaded the machine (CI saw a p99 of 4.4 s under the race detector
	// beside the other test streams).
	if p99 := wakes[n*99/100]; p99 > 10*time.Second {
		t.Fatalf("wake p99 %v with %d waiters; want well under their 25 s", p99, n)
	}
}

// BenchmarkWakeLatencyHTTP: from alice's HTTP client calling send_message
// to bob's wait_for_activity answering his, through serve (bob's answer
// often comes before alice's: the waiter wakes at the commit).
// go test -run '^$' -bench WakeLatencyHTTP -benchtime 100x ./functions/vantagepeers
func BenchmarkWakeLatencyHTTP(b *testing.B) {
	w := startWaitServer(b, "alice", "bob")
	alice, bob := w.client(b, "alice"), w.client(b, "bob")
	lats := make([]time.Duration, 0, b.N)
	for b.Loop() {
		got := waitOn(bob, map[string]any{"timeoutMs": 10_000, "since": time.Now().UnixMilli()})
		time.Sleep(20 * time.Millisecond) // bob is waiting
		sent := time.Now()
		sendTo(b, alice, map[string]any{"channel": "bob", "content": "ping"})
		if a := <-got; a.err != nil || a.res.Count == 0 {
			b.Fatalf("%+v, %v", a.res, a.err)
		} else {
			lats = append(lats, max(a.at.Sub(sent), 0))
		}
		time.Sleep(2 * time.Millisecond)
	}
	slices.Sort(lats)
	q := func(f float64) float64 { return float64(lats[int(f*float64(len(lats)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
