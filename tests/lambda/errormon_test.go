package lambda_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// burstEvents is the burst's size: 2,500 by default. On DynamoDB Local each
// chunk's commit costs ~30 ms on a quiet 2-core machine and five times that
// when make test's three streams share it: 5,000 events (100 chunks) once
// took 28 s there and met the scan's 30 s budget, which is a speed figure,
// not what this test proves (the whole path, every chunk once, in one
// invocation). -args -burst=20000 runs the goal's burst.
var burstEvents = flag.Int("burst", 2500, "events of the burst in TestSchedulerReadsABurstToTheEnd…")

// TestSchedulerReadsABurstToTheEndAgainstFakeConvexAndFakeSecretsManager:
// the goal's burst under the emulator. A deployment added through the mcp
// function on DynamoDB Local, its deploy key a secret of the tenant in (a
// fake of) Secrets Manager bound to (a fake of) the Convex deployment's
// URL, and ONE EventBridge event of the stack's error-monitor rule: the
// scheduler function reads the whole burst, served in chunks of 50, in one
// invocation (every chunk once and one follow-up that finds nothing new)
// and counts every event in its group.
func TestSchedulerReadsABurstToTheEndAgainstFakeConvexAndFakeSecretsManager(t *testing.T) {
	n := *burstEvents
	if testing.Short() {
		n = 2000
	}
	const (
		chunk   = 50
		prefix  = "vantagepeers/VantagePeers-lambdatest/deploykeys/"
		keyName = "VP_DEPLOY_KEY_BURST"
		key     = "prod:burst-otter-123|eyJ2MiI6ImxhbWJkYS1idXJzdCJ9"
	)
	cx := convexfake.New(t, convexfake.Options{Key: key, Chunk: chunk})
	cx.Append(convexfake.Burst(n, time.Now().Add(-4*time.Minute), 3*time.Minute)...)

	// The key's own prefix names another host: only its binding to the
	// fake's URL lets the scan send it there.
	sm := newFakeSecretsManager(t, "us-east-1", "123456789012")
	secret, err := json.Marshal(map[string]string{"key": key, "url": cx.URL()})
	if err != nil {
		t.Fatal(err)
	}
	sm.put(prefix+vp.DefaultTenant+"/"+keyName, string(secret))

	env := mcpEnv(t)
	env[awsenv.EnvDeployKeySecretPrefix] = prefix
	env[awsenv.EnvSecretsManagerEndpoint] = sm.URL
	env[awsenv.EnvEgressAllowHosts] = "127.0.0.1"
	mcp := startRIE(t, "mcp", env)
	call := func(name string, args map[string]any) map[string]any {
		t.Helper()
		return callTool(t, mcp, name, args)
	}
	call("add_deployment", map[string]any{"name": "burst", "deploymentUrl": cx.URL(), "deployKeyEnvVar": keyName,
		"githubRepo": "acme/app", "orchestrator": "alice"})

	schedEnv := baseEnv(env[awsenv.EnvDynamoDBEndpoint], env[awsenv.EnvTable])
	for _, k := range []string{awsenv.EnvDeployKeySecretPrefix, awsenv.EnvSecretsManagerEndpoint, awsenv.EnvEgressAllowHosts, awsenv.EnvCursorKey} {
		schedEnv[k] = env[k]
	}
	// The scan files its issues through the outbox: GitHub is not called
	// within it, and nowhere real could be.
	schedEnv[awsenv.EnvGitHubAPIURL] = "http://127.0.0.1:9"
	scheduler := startRIE(t, "scheduler", schedEnv)
	// Started before the clock: the cold start is not the scan's.
	if out := scheduler.invoke(t, map[string]any{"version": "0", "id": "warm", "detail-type": "Scheduled Event", "source": "aws.events",
		"time": time.Now().UTC().Format(time.RFC3339), "region": "us-east-1", "detail": map[string]any{"job": "no-such-job"}}); !strings.Contains(string(out), "unknown job") {
		t.Fatalf("a rule for no job: %s", out)
	}

	// The event of the stack's error-monitor rule (cron(0/5 * * * ? *), detail {"job":"error-monitor"}).
	event := map[string]any{
		"version": "0", "id": "7bf73129-1428-4cd3-a780-95db273d1602", "detail-type": "Scheduled Event",
		"source": "aws.events", "account": "123456789012", "time": time.Now().UTC().Format(time.RFC3339), "region": "us-east-1",
		"resources": []string{"arn:aws:events:us-east-1:123456789012:rule/VantagePeers-lambdatest-ErrorMonitor"},
		"detail":    map[string]any{"job": "error-monitor"},
	}
	began := time.Now()
	if out := scheduler.invoke(t, event); string(out) != "null" {
		t.Fatalf("scheduler answered %s\n%s", out, scheduler.out.String())
	}
	took := time.Since(began)
	reqs := cx.Requests()
	if want := n/chunk + 1; len(reqs) != want {
		t.Fatalf("%d requests to the fake Convex, want %d (every chunk of %d once and one follow-up)\n%s", len(reqs), want, chunk, scheduler.out.String())
	}
	var serving, between time.Duration // the fake's answers; the scan's work between them
	for i, r := range reqs {
		serving += r.Answered.Sub(r.Received)
		if i > 0 {
			between += r.Received.Sub(reqs[i-1].Answered)
		}
		if !r.Authorized {
			t.Fatalf("request %d was not authorized with the deploy key", i)
		}
	}
	if got := sm.read(); len(got) != 1 || got[0] != prefix+vp.DefaultTenant+"/"+keyName {
		t.Errorf("Secrets Manager reads %v, want the tenant's deploy key once", got)
	}

	list := call("list_errors", map[string]any{"deployment": "burst", "fields": "full"})
	items, _ := list["items"].([]any)
	var counts []string
	total := 0.0
	for _, it := range items {
		g, _ := it.(map[string]any)
		c, _ := g["count"].(float64)
		counts = append(counts, fmt.Sprintf("%v=%v", g["function"], c))
		total += c
	}
	if len(items) != len(convexfake.BurstCauses) || total != float64(n) {
		t.Fatalf("groups %s (%v events), want %d causes of %d events", strings.Join(counts, " "), total, len(convexfake.BurstCauses), n/len(convexfake.BurstCauses))
	}
	deps, _ := list["deployments"].([]any)
	if len(deps) != 1 {
		t.Fatalf("deployment status %v", list["deployments"])
	}
	st, _ := deps[0].(map[string]any)
	if st["eventsScanned"] != float64(n) || st["lagSeconds"] != nil && st["lagSeconds"] != float64(0) {
		t.Fatalf("deployment status %v, want %d events scanned and no lag", st, n)
	}
	t.Logf("one scheduler invocation under the emulator read %d events in chunks of %d: %v, %d requests (%s); "+
		"the fake answered in %v in all, the scan worked %v between its requests (%v a chunk)",
		n, chunk, took.Round(time.Millisecond), len(reqs), strings.Join(counts, " "),
		serving.Round(time.Millisecond), between.Round(time.Millisecond), (between / time.Duration(len(reqs))).Round(100*time.Microsecond))
}
