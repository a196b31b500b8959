package main

// checkout_task contention: -checkout runs only this benchmark.
//
//	go run ./tests/bench -checkout                       # 32 agents, 1,000 tasks, sqlite and dynamodb
//	go run ./tests/bench -checkout -checkout-backends=sqlite -checkout-agents=8 -checkout-tasks=200
//
// A lead creates the tasks through task.Service; then every agent (a
// goroutine with its own principal, acting as agent-NN) loops: list a page
// of todo tasks, pick one at random, checkout_task it, until no todo task is
// left. The pick is random within the same first page, so agents collide
// often: each claimed:false is a lost race. Afterwards the run is verified:
// every task was won by exactly one agent, and the stored task is
// in_progress and assigned to that winner. Any violation makes the
// benchmark exit non-zero.

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// checkoutConfig is the -checkout benchmark's settings.
type checkoutConfig struct {
	on       bool
	agents   int
	tasks    int
	page     int
	backends []string
}

var checkoutBackends = []string{"sqlite", "dynamodb"}

// checkoutFlags registers the -checkout flags; parse must be called after
// the flag set parsed.
func checkoutFlags(fs *flag.FlagSet, c *checkoutConfig) (parse func() error) {
	fs.BoolVar(&c.on, "checkout", false, "run only the checkout_task contention benchmark (agents racing to claim tasks)")
	fs.IntVar(&c.agents, "checkout-agents", 32, "with -checkout: concurrent agents")
	fs.IntVar(&c.tasks, "checkout-tasks", 1000, "with -checkout: tasks to claim")
	fs.IntVar(&c.page, "checkout-page", 50, "with -checkout: todo tasks each agent lists before picking one at random")
	backends := fs.String("checkout-backends", strings.Join(checkoutBackends, ","), "with -checkout: comma-separated store backends (sqlite, dynamodb)")
	return func() error {
		c.backends = nil
		for _, b := range strings.Split(*backends, ",") {
			if b = strings.TrimSpace(b); b == "" {
				continue
			}
			if !slices.Contains(checkoutBackends, b) {
				return fmt.Errorf("-checkout-backends: unknown %q (want %s)", b, strings.Join(checkoutBackends, ", "))
			}
			c.backends = append(c.backends, b)
		}
		if c.on && (len(c.backends) == 0 || c.agents <= 0 || c.tasks <= 0 || c.page <= 0 || c.page > 200) {
			return errors.New("-checkout needs backends, positive -checkout-agents and -checkout-tasks, and -checkout-page in 1..200")
		}
		return nil
	}
}

// claimRow is one backend's result.
type claimRow struct {
	Backend  string
	Agents   int
	Tasks    int
	Claimed  int
	Elapsed  time.Duration
	Lost     int
	Listings int
	Errors   int
	P50      time.Duration
	P95      time.Duration
	P99      time.Duration
}

// claimLog is what the agents recorded: each successful claim (task →
// agent, appended under a lock) and each checkout latency.
type claimLog struct {
	mu      sync.Mutex
	wins    map[string][]string // task id -> agents that got claimed:true
	samples []time.Duration
	lost    atomic.Int64
	lists   atomic.Int64
	errs    atomic.Int64
	first   atomic.Value // first error
}

func (l *claimLog) record(task, agent string, claimed bool, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.samples = append(l.samples, d)
	if claimed {
		l.wins[task] = append(l.wins[task], agent)
	} else {
		l.lost.Add(1)
	}
}

func (l *claimLog) fail(err error) {
	l.errs.Add(1)
	l.first.CompareAndSwap(nil, err)
}

// verifyClaims checks that every created task was won by exactly one
// agent, that no unknown task was won, and that the stored assignee
// (assignees[id], "" when the task was not read back) is that winner.
func verifyClaims(tasks []string, wins map[string][]string, assignees map[string]string) error {
	var problems []string
	total := 0
	known := make(map[string]bool, len(tasks))
	for _, id := range tasks {
		known[id] = true
		w := wins[id]
		total += len(w)
		switch {
		case len(w) == 0:
			problems = append(problems, fmt.Sprintf("task %s was never claimed", id))
		case len(w) > 1:
			problems = append(problems, fmt.Sprintf("task %s was claimed %d times (%s)", id, len(w), strings.Join(w, ", ")))
		case assignees[id] != w[0]:
			problems = append(problems, fmt.Sprintf("task %s was won by %s but is assigned to %q", id, w[0], assignees[id]))
		}
	}
	for id, w := range wins {
		if !known[id] {
			total += len(w)
			problems = append(problems, fmt.Sprintf("unknown task %s was claimed by %s", id, strings.Join(w, ", ")))
		}
	}
	if total != len(tasks) {
		problems = append(problems, fmt.Sprintf("%d claims for %d tasks", total, len(tasks)))
	}
	if len(problems) == 0 {
		return nil
	}
	if len(problems) > 10 {
		problems = append(problems[:10], fmt.Sprintf("... and %d more", len(problems)-10))
	}
	return errors.New("claims not exactly once: " + strings.Join(problems, "; "))
}

