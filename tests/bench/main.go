// Command bench measures the tool-call latency of the real vantagepeers
// binary: send_message and check_messages, over Streamable HTTP on loopback
// and over stdio, on an embedded store already holding 1,000 or 100,000
// messages. It prints a markdown table of p50/p95/p99/mean per case.
//
//	go run ./tests/bench                 # full run (sizes 1000,100000; n=2000)
//	go run ./tests/bench -quick          # smoke test (size 1000; n=300)
//	go run ./tests/bench -transports=stdio -sizes=100000 -profile-dir=/tmp/prof
//
// Each size gets a fresh data directory, seeded in-process through the domain
// service (the same wiring as functions/vantagepeers/app.go) before any
// server opens it; only the seeding phase relaxes SQLite durability
// (synchronous=OFF). The measured calls then go, one at a time, through an
// official MCP client to the binary built from this checkout, which runs
// with its default settings (synchronous=NORMAL): the Go SDK's (http, stdio)
// or the TypeScript SDK's (stdio-ts, the client inside the common MCP hosts;
// it needs Node and tests/node_modules, which `make bench` installs).
//
// Besides http and stdio, two in-process transports locate the time: inmem
// (the product's MCP server in this process over the SDK's in-memory
// transport) and domain (coord.Service called directly). -profile-dir writes
// a CPU profile of each in-process phase.
package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"
)

type config struct {
	n          int
	warmup     int
	sizes      []int
	transports []string
	unread     int
	dataRoot   string
	bin        string
	profileDir string
	keep       bool
	seedSync   string
	co         checkoutConfig // -checkout (checkout.go)
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(2)
	}
	if err == nil {
		err = run(ctx, cfg, os.Stdout, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.n, "n", 2000, "measured calls per tool and case")
	fs.IntVar(&c.warmup, "warmup", 200, "unmeasured calls per tool and case, first")
	sizes := fs.String("sizes", "1000,100000", "stored messages before measuring, comma-separated")
	transports := fs.String("transports", strings.Join(allTransports, ","),
		"comma-separated: http, stdio, inmem (MCP in process), domain (no MCP); experiments: "+strings.Join(experimentalTransports, ", "))
	fs.IntVar(&c.unread, "unread", 20, "unread messages left in each seeded inbox (bob's inbox is what check_messages reads)")
	fs.StringVar(&c.dataRoot, "dir", os.TempDir(), "where to create the data directories (its disk's fsync cost is part of send_message)")
	fs.StringVar(&c.bin, "bin", "", "use this vantagepeers binary instead of building ./functions/vantagepeers")
	fs.StringVar(&c.profileDir, "profile-dir", "", "write CPU profiles of the in-process transports here")
	fs.BoolVar(&c.keep, "keep", false, "keep the data directories and server logs")
	fs.StringVar(&c.seedSync, "seed-synchronous", "OFF", "SQLite synchronous level used only while seeding")
	quick := fs.Bool("quick", false, "smoke test: defaults become -sizes=1000 -n=300 -warmup=50")
	parseCheckout := checkoutFlags(fs, &c.co)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := parseCheckout(); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *quick {
		// -quick changes the defaults; flags given explicitly still win.
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["sizes"] {
			*sizes = "1000"
		}
		if !set["n"] {
			c.n = 300
		}
		if !set["warmup"] {
			c.warmup = 50
		}
	}
	var err error
	if c.sizes, err = parseSizes(*sizes); err != nil {
		return c, err
	}
	for _, t := range strings.Split(*transports, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		known := false
		for _, a := range append(allTransports, experimentalTransports...) {
			known = known || a == t
		}
		if !known {
			return c, fmt.Errorf("-transports: unknown %q (want %s)", t, strings.Join(allTransports, ", "))
		}
		c.transports = append(c.transports, t)
	}
	if len(c.transports) == 0 {
		return c, errors.New("-transports: none given")
	}
	if c.n <= 0 || c.warmup < 0 || c.unread < 0 {
		return c, errors.New("-n must be positive, -warmup and -unread not negative")
	}
	return c, nil
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(strings.ReplaceAll(f, "_", ""))
		if f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("-sizes: %q is not a message count", f)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, errors.New("-sizes: none given")
	}
	return out, nil
}

