package activity_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// childDBEnv names the database a child process sends from.
const childDBEnv = "VP_ACTIVITY_CHILD_DB"

// childMain is the sender of another process: it opens the data dir's
// database as the binary does and, for each line "send TEXT" on stdin,
// sends TEXT to bob and prints "SENT <unix ns>" once the send returned.
func childMain() bool {
	path := os.Getenv(childDBEnv)
	if path == "" {
		return false
	}
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: path, Synchronous: "NORMAL"})
	if err != nil {
		fail(err)
	}
	s, err := app.Build(context.Background(), app.Ports{Groups: app.Coordination, Store: st})
	if err != nil {
		fail(err)
	}
	fmt.Println("READY")
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		text, ok := strings.CutPrefix(sc.Text(), "send ")
		if !ok {
			break
		}
		if _, err := s.Messages.Send(context.Background(), alice, message.SendInput{Channel: "bob", Content: text}); err != nil {
			fail(err)
		}
		fmt.Printf("SENT %d\n", time.Now().UnixNano())
	}
	s.Close()
	_ = st.Close()
	return true
}

// sender is a child process sending on a database file.
type sender struct {
	in   io.WriteCloser
	out  *bufio.Scanner
	cmd  *exec.Cmd
	errs *testproc.Output
}

func startSender(t testing.TB, path string) *sender {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childDBEnv+"="+path)
	testproc.DieWithParent(cmd)
	s := &sender{cmd: cmd, errs: &testproc.Output{}}
	cmd.Stderr = s.errs
	var err error
	if s.in, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s.out = bufio.NewScanner(out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.in.Close(); _ = cmd.Wait() })
	if !s.out.Scan() || s.out.Text() != "READY" {
		t.Fatalf("the sender did not start: %q; stderr:\n%s", s.out.Text(), s.errs.String())
	}
	return s
}

// send has the child send text and returns when its send returned.
func (s *sender) send(t testing.TB, text string) time.Time {
	t.Helper()
	if _, err := fmt.Fprintf(s.in, "send %s\n", text); err != nil {
		t.Fatal(err)
	}
	if !s.out.Scan() {
		t.Fatalf("the sender stopped; stderr:\n%s", s.errs.String())
	}
	ns, err := strconv.ParseInt(strings.TrimPrefix(s.out.Text(), "SENT "), 10, 64)
	if err != nil {
		t.Fatalf("sender said %q", s.out.Text())
	}
	return time.Unix(0, ns)
}

// openShared opens the database of a data dir in this process with the
// embedded binary's wiring: SQLite's data_version as the change counter.
func openShared(t testing.TB, o activity.Options) (*app.Services, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "vantagepeers.db")
	st, err := sqlite.Open(ctx, sqlite.Options{Path: path, Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	o.Changes = st
	s, err := app.Build(ctx, app.Ports{Groups: app.Coordination, Store: st, Cursors: domaintest.Signer(t), Activity: o})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, path
}

// A send from another process on the same data dir wakes the waiter: it
// polls data_version every 50 ms. Store polling is off (a minute) and the
// wait lasts 10 s, so an answer long before either can only come from the
// change counter. How soon is BenchmarkWakeLatency's figure.
func TestWokenByAnotherProcess(t *testing.T) {
	s, path := openShared(t, activity.Options{PollMin: time.Minute, PollMax: time.Minute})
	child := startSender(t, path)
	for i := range 5 {
		since := time.Now().UnixMilli()
		got := waitThen(s, bob, activity.Input{TimeoutMs: ms(10_000), Since: &since})
		time.Sleep(150 * time.Millisecond)
		sent := child.send(t, fmt.Sprint("from afar ", i))
		a := <-got
		if a.err != nil || a.res.TimedOut || a.res.Count != 1 || a.res.Items[0].Title != fmt.Sprint("from afar ", i) {
			t.Fatalf("round %d: got %v, timedOut %v, err %v", i, kinds(a.res), a.res.TimedOut, a.err)
		}
		if lat := a.at.Sub(sent); lat > 5*time.Second {
			t.Fatalf("round %d: woken %v after the other process's send: by the timeout's last look, not data_version", i, lat)
		}
	}
}

// Control: without the change counter (and with store polling off) the
// same send is seen only by the last look at the timeout — what wakes the
// waiter above is data_version.
func TestWithoutTheCounterAnotherProcessGoesUnseen(t *testing.T) {
	s, path := openShared(t, activity.Options{})
	blind := activity.New(activity.Options{PollMin: time.Minute, PollMax: time.Minute,
		Sources: []activity.Source{activity.Messages(s.Messages)}})
	child := startSender(t, path)
	since := time.Now().UnixMilli()
	got := make(chan time.Time, 1)
	go func() {
		_, _ = blind.Wait(ctx, bob, activity.Input{TimeoutMs: ms(1_000), Since: &since})
		got <- time.Now()
	}()
	time.Sleep(100 * time.Millisecond)
	sent := child.send(t, "unseen")
	if lat := (<-got).Sub(sent); lat < 500*time.Millisecond {
		t.Fatalf("woken %v after the send with nothing to tell it; want the timeout", lat)
	}
}

// BenchmarkWakeLatency reports the time from a send returning to the
// waiter's answer: in this process (the hub) and from another process
// (data_version, polled every 50 ms). go test -bench WakeLatency -benchtime 50x
func BenchmarkWakeLatency(b *testing.B) {
	b.Run("in-process", func(b *testing.B) {
		s, _ := openShared(b, activity.Options{})
		benchWake(b, s, func() time.Time { send(b, s, "bob", "ping"); return time.Now() })
	})
	b.Run("other-process", func(b *testing.B) {
		s, path := openShared(b, activity.Options{})
		child := startSender(b, path)
		benchWake(b, s, func() time.Time { return child.send(b, "ping") })
	})
}

func benchWake(b *testing.B, s *app.Services, sendOne func() time.Time) {
	lats := make([]time.Duration, 0, b.N)
	for b.Loop() {
		since := time.Now().UnixMilli()
		got := waitThen(s, bob, activity.Input{TimeoutMs: ms(10_000), Since: &since})
		time.Sleep(20 * time.Millisecond) // the waiter is waiting
		sent := sendOne()
		a := <-got
		if a.err != nil || a.res.Count == 0 {
			b.Fatalf("got %v, err %v", kinds(a.res), a.err)
		}
		lats = append(lats, max(a.at.Sub(sent), 0))
		time.Sleep(2 * time.Millisecond) // the next since is past this message
	}
	slices.Sort(lats)
	q := func(f float64) float64 { return float64(lats[int(f*float64(len(lats)-1))].Microseconds()) / 1000 }
	b.ReportMetric(q(0.5), "p50-ms")
	b.ReportMetric(q(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