// agentName is the orchestrator id of agent i (0-based): agent-01, ...
func agentName(i int) string { return fmt.Sprintf("agent-%02d", i+1) }

func runCheckout(ctx context.Context, cfg config, stdout, stderr io.Writer) error {
	logf := func(format string, args ...any) { fmt.Fprintf(stderr, "bench: "+format+"\n", args...) }
	co := cfg.co
	var rows []claimRow
	var failed []string
	for _, b := range co.backends {
		st, closeStore, err := openCheckoutStore(ctx, b, cfg.dataRoot, logf)
		if err != nil {
			return fmt.Errorf("%s: %w", b, err)
		}
		row, err := checkoutRun(ctx, b, st, co, logf)
		closeStore()
		if err != nil && row.Backend == "" {
			return fmt.Errorf("%s: %w", b, err)
		}
		rows = append(rows, row)
		if err != nil {
			logf("%s: VERIFICATION FAILED: %v", b, err)
			failed = append(failed, b)
		} else {
			logf("%s: verified: each of %s tasks claimed exactly once, stored assignee = winner", b, thousands(row.Tasks))
		}
	}
	writeClaimTable(stdout, rows)
	if len(failed) > 0 {
		return fmt.Errorf("checkout_task contention: verification failed on %s", strings.Join(failed, ", "))
	}
	return nil
}

// openCheckoutStore opens a fresh store of the backend: SQLite in a temp
// data dir (the product's default durability), or a table on a DynamoDB
// Local started for the run.
func openCheckoutStore(ctx context.Context, backend, root string, logf func(string, ...any)) (store.Store, func(), error) {
	switch backend {
	case "sqlite":
		dir, err := os.MkdirTemp(root, "vp-bench-checkout-")
		if err != nil {
			return nil, nil, err
		}
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, dbFile)})
		if err != nil {
			os.RemoveAll(dir)
			return nil, nil, err
		}
		return st, func() { _ = st.Close(); _ = os.RemoveAll(dir) }, nil
	case "dynamodb":
		logf("starting DynamoDB Local")
		srv, err := dynamotest.Launch(ctx)
		if err != nil {
			return nil, nil, err
		}
		logf("DynamoDB Local at %s (started in %s)", srv.Endpoint, srv.StartedIn.Round(time.Millisecond))
		st, err := dynamo.New(ctx, dynamo.Options{Client: dynamotest.NewClient(ctx, srv.Endpoint), Table: "vp-bench-checkout"})
		if err == nil {
			err = st.CreateTable(ctx)
		}
		if err != nil {
			srv.Stop()
			return nil, nil, err
		}
		return st, srv.Stop, nil
	}
	return nil, nil, fmt.Errorf("unknown backend %q", backend)
}

// checkoutRun creates the tasks, races the agents and verifies the claims.
// A verification failure returns the row and the error.
func checkoutRun(ctx context.Context, backend string, st store.Store, co checkoutConfig, logf func(string, ...any)) (claimRow, error) {
	signer, err := listing.NewSigner([]byte(newSecret()))
	if err != nil {
		return claimRow{}, err
	}
	svc := task.New(task.Options{Store: st, Cursors: signer})
	const tenant = "bench"
	lead := vp.Principal{Tenant: tenant, Orchestrators: []string{"lead"}, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}

	// Create the tasks (concurrently, so that DynamoDB Local does not
	// dominate the set-up time).
	logf("%s: creating %s tasks", backend, thousands(co.tasks))
	began := time.Now()
	ids := make([]string, co.tasks)
	var next atomic.Int64
	var wg sync.WaitGroup
	var createErr atomic.Value
	for range min(16, co.tasks) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= co.tasks || createErr.Load() != nil {
					return
				}
				t, err := svc.CreateTask(ctx, lead, task.CreateTaskInput{
					Title: fmt.Sprintf("Contended task %04d", i+1), AssignedTo: "lead", Priority: "medium", Project: "bench/checkout",
				})
				if err != nil {
					createErr.CompareAndSwap(nil, err)
					return
				}
				ids[i] = t.ID
			}
		}()
	}
	wg.Wait()
	if err, _ := createErr.Load().(error); err != nil {
		return claimRow{}, fmt.Errorf("create_task: %w", err)
	}
	logf("%s: created in %s; %d agents racing", backend, time.Since(began).Round(time.Millisecond), co.agents)

	log := &claimLog{wins: map[string][]string{}, samples: make([]time.Duration, 0, co.tasks*2)}
	start := make(chan struct{})
	began = time.Now()
	for a := range co.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			agent(ctx, svc, tenant, agentName(a), co.page, uint64(a)+1, log, start)
		}()
	}
	close(start)
	wg.Wait()
	elapsed := time.Since(began)
	if err, _ := log.first.Load().(error); err != nil {
		return claimRow{}, fmt.Errorf("%d agent errors, first: %w", log.errs.Load(), err)
	}

	// Read every task back: the stored assignee must be the winner.
	assignees := make(map[string]string, len(ids))
	for _, id := range ids {
		t, err := svc.GetTask(ctx, lead, task.TaskRef{TaskID: id})
		if err != nil {
			return claimRow{}, fmt.Errorf("get_task %s: %w", id, err)
		}
		if t.Status == vp.TaskInProgress {
			assignees[id] = t.AssignedTo
		}
	}

	claimed := 0
	for _, w := range log.wins {
		claimed += len(w)
	}
	samples := slices.Clone(log.samples)
	slices.Sort(samples)
	row := claimRow{
		Backend: backend, Agents: co.agents, Tasks: co.tasks, Claimed: claimed, Elapsed: elapsed,
		Lost: int(log.lost.Load()), Listings: int(log.lists.Load()),
		P50: percentile(samples, 50), P95: percentile(samples, 95), P99: percentile(samples, 99),
	}
	return row, verifyClaims(ids, log.wins, assignees)
}