func run(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	if cfg.co.on {
		return runCheckout(ctx, cfg, stdout, stderr)
	}
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", args...) }
	work, err := os.MkdirTemp(cfg.dataRoot, "vp-bench-")
	if err != nil {
		return err
	}
	if cfg.keep {
		logf("keeping %s", work)
	} else {
		defer os.RemoveAll(work)
	}
	bin := cfg.bin
	if bin != "" {
		if fi, err := os.Stat(bin); err != nil || !fi.Mode().IsRegular() {
			return fmt.Errorf("-bin %s: not an executable file", bin)
		}
	} else {
		logf("building ./functions/vantagepeers")
		if bin, err = buildBinary(ctx, work); err != nil {
			return err
		}
	}
	if cfg.profileDir != "" {
		if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
			return err
		}
	}
	master := newSecret()

	var rows []summary
	var seeds []string
	for _, size := range cfg.sizes {
		seedDir := filepath.Join(work, fmt.Sprintf("seed-%d", size))
		logf("seeding %s messages into %s", thousands(size), seedDir)
		st, err := seed(ctx, seedConfig{DataDir: seedDir, Messages: size, Unread: cfg.unread, Seed: uint64(size) + 1, Synchronous: cfg.seedSync},
			func(s string) { logf("  %s", s) })
		if err != nil {
			return err
		}
		line := fmt.Sprintf("seeded %s messages (%s receipts, %d unread in bob's inbox) in %s: sends %s, mark-read %s, keyword index %s (%.0f messages/s, synchronous=%s)",
			thousands(st.Messages), thousands(st.Receipts), st.Unread[recipient], st.Total.Round(time.Millisecond),
			st.Sends.Round(time.Millisecond), st.MarkReads.Round(time.Millisecond), st.Index.Round(time.Millisecond), float64(st.Messages)/st.Total.Seconds(), cfg.seedSync)
		if fi, err := os.Stat(filepath.Join(seedDir, dbFile)); err == nil {
			line += fmt.Sprintf("; database %.1f MiB", float64(fi.Size())/(1<<20))
		}
		logf("%s", line)
		seeds = append(seeds, line)

		for _, tr := range cfg.transports {
			logDir := filepath.Join(work, fmt.Sprintf("logs-%d-%s", size, tr))
			if err := os.MkdirAll(logDir, 0o700); err != nil {
				return err
			}
			// Every transport starts from a copy of the seeded store, so that
			// the messages an earlier transport sent do not count as stored.
			dataDir := filepath.Join(work, fmt.Sprintf("data-%d-%s", size, tr))
			if err := copyDir(seedDir, dataDir); err != nil {
				return err
			}
			logf("measuring %s at %s stored", tr, thousands(size))
			r, err := measureCase(ctx, cfg, tr, bin, dataDir, master, logDir, size, st.Unread[recipient])
			if err != nil {
				return fmt.Errorf("%s at %s stored: %w", tr, thousands(size), err)
			}
			rows = append(rows, r...)
			if !cfg.keep {
				_ = os.RemoveAll(dataDir)
			}
		}
		if !cfg.keep {
			_ = os.RemoveAll(seedDir)
		}
	}

	report(stdout, cfg, rows, seeds)
	return nil
}

