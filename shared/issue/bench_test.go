package issue_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/webhooks"
	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

// benchEnv is the embedded product's wiring for the webhook path: SQLite
// store and keyword index in files, the outbox, tasks indexed as they
// are created (an opened issue writes 14).
func benchEnv(b *testing.B) (*env, func()) {
	st, err := sqlite.Open(ctx(), sqlite.Options{Path: filepath.Join(b.TempDir(), "vp.db")})
	if err != nil {
		b.Fatal(err)
	}
	e := &env{st: st, gh: &recordingGitHub{}}
	a := apptest.New(b, apptest.Options{Ports: app.Ports{Store: st, IssuesGitHub: e.gh, OutboxRemovalBatch: 20 * time.Millisecond}})
	e.outbox, e.tasks, e.missions, e.messages, e.issues = a.Outbox, a.Tasks, a.Missions, a.Messages, a.Issues
	return e, func() { a.Close(); _ = st.Close() }
}

// BenchmarkWebhookAck measures the acknowledgement of signed
// issues.opened deliveries over loopback, 16 at a time: verification,
// dedup and the one transaction that records the issue and creates its
// mission (14 tasks), message and comment job. It reports p50 and p99 in
// milliseconds (goal: p99 under 50 ms embedded), then how fast the outbox
// drains the comment jobs the deliveries queued (GitHub itself paces
// writes at one a second per tenant; this is our side's rate).
func BenchmarkWebhookAck(b *testing.B) {
	concurrency := benchConcurrency()
	e, closeEnv := benchEnv(b)
	defer closeEnv()
	e.mapRepo(b, "acme/api", "sigma", "api")
	srv := httptest.NewServer(webhooks.New(webhooks.Options{Secrets: secret("s3cret"), Dispatcher: e.issues, DefaultTenant: tenant}))
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
	var next atomic.Int64
	lat := make([]time.Duration, 0, b.N)
	var mu sync.Mutex
	b.ResetTimer()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				n := int(next.Add(1))
				if n > b.N {
					return
				}
				body := issuesPayload(b, "opened", ghIssue{Repo: "acme/api", Number: n, Title: fmt.Sprintf("Crash %d", n)}, nil)
				req := webhookstest.Request(srv.URL+"/webhooks/github", "s3cret", "issues", fmt.Sprintf("d-%d", n), body)
				start := time.Now()
				resp, err := client.Do(req)
				d := time.Since(start)
				if err != nil {
					b.Error(err)
					return
				}
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					b.Errorf("delivery %d: %d", n, resp.StatusCode)
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")

	start := time.Now()
	total := 0
	for {
		n, err := e.outbox.Drain(ctx())
		if err != nil {
			b.Fatal(err)
		}
		if n == 0 {
			break
		}
		total += n
	}
	if secs := time.Since(start).Seconds(); total > 0 {
		b.ReportMetric(float64(total)/secs, "drained-jobs/s")
	}
	if e.gh.posts != b.N {
		b.Errorf("%d comments posted for %d issues", e.gh.posts, b.N)
	}
}

func benchConcurrency() int {
	var n int
	if _, err := fmt.Sscan(envOr("VP_BENCH_CONCURRENCY", "16"), &n); err != nil || n < 1 {
		return 16
	}
	return n
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// BenchmarkCommentRelayAck measures the acknowledgement of signed
// issue_comment deliveries, one after the other, on an issue under its
// mission, each told to the pilot: verification, dedup, the bot check,
// the mission read and the one transaction of the issue, the message and
// its index job. It reports p50 and p99 in milliseconds.
func BenchmarkCommentRelayAck(b *testing.B) {
	e, closeEnv := benchEnv(b)
	defer closeEnv()
	e.mapRepo(b, "acme/api", "sigma", "api")
	g := ghIssue{Repo: "acme/api", Number: 1, Title: "Crash"}
	if out := e.deliver(b, "issues", "open", issuesPayload(b, "opened", g, nil)); out != issue.Accepted {
		b.Fatal(out)
	}
	e.drain(b)
	srv := httptest.NewServer(webhooks.New(webhooks.Options{Secrets: secret("s3cret"), Dispatcher: e.issues, DefaultTenant: tenant}))
	defer srv.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for n := 1; n <= b.N; n++ {
		body := issuesPayload(b, "created", g, map[string]any{"comment": map[string]any{"id": n, "body": fmt.Sprintf("more detail %d", n),
			"author_association": "OWNER", "user": map[string]any{"login": "octocat", "type": "User"}, "created_at": time.Now().Format(time.RFC3339),
			"html_url": fmt.Sprintf("https://github.com/acme/api/issues/1#issuecomment-%d", n)}})
		req := webhookstest.Request(srv.URL+"/webhooks/github", "s3cret", "issue_comment", fmt.Sprintf("c-%d", n), body)
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_ = resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != http.StatusAccepted {
			b.Fatalf("delivery %d: %d", n, resp.StatusCode)
		}
	}
	b.StopTimer()
	in, err := e.messages.Check(ctx(), domaintest.As(tenant, "sigma"), message.CheckInput{Limit: 500})
	if err != nil {
		b.Fatal(err)
	}
	if want := min(b.N+1, 500); in.Count != want { // +1: the mission's own notice
		b.Errorf("sigma has %d messages, want %d", in.Count, want)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(0, "ns/op")
}