// agent lists todo tasks, picks one at random and checks it out, until no
// todo task is left.
func agent(ctx context.Context, svc *task.Service, tenant, name string, page int, seed uint64, log *claimLog, start <-chan struct{}) {
	p := vp.Principal{Tenant: tenant, Orchestrators: []string{name}, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}
	rng := rand.New(rand.NewPCG(seed, 0x636865636b6f7574))
	limit := page
	<-start
	for ctx.Err() == nil {
		pg, err := svc.ListTasks(ctx, p, task.ListTasksInput{Params: listing.Params{Limit: &limit, Fields: "lite"}, Status: vp.TaskTodo})
		if err != nil {
			log.fail(fmt.Errorf("%s list_tasks: %w", name, err))
			return
		}
		log.lists.Add(1)
		if len(pg.Items) == 0 {
			return
		}
		id, err := itemID(pg.Items[rng.IntN(len(pg.Items))])
		if err != nil {
			log.fail(fmt.Errorf("%s list_tasks item: %w", name, err))
			return
		}
		t0 := time.Now()
		res, err := svc.CheckoutTask(ctx, p, task.CheckoutInput{TaskID: id, CallerInstance: name + "-bench"})
		d := time.Since(t0)
		if err != nil {
			log.fail(fmt.Errorf("%s checkout_task %s: %w", name, id, err))
			return
		}
		if res.Claimed && (res.Task == nil || res.Task.AssignedTo != name || res.Task.ID != id) {
			log.fail(fmt.Errorf("%s checkout_task %s: claimed, but the task returned is %+v", name, id, res.Task))
			return
		}
		log.record(id, name, res.Claimed, d)
	}
}

// itemID reads the _id of a list item, whatever its Go type.
func itemID(item any) (string, error) {
	raw, err := json.Marshal(item)
	if err != nil {
		return "", err
	}
	var v struct {
		ID string `json:"_id"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return "", err
	}
	if v.ID == "" {
		return "", fmt.Errorf("no _id in %s", raw)
	}
	return v.ID, nil
}

// claimsPerSecond is the claim throughput of a row.
func (r claimRow) claimsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Claimed) / r.Elapsed.Seconds()
}

func writeClaimTable(w io.Writer, rows []claimRow) {
	fmt.Fprintf(w, "\n## checkout_task contention (task.Service, no MCP)\n\n")
	fmt.Fprintf(w, "machine: %d CPUs, %s/%s, %s", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, runtime.Version())
	if m := cpuModel(); m != "" {
		fmt.Fprintf(w, ", %s", m)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| backend | agents | tasks | claimed | claims/s | p50 | p95 | p99 | lost races |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %.0f | %s | %s | %s | %s |\n", r.Backend, r.Agents, thousands(r.Tasks), thousands(r.Claimed),
			r.claimsPerSecond(), ms(r.P50), ms(r.P95), ms(r.P99), thousands(r.Lost))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "each agent loops: list_tasks status=todo (lite, one page), pick one at random, checkout_task it; until none is left.")
	fmt.Fprintln(w, "claims/s: tasks claimed / wall time of the race (listing included); p50/p95/p99: latency of every checkout_task call,")
	fmt.Fprintln(w, "won or lost; lost races: checkout_task calls answered claimed:false (another agent got there first).")
	fmt.Fprintln(w, "verified after each run: every task won exactly once, and stored in_progress, assigned to its winner.")
}