// measureCase runs both tools against one transport on one data dir.
func measureCase(ctx context.Context, cfg config, tr, bin, dataDir, master, logDir string, stored, unread int) ([]summary, error) {
	t, err := start(ctx, tr, bin, dataDir, master, logDir)
	if err != nil {
		return nil, err
	}
	closed := false
	defer func() {
		if !closed {
			_ = t.close()
		}
	}()

	// send_message: alice -> bob.
	var sent []string
	sendOne := func(ctx context.Context) (time.Duration, error) {
		d, id, err := t.send(ctx)
		if err == nil {
			sent = append(sent, id)
		}
		return d, err
	}
	stopProf, err := profile(cfg, tr, stored, "send_message")
	if err != nil {
		return nil, err
	}
	sends, err := measure(ctx, cfg.warmup, cfg.n, sendOne, t.cpu)
	stopProf()
	if err != nil {
		return nil, fmt.Errorf("send_message: %w", err)
	}

	// Bring bob's inbox back to the seeded unread count so that
	// check_messages reads the same few dozen receipts at every size.
	for len(sent) > 0 {
		batch := sent[:min(100, len(sent))]
		sent = sent[len(batch):]
		if err := t.markRead(ctx, batch); err != nil {
			return nil, fmt.Errorf("mark_as_read: %w", err)
		}
	}

	checkOne := func(ctx context.Context) (time.Duration, error) {
		d, n, err := t.check(ctx)
		if err == nil && n != unread {
			err = fmt.Errorf("check_messages returned %d messages, want %d", n, unread)
		}
		return d, err
	}
	stopProf, err = profile(cfg, tr, stored, "check_messages")
	if err != nil {
		return nil, err
	}
	checks, err := measure(ctx, cfg.warmup, cfg.n, checkOne, t.cpu)
	stopProf()
	if err != nil {
		return nil, fmt.Errorf("check_messages: %w", err)
	}
	if mt, ok := t.(*mcpTarget); ok {
		if total, sc, text, err := mt.checkSize(ctx); err == nil {
			fmt.Fprintf(os.Stderr, "bench: %s check_messages result (%d unread): %d bytes of JSON, structuredContent %d + text copy %d\n",
				tr, unread, total, sc, text)
		}
	}
	closed = true
	if err := t.close(); err != nil {
		return nil, fmt.Errorf("closing: %w", err)
	}
	return []summary{
		summarize(tr, stored, "send_message", sends),
		summarize(tr, stored, "check_messages", checks),
	}, nil
}

