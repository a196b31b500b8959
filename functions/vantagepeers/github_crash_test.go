package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/webhooks"
	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

// The crash tests of the IRP's first GitHub comment, against the fake
// GitHub: a child process wired by openApp (GitHub at the fake through
// VP_GITHUB_API_URL and VP_GITHUB_TOKEN, the webhook secret from
// VP_GITHUB_WEBHOOK_SECRET) maps a repository and takes a signed
// issues.opened through the app's webhook handler, and is SIGKILLed at one
// of the two moments that matter. After a restart on the same data dir and
// an outbox drain past the dead process's lease, the issue has exactly one
// "Investigating" comment and nothing is dead-lettered.

const (
	ghCrashModeEnv  = "VP_GITHUB_CRASH_MODE" // "posted" or "committed"
	ghCrashDirEnv   = "VP_GITHUB_CRASH_DIR"
	ghCrashIssueEnv = "VP_GITHUB_CRASH_ISSUE"
	ghCrashRepo     = "acme/widgets"
)

func TestIRPCommentCrashKill9AgainstFakeGitHub(t *testing.T) {
	if mode := os.Getenv(ghCrashModeEnv); mode != "" {
		githubCrashChild(mode, os.Getenv(ghCrashDirEnv), os.Getenv(ghCrashIssueEnv))
		return
	}
	if testing.Short() {
		t.Skip("-short: runs child processes")
	}

	// GitHub stored the comment and answered 201; the child dies before
	// the job's removal commits. The rerun must find the marker.
	t.Run("killed after GitHub accepted the comment, before the job's removal", func(t *testing.T) {
		gh, n, a := crashAndRestart(t, "posted", "POSTED", 1)
		defer a.Close()
		// The job is still there, leased to the dead child: a drain now
		// runs nothing, and GitHub is not asked anything.
		reqs := len(gh.Requests())
		if k, err := a.Outbox.Drain(context.Background()); err != nil || k != 0 {
			t.Fatalf("a drain within the dead child's lease ran %d jobs (%v), want 0", k, err)
		}
		if len(gh.Requests()) != reqs {
			t.Fatal("a drain within the dead child's lease called GitHub")
		}
		drainPastTheLease(t, a, gh, n)
		if p := commentPosts(gh, n); p != 1 {
			t.Errorf("%d comment POSTs reached the fake GitHub, want 1 (the dead child's): the rerun posted again", p)
		}
	})

	// The webhook's transaction committed (the issue and its start job);
	// the child dies before the job runs. After the restart the start job
	// creates the mission and queues the comment, posted once.
	t.Run("killed after the webhook's commit, before the comment", func(t *testing.T) {
		gh, n, a := crashAndRestart(t, "committed", "COMMITTED", 0)
		defer a.Close()
		drainPastTheLease(t, a, gh, n)
		if p := commentPosts(gh, n); p != 1 {
			t.Errorf("%d comment POSTs reached the fake GitHub, want 1", p)
		}
	})
}

