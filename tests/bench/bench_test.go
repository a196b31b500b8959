package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
)

func durs(n ...int) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, v := range n {
		out[i] = time.Duration(v) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	twenty := hundred[:20]
	for _, tc := range []struct {
		name   string
		sorted []time.Duration
		p      float64
		want   time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one sample p50", durs(7), 50, 7 * time.Millisecond},
		{"one sample p99", durs(7), 99, 7 * time.Millisecond},
		{"two samples p50 is the lower", durs(1, 2), 50, 1 * time.Millisecond},
		{"two samples p51 is the upper", durs(1, 2), 51, 2 * time.Millisecond},
		{"odd count median", durs(1, 2, 3, 4, 5), 50, 3 * time.Millisecond},
		{"1..100 p50", hundred, 50, 50 * time.Millisecond},
		{"1..100 p95", hundred, 95, 95 * time.Millisecond},
		{"1..100 p99", hundred, 99, 99 * time.Millisecond},
		{"1..100 p99.9", hundred, 99.9, 100 * time.Millisecond},
		{"1..100 p100", hundred, 100, 100 * time.Millisecond},
		{"1..100 p0 is the minimum", hundred, 0, 1 * time.Millisecond},
		{"1..100 p1", hundred, 1, 1 * time.Millisecond},
		{"1..100 p1.5", hundred, 1.5, 2 * time.Millisecond},
		// rank = ceil(0.95*20) = 19 exactly; float arithmetic must not push it to 20.
		{"1..20 p95 exact rank", twenty, 95, 19 * time.Millisecond},
		{"1..20 p99", twenty, 99, 20 * time.Millisecond},
		{"ties", durs(1, 1, 1, 9), 75, 1 * time.Millisecond},
		{"outlier only in the tail", durs(1, 1, 1, 1, 1, 1, 1, 1, 1, 100), 95, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	samples := durs(5, 1, 4, 2, 3)
	s := summarize("stdio", 1000, "check_messages", series{samples: samples, errs: 1, cpuPerCall: time.Millisecond})
	if !slices.IsSorted(samples) {
		t.Error("samples not sorted in place")
	}
	want := summary{Transport: "stdio", Stored: 1000, Tool: "check_messages", N: 5, Errors: 1,
		P50: 3 * time.Millisecond, P95: 5 * time.Millisecond, P99: 5 * time.Millisecond,
		Mean: 3 * time.Millisecond, Max: 5 * time.Millisecond, CPUPerCall: time.Millisecond}
	if s != want {
		t.Errorf("summarize = %+v, want %+v", s, want)
	}
	if z := summarize("http", 0, "send_message", series{}); z.N != 0 || z.P50 != 0 || z.Mean != 0 {
		t.Errorf("empty summary = %+v", z)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 7: "7", 999: "999", 1000: "1,000", 100000: "100,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	writeTable(&b, []summary{{Transport: "stdio", Stored: 100000, Tool: "check_messages", N: 2000,
		P50: 812 * time.Microsecond, P95: time.Millisecond, P99: 2 * time.Millisecond, Mean: 900 * time.Microsecond, Max: 3 * time.Millisecond,
		CPUPerCall: 1500 * time.Microsecond}})
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("table has %d lines:\n%s", len(lines), b.String())
	}
	if want := "| stdio | 100,000 | check_messages | 2000 | 0.812 ms | 1.000 ms | 2.000 ms | 0.900 ms | 3.000 ms | 1.500 ms | 0 |"; lines[2] != want {
		t.Errorf("row\n got %s\nwant %s", lines[2], want)
	}
}

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-quick"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.sizes, []int{1000}) || c.n != 300 {
		t.Errorf("-quick: sizes %v n %d", c.sizes, c.n)
	}
	c, err = parseFlags([]string{"-quick", "-n=50"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.sizes, []int{1000}) || c.n != 50 || c.warmup != 50 {
		t.Errorf("-quick -n=50: sizes %v n %d warmup %d", c.sizes, c.n, c.warmup)
	}
	c, err = parseFlags([]string{"-sizes=1_000, 100000", "-transports=stdio,http", "-n=5"}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.sizes, []int{1000, 100000}) || !slices.Equal(c.transports, []string{"stdio", "http"}) || c.n != 5 {
		t.Errorf("parsed %+v", c)
	}
	for _, bad := range [][]string{{"-sizes=x"}, {"-transports=grpc"}, {"-n=0"}, {"extra"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
}

// TestSeed seeds a small history and checks what the benchmark relies on:
// every inbox holds exactly the configured unread count, the rest is read,
// and the history is in the past.
func TestSeed(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := seed(ctx, seedConfig{DataDir: dir, Messages: 300, Unread: 7, Seed: 1, Synchronous: "OFF"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.Messages != 300 || st.Receipts < 300 {
		t.Errorf("stats %+v", st)
	}
	svc, err := openServices(ctx, dir, sqlite.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	for _, o := range orchestrators {
		in, err := svc.messages.Check(ctx, localAdmin(), message.CheckInput{Recipient: o})
		if err != nil {
			t.Fatal(err)
		}
		if in.Count != st.Unread[o] || in.Count > 7 {
			t.Errorf("%s: %d unread, seed reported %d", o, in.Count, st.Unread[o])
		}
		for _, r := range in.Messages {
			if r.CreatedAt > time.Now().UnixMilli() {
				t.Errorf("%s: receipt %s is from the future", o, r.ID)
			}
		}
	}
	if st.Unread[recipient] != 7 {
		t.Errorf("bob has %d unread, want 7", st.Unread[recipient])
	}
	// The measured send goes after the seeded history.
	res, err := svc.messages.Send(ctx, localAdmin(), message.SendInput{From: sender, Channel: recipient, Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	in, err := svc.messages.Check(ctx, localAdmin(), message.CheckInput{Recipient: recipient})
	if err != nil {
		t.Fatal(err)
	}
	if last := in.Messages[len(in.Messages)-1]; last.ID != res.Recipients[0].ReceiptID {
		t.Errorf("new receipt %s is not last in bob's inbox (last is %s)", res.Recipients[0].ReceiptID, last.ID)
	}
}

func TestCopyDir(t *testing.T) {
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "copy")
	for name, body := range map[string]string{dbFile: "db", dbFile + "-wal": "wal"} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(src, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := copyDir(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{dbFile: "db", dbFile + "-wal": "wal"} {
		b, err := os.ReadFile(filepath.Join(dst, name))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
	if fi, err := os.Stat(dst); err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("dst mode: %v %v", fi, err)
	}
}

// TestSmoke runs the quick benchmark end to end against the real binary.
// It builds the product and takes a few seconds, so it only runs with
// VP_BENCH_SMOKE=1.
func TestSmoke(t *testing.T) {
	if os.Getenv("VP_BENCH_SMOKE") != "1" {
		t.Skip("set VP_BENCH_SMOKE=1 to run the benchmark's quick mode end to end")
	}
	cfg, err := parseFlags([]string{"-quick", "-n=50", "-warmup=5", "-dir=" + t.TempDir()}, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	var out, log bytes.Buffer
	if err := run(context.Background(), cfg, &out, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, tr := range allTransports {
		for _, tool := range []string{"send_message", "check_messages"} {
			if !strings.Contains(out.String(), "| "+tr+" | 1,000 | "+tool+" | 50 |") {
				t.Errorf("no row for %s %s:\n%s", tr, tool, out.String())
			}
		}
	}
	if left, _ := os.ReadDir(cfg.dataRoot); len(left) != 0 {
		t.Errorf("the run left %d entries in %s", len(left), cfg.dataRoot)
	}
}

func TestGoalLines(t *testing.T) {
	row := func(tr string, stored int, tool string, p50 time.Duration) summary {
		return summary{Transport: tr, Stored: stored, Tool: tool, P50: p50}
	}
	rows := []summary{
		row(trStdio, 1000, "check_messages", 1400*time.Microsecond),
		row(trStdio, 100000, "check_messages", 1500*time.Microsecond),
		row(trStdioTS, 1000, "check_messages", 800*time.Microsecond),
		row(trStdioTS, 100000, "check_messages", 720*time.Microsecond),
	}
	got := goalLines(rows)
	want := []string{
		"goal check_messages p50 < 1 ms over stdio at 100,000 stored, Go SDK client: MISSED (p50 1.500 ms)",
		"goal check_messages p50 < 1 ms over stdio at 100,000 stored, TypeScript SDK client: MET (p50 0.720 ms)",
		"flatness stdio check_messages: p50 at 100,000 / p50 at 1,000 = 1.07",
		"flatness stdio-ts check_messages: p50 at 100,000 / p50 at 1,000 = 0.90",
	}
	if !slices.Equal(got, want) {
		t.Errorf("goalLines:\n got %q\nwant %q", got, want)
	}
}