// measure calls fn warmup times unmeasured, then n times recording each
// latency. Calls are sequential: this is latency, not throughput. It gives
// up after 10 errors (or any error during warm-up). cpu, when it reports,
// is read before and after the measured calls.
func measure(ctx context.Context, warmup, n int, fn func(context.Context) (time.Duration, error), cpu func() (time.Duration, bool)) (series, error) {
	for range warmup {
		if _, err := fn(ctx); err != nil {
			return series{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	s := series{samples: make([]time.Duration, 0, n)}
	cpu0, ok0 := cpu()
	var first error
	for range n {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		d, err := fn(ctx)
		if err != nil {
			s.errs++
			first = cmpErr(first, err)
			if s.errs >= 10 {
				return s, fmt.Errorf("%d errors, first: %w", s.errs, first)
			}
			continue
		}
		if d > time.Second {
			fmt.Fprintf(os.Stderr, "bench: call %d took %s (ended %s)\n", len(s.samples)+1, d.Round(time.Millisecond), time.Now().Format("15:04:05.000"))
		}
		s.samples = append(s.samples, d)
	}
	if cpu1, ok1 := cpu(); ok0 && ok1 && n > 0 {
		s.cpuPerCall = (cpu1 - cpu0) / time.Duration(n)
	}
	if first != nil {
		fmt.Fprintf(os.Stderr, "bench: %d failed calls, first: %v\n", s.errs, first)
	}
	return s, nil
}

// series is one measured run.
type series struct {
	samples    []time.Duration
	errs       int
	cpuPerCall time.Duration
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// profile starts a CPU profile of an in-process phase when -profile-dir is
// set; the returned func stops it.
func profile(cfg config, tr string, stored int, tool string) (func(), error) {
	if cfg.profileDir == "" || !inProcess(tr) {
		return func() {}, nil
	}
	f, err := os.Create(filepath.Join(cfg.profileDir, fmt.Sprintf("cpu-%s-%d-%s.pprof", tr, stored, tool)))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// buildBinary builds the product from the module this benchmark belongs to.
func buildBinary(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the benchmark inside the vantagepeers module (go run ./tests/bench)")
	}
	bin := filepath.Join(dir, "vantagepeers")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./functions/vantagepeers")
	cmd.Dir = filepath.Dir(gomod)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build ./functions/vantagepeers: %w", err)
	}
	return bin, nil
}

// copyDir copies the regular files of src (a data dir: the database and
// any WAL files) into a new directory dst, private like the product's.
func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func newSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cpuModel reads the processor name on Linux; empty elsewhere.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func report(w io.Writer, cfg config, rows []summary, seeds []string) {
	fmt.Fprintf(w, "\n## vantagepeers tool-call latency (embedded SQLite store)\n\n")
	machine := fmt.Sprintf("machine: %d CPUs, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if m := cpuModel(); m != "" {
		machine += ", " + m
	}
	fmt.Fprintln(w, machine)
	fmt.Fprintf(w, "calls: sequential, %d measured after %d warm-up per row; data under %s\n", cfg.n, cfg.warmup, cfg.dataRoot)
	for _, s := range seeds {
		fmt.Fprintln(w, s)
	}
	fmt.Fprintln(w)
	writeTable(w, rows)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "http: `vantagepeers serve` on loopback (Streamable HTTP, stateless, JSON responses, bearer auth);")
	fmt.Fprintln(w, "stdio: `vantagepeers stdio` child process, official Go SDK client; stdio-ts: the same, official TypeScript SDK")
	fmt.Fprintln(w, "client (the client of Claude Code, Claude Desktop, Cursor; node tests/clients/bench-stdio.mjs, latency timed in Node,")
	fmt.Fprintln(w, "structuredContent validated against the outputSchema); inmem: shared/mcpserver in this process, in-memory transport;")
	fmt.Fprintln(w, "domain: coord.Service called directly (no MCP). check_messages reads bob's inbox of a bounded, seeded unread count.")
	fmt.Fprintln(w, "latency is the client's CallTool round trip (domain: the service call); checking the result is not timed.")
	fmt.Fprintln(w, "cpu/call: CPU time (user+system) per measured call of the server process (http, stdio, stdio-ts) or of the whole")
	fmt.Fprintln(w, "benchmark process, MCP client included (in-process rows); unlike latency it barely moves when the machine is busy.")
	for _, line := range goalLines(rows) {
		fmt.Fprintln(w, line)
	}
}

// goalLines checks the product goal: check_messages p50 under 1 ms over
// stdio at 100k stored, and flat from 1k to 100k.
func goalLines(rows []summary) []string {
	find := func(tr string, stored int, tool string) (summary, bool) {
		for _, r := range rows {
			if r.Transport == tr && r.Stored == stored && r.Tool == tool {
				return r, true
			}
		}
		return summary{}, false
	}
	var out []string
	// One verdict per client: the server is the same, the clients' own JSON
	// work is not.
	for _, c := range []struct{ tr, client string }{{trStdio, "Go SDK client"}, {trStdioTS, "TypeScript SDK client"}} {
		if r, ok := find(c.tr, 100000, "check_messages"); ok {
			verdict := "MET"
			if r.P50 >= time.Millisecond {
				verdict = "MISSED"
			}
			out = append(out, fmt.Sprintf("goal check_messages p50 < 1 ms over stdio at 100,000 stored, %s: %s (p50 %s)", c.client, verdict, ms(r.P50)))
		}
	}
	for _, tr := range allTransports {
		for _, tool := range []string{"send_message", "check_messages"} {
			small, ok1 := find(tr, 1000, tool)
			big, ok2 := find(tr, 100000, tool)
			if ok1 && ok2 && small.P50 > 0 {
				out = append(out, fmt.Sprintf("flatness %s %s: p50 at 100,000 / p50 at 1,000 = %.2f", tr, tool, float64(big.P50)/float64(small.P50)))
			}
		}
	}
	return out
}