// crashAndRestart runs the child in mode against a fresh fake GitHub and
// data dir, SIGKILLs it when it prints line, checks that the fake holds
// before comments, and reopens the app on the data dir with the same
// environment.
func crashAndRestart(t *testing.T, mode, line string, before int) (*githubfake.Server, int, *app) {
	t.Helper()
	gh := githubfake.New(t)
	token, secret := strings.Repeat("7e", 20), "crash-test-webhook-secret"
	gh.AllowToken(token)
	n := gh.AddIssue(ghCrashRepo, "Widgets render blank", "Open /widgets after the upgrade.", time.Time{})
	env := map[string]string{
		"VP_MASTER_TOKEN":          strings.Repeat("ab", 32),
		"VP_GITHUB_API_URL":        gh.URL(),
		"VP_GITHUB_TOKEN":          token,
		"VP_GITHUB_WEBHOOK_SECRET": secret,
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestIRPCommentCrashKill9AgainstFakeGitHub$")
	cmd.Env = append(os.Environ(), ghCrashModeEnv+"="+mode, ghCrashDirEnv+"="+dir, ghCrashIssueEnv+"="+strconv.Itoa(n))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	began := time.Now()
	killAtLine(t, cmd, line)
	t.Logf("child killed at %s after %v", line, time.Since(began).Round(time.Millisecond))

	if cs := gh.Comments(ghCrashRepo, n); len(cs) != before {
		t.Fatalf("at the kill the fake GitHub has %d comments, want %d", len(cs), before)
	}
	if before > 0 {
		answered := false
		for _, r := range gh.Requests() {
			answered = answered || r.Method == http.MethodPost && r.Status == http.StatusCreated
		}
		if !answered {
			t.Fatal("the fake GitHub never answered the comment's POST 201 before the kill")
		}
	}

	// The restarted process: the binary's wiring and environment.
	for k, v := range env {
		t.Setenv(k, v)
	}
	a, err := openApp(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return gh, n, a
}

// drainPastTheLease checks that the webhook's commit survived, runs the
// outbox job once as the scheduler would (after the dead writer's lease),
// and checks the comments: exactly one Investigating comment with its
// marker, no dead letter, nothing left to run.
func drainPastTheLease(t *testing.T, a *app, gh *githubfake.Server, n int) {
	t.Helper()
	ctx := context.Background()
	began := time.Now()
	reads := commentReads(gh, n)
	ob := pastTheLease(t, a)
	ran, err := ob.Drain(ctx) // one pass of the outbox job (jobs.OutboxDrain)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("drain after the restart: %d job(s) in %v", ran, time.Since(began).Round(time.Millisecond))
	if ran < 1 || commentReads(gh, n) == reads {
		t.Fatalf("the drain after the restart ran %d jobs and read the issue's comments %d times: the comment job was not rerun",
			ran, commentReads(gh, n)-reads)
	}
	i, err := a.Issues.GetIssue(ctx, crashAdmin, issue.IssueRef{Repo: ghCrashRepo, IssueNumber: n})
	if err != nil {
		t.Fatalf("the committed issue is gone: %v", err)
	}
	if i.Status != issue.StatusInProgress || i.MissionID == "" || i.Orchestrator != "sigma" {
		t.Fatalf("issue after the restart = %+v; want in_progress with a mission for sigma", i)
	}
	m, err := a.Missions.GetMission(ctx, crashAdmin, mission.MissionRef{MissionID: i.MissionID})
	if err != nil || len(m.Tasks) != 14 {
		t.Fatalf("mission %s after the restart: %d tasks, %v", i.MissionID, len(m.Tasks), err)
	}

	cs := gh.Comments(ghCrashRepo, n)
	marker := "<!-- vantagepeers:irp:open:" + i.ID + " -->"
	if len(cs) != 1 || !strings.HasPrefix(cs[0].Body, "Investigating - assigned to Sigma") || !strings.HasSuffix(cs[0].Body, marker) ||
		!strings.Contains(cs[0].Body, "Orchestrator: Sigma — VantageOS Team Infra | ") {
		bodies := make([]string, len(cs))
		for k, c := range cs {
			bodies[k] = c.Body
		}
		t.Fatalf("after the restart and drain the issue has %d comments, want exactly one Investigating comment with %s: %q", len(cs), marker, bodies)
	}
	dead, err := ob.DeadLetters(ctx, outbox.DeadQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(dead) != 0 {
		t.Fatalf("dead letters after the drain: %+v", dead)
	}
	if k, err := ob.Drain(ctx); err != nil || k != 0 {
		t.Fatalf("a second drain ran %d jobs (%v), want 0", k, err)
	}
	if k := len(gh.Comments(ghCrashRepo, n)); k != 1 {
		t.Fatalf("after a second drain the issue has %d comments, want 1", k)
	}
}

// commentPosts counts the comment POSTs the fake GitHub received on issue n.
func commentPosts(gh *githubfake.Server, n int) int { return commentRequests(gh, n, http.MethodPost) }

// commentReads counts the listings of issue n's comments (CommentOnce
// looking for its marker).
func commentReads(gh *githubfake.Server, n int) int { return commentRequests(gh, n, http.MethodGet) }

func commentRequests(gh *githubfake.Server, n int, method string) int {
	k := 0
	for _, r := range gh.Requests() {
		if r.Method == method && strings.HasSuffix(r.Path, fmt.Sprintf("/issues/%d/comments", n)) {
			k++
		}
	}
	return k
}

// stopAfterComment is the child's HTTP transport in mode "posted": once
// GitHub has answered a comment's POST with 201 and the answer is read
// whole, it prints POSTED and blocks, so the parent kills the process
// between GitHub's acceptance and the job's removal.
type stopAfterComment struct{ next http.RoundTripper }

func (s stopAfterComment) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/comments") && resp.StatusCode == http.StatusCreated {
		_, _ = io.Copy(io.Discard, resp.Body)
		fmt.Println("POSTED")
		time.Sleep(time.Hour)
	}
	return resp, err
}

// githubCrashChild opens the data dir as the binary does (GitHub from the
// environment), maps the repository to sigma and delivers a signed
// issues.opened for issue number through the app's webhook handler. Mode
// "committed" stops right after the webhook's commit; mode "posted" runs
// the comment job (one outbox drain) and stops once GitHub accepted it.
func githubCrashChild(mode, dir, number string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	n, err := strconv.Atoi(number)
	if err != nil {
		fail(err)
	}
	crash := &crashAfterCommit{}
	servicesStore = func(st *sqlite.Store) store.Store { crash.Store = st; return crash }
	if mode == "posted" {
		http.DefaultTransport = stopAfterComment{http.DefaultTransport} // the GitHub client's (github.Options.HTTPClient nil)
	}
	ctx := context.Background()
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		fail(err)
	}
	if _, err := a.Issues.AddMapping(ctx, crashAdmin, issue.MappingInput{Repo: ghCrashRepo, Orchestrator: "sigma", Project: "widgets"}); err != nil {
		fail(err)
	}
	at := time.Now().UTC().Truncate(time.Second).Format(time.RFC3339)
	user := map[string]any{"login": "octo-owner", "id": 583231, "type": "User"}
	body, err := json.Marshal(map[string]any{
		"action": "opened",
		"issue": map[string]any{
			"number": n, "title": "Widgets render blank", "body": "Open /widgets after the upgrade.",
			"html_url": fmt.Sprintf("https://github.com/%s/issues/%d", ghCrashRepo, n), "user": user,
			"author_association": "OWNER", "state": "open", "created_at": at, "updated_at": at,
			"labels": []any{map[string]any{"name": "bug"}},
		},
		"repository": map[string]any{"full_name": ghCrashRepo},
		"sender":     user,
	})
	if err != nil {
		fail(err)
	}
	hook := webhooks.New(*a.Webhooks)
	req := webhookstest.Request("/webhooks/github", os.Getenv("VP_GITHUB_WEBHOOK_SECRET"), "issues",
		"72d3162e-cc78-11e3-81ab-4c9367dc0958", body)
	switch mode {
	case "committed":
		crash.topic, crash.armed = issue.TopicStart, true
		hook.ServeHTTP(httptest.NewRecorder(), req)
		fail(fmt.Errorf("the webhook returned: the crash hook did not fire"))
	case "posted":
		rec := httptest.NewRecorder()
		hook.ServeHTTP(rec, req)
		if rec.Code != http.StatusAccepted {
			fail(fmt.Errorf("webhook: HTTP %d %s, want 202", rec.Code, rec.Body))
		}
		k, err := a.Outbox.Drain(ctx)
		fail(fmt.Errorf("the drain returned (%d jobs, %v): the comment was not posted", k, err))
	}
	fail(fmt.Errorf("unknown mode %q", mode))
}
