package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// A burst of failed completions, served by the fake Convex in chunks of
// 50, is read and grouped to the end by one `jobs run error-monitor`,
// embedded, well inside the scheduler's five minutes.
func TestOneJobRunReadsABurstToTheEndAgainstFakeConvex(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	const key = "prod:burst-otter-123|eyJ2MiI6ImJ1cnN0LXRlc3QifQ=="
	ctx := context.Background()
	t.Setenv("VP_EGRESS_ALLOW_HOSTS", "127.0.0.1")
	t.Setenv("VP_GITHUB_API_URL", "")
	cx := convexfake.New(t, convexfake.Options{Key: key, Chunk: 50})
	cx.Append(convexfake.Burst(n, time.Now().Add(-4*time.Minute), 3*time.Minute)...)

	dir := filepath.Join(t.TempDir(), "data")
	// The key is bound to the fake's URL, as an operator binds a key to its
	// deployment (a Convex key's own prefix names another host).
	var setOut bytes.Buffer
	if err := run(ctx, []string{"deploykey", "set", "--url", cx.URL(), "VP_DEPLOY_KEY_BURST", "--data-dir", dir}, strings.NewReader(key+"\n"), &setOut, &setOut); err != nil {
		t.Fatalf("deploykey set: %v\n%s", err, setOut.String())
	}
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := callAs(t, a, agentOf(t, a, vp.DefaultTenant), "add_deployment", map[string]any{"name": "burst", "deploymentUrl": cx.URL(),
		"deployKeyEnvVar": "VP_DEPLOY_KEY_BURST", "githubRepo": "acme/app", "orchestrator": "alice"}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	var out, errb bytes.Buffer
	began := time.Now()
	if err := run(ctx, []string{"jobs", "run", "error-monitor", "--tenant", vp.DefaultTenant, "--data-dir", dir}, nil, &out, &errb); err != nil {
		t.Fatalf("jobs run error-monitor: %v\n%s%s", err, out.String(), errb.String())
	}
	took := time.Since(began)
	reqs := cx.Requests()
	t.Logf("one jobs run error-monitor read %d events in chunks of 50: %v, %d requests", n, took.Round(time.Millisecond), len(reqs))
	if want := n/50 + 1; len(reqs) != want {
		t.Fatalf("%d requests, want %d (every chunk once and one follow-up)", len(reqs), want)
	}
	if took > time.Minute {
		t.Fatalf("the run took %v: not well inside the scheduler's five minutes", took)
	}

	a, err = openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	list, err := a.Errors.ListErrors(ctx, crashAdmin, errormon.ListInput{Deployment: "burst", Params: listing.Params{Fields: "full"}})
	if err != nil {
		t.Fatal(err)
	}
	var counts []string
	total := int64(0)
	for _, it := range list.Items {
		g := it.(errormon.Group)
		counts = append(counts, fmt.Sprintf("%s=%d", g.Function, g.Count))
		total += g.Count
	}
	if len(list.Items) != len(convexfake.BurstCauses) || total != int64(n) {
		t.Fatalf("groups %s (%d events), want %d causes of %d events", strings.Join(counts, " "), total, len(convexfake.BurstCauses), n/len(convexfake.BurstCauses))
	}
	if st := list.Deployments; len(st) != 1 || st[0].EventsScanned != int64(n) || st[0].LagSeconds != 0 {
		t.Fatalf("deployment status %+v", st)
	}
}
