package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
)

// The crash test of an error group's [Auto] issue, against the fake Convex
// and the fake GitHub: a child process wired by openApp (GitHub at the
// fake through VP_GITHUB_API_URL and VP_GITHUB_TOKEN, the deploy key
// stored for the tenant, bound to the fake's URL) adds a Convex deployment,
// scans it and runs the filing job, and is SIGKILLed right after GitHub
// answered the issue's creation 201, before the group learnt its number
// and the job's removal. After a restart on the same data dir and a drain
// past the dead process's lease, GitHub holds one issue for the group (the
// rerun found its marker), the group has its number, and the IRP posted
// one Investigating comment.

const (
	errCrashDirEnv    = "VP_ERRORS_CRASH_DIR"
	errCrashConvexEnv = "VP_ERRORS_CRASH_CONVEX_URL"
	errCrashKeyEnv    = "VP_DEPLOY_KEY_CRASH" // the deployment's deployKeyEnvVar
	errCrashDep       = "widgets-prod"
	errCrashKey       = "prod:happy-otter-123|eyJ2MiI6ImNyYXNoLXRlc3QtZGVwbG95LWtleSJ9"
)

func TestErrorIssueCrashKill9AgainstFakeConvexAndFakeGitHub(t *testing.T) {
	if dir := os.Getenv(errCrashDirEnv); dir != "" {
		errorsCrashChild(dir, os.Getenv(errCrashConvexEnv))
		return
	}
	if testing.Short() {
		t.Skip("-short: runs a child process")
	}
	ctx := context.Background()
	gh := githubfake.New(t)
	token := strings.Repeat("5c", 20)
	gh.AllowToken(token)
	gh.AddRepo(ghCrashRepo)
	cx := convexfake.New(t, convexfake.Options{Key: errCrashKey, Hold: 500 * time.Millisecond})
	at := time.Now().Add(-5 * time.Minute)
	cx.Append(convexfake.Entry{Identifier: "widgets:list", UdfType: "Query", ExecutionID: "ok-1", Time: at})
	for k := range 3 {
		cx.Append(convexfake.Entry{Identifier: "widgets:render", ExecutionID: fmt.Sprintf("exec-%d", k), RequestID: fmt.Sprintf("req-%d", 40+k),
			Time:  at.Add(time.Duration(k+1) * time.Second),
			Error: fmt.Sprintf("Uncaught TypeError: Cannot read properties of undefined (reading 'layout')\n    at render (../convex/widgets.ts:%d:11)", 20+k)})
	}
	env := map[string]string{
		"VP_MASTER_TOKEN":   strings.Repeat("ab", 32),
		"VP_GITHUB_API_URL": gh.URL(),
		"VP_GITHUB_TOKEN":   token,
		// The fake Convex listens on http://127.0.0.1.
		"VP_EGRESS_ALLOW_HOSTS": "127.0.0.1",
	}
	dir := t.TempDir()
	if err := deployKeys(dir).Set(crashAdmin.Tenant, errCrashKeyEnv, errCrashKey, cx.URL()); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestErrorIssueCrashKill9AgainstFakeConvexAndFakeGitHub$")
	cmd.Env = append(os.Environ(), errCrashDirEnv+"="+dir, errCrashConvexEnv+"="+cx.URL())
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	began := time.Now()
	killAtLine(t, cmd, "FILED")
	t.Logf("child killed at FILED after %v", time.Since(began).Round(time.Millisecond))

	// At the kill GitHub holds the issue and answered 201.
	if is := gh.Issues(ghCrashRepo); len(is) != 1 || !strings.HasPrefix(is[0].Title, "[Auto] TypeError: Cannot read properties of undefined") {
		t.Fatalf("at the kill the fake GitHub holds %+v; want the one [Auto] issue", is)
	}
	if p := issuePosts(gh); p != 1 {
		t.Fatalf("at the kill %d issue creations were answered 201, want 1", p)
	}

	// The restarted process: the binary's wiring and environment.
	for k, v := range env {
		t.Setenv(k, v)
	}
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	g := onlyGroup(t, a)
	if g.Count != 3 || g.IssueNumber != 0 || g.Status != errormon.StatusNew {
		t.Fatalf("the group after the restart: %+v; want its 3 occurrences committed and no issue linked yet (the kill came before)", g)
	}
	// The filing job is still leased to the dead child: a drain now runs
	// nothing and asks GitHub nothing.
	reqs := len(gh.Requests())
	if k, err := a.Outbox.Drain(ctx); err != nil || k != 0 {
		t.Fatalf("a drain within the dead child's lease ran %d jobs (%v), want 0", k, err)
	}
	if len(gh.Requests()) != reqs {
		t.Fatal("a drain within the dead child's lease called GitHub")
	}

	// One pass of the outbox job after the lease: the filing job runs
	// again, then the IRP's start and its Investigating comment.
	ob := pastTheLease(t, a)
	began, lists := time.Now(), issueLists(gh)
	ran, err := ob.Drain(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("drain after the restart: %d job(s) in %v", ran, time.Since(began).Round(time.Millisecond))
	if ran < 3 || issueLists(gh) == lists {
		t.Fatalf("the drain after the restart ran %d jobs and listed the issues %d times: want the filing job rerun, looking for its marker, then the IRP's start and comment",
			ran, issueLists(gh)-lists)
	}
	is := gh.Issues(ghCrashRepo)
	if len(is) != 1 || issuePosts(gh) != 1 {
		t.Fatalf("after the rerun the fake GitHub holds %d issues from %d creations, want the dead child's one", len(is), issuePosts(gh))
	}
	n := is[0].Number
	if !strings.Contains(is[0].Body, "<!-- vantagepeers:error:"+g.ID+" -->") {
		t.Fatalf("issue %d lacks the group's marker:\n%s", n, is[0].Body)
	}
	if g := onlyGroup(t, a); g.IssueNumber != n || g.IssueRepo != ghCrashRepo || g.Status != errormon.StatusOngoing || g.Count != 3 {
		t.Fatalf("the group after the rerun: %+v; want it linked to issue %d, ongoing", g, n)
	}
	dead, err := ob.DeadLetters(ctx, outbox.DeadQuery{})
	if err != nil || len(dead) != 0 {
		t.Fatalf("dead letters after the drain: %+v (%v)", dead, err)
	}
	i, err := a.Issues.GetIssue(ctx, crashAdmin, issue.IssueRef{Repo: ghCrashRepo, IssueNumber: n})
	if err != nil || i.MissionID == "" || i.Orchestrator != "sigma" || i.Status != issue.StatusInProgress {
		t.Fatalf("issue %d in VantagePeers: %+v, %v; want its IRP in progress for sigma", n, i, err)
	}
	if m, err := a.Missions.GetMission(ctx, crashAdmin, mission.MissionRef{MissionID: i.MissionID}); err != nil || len(m.Tasks) != 14 {
		t.Fatalf("mission %s: %d tasks, %v; want 14", i.MissionID, len(m.Tasks), err)
	}
	checkInvestigating := func(when string) {
		t.Helper()
		cs := gh.Comments(ghCrashRepo, n)
		if len(cs) != 1 || !strings.HasPrefix(cs[0].Body, "Investigating") || !strings.Contains(cs[0].Body, "<!-- vantagepeers:irp:open:"+i.ID+" -->") {
			bodies := make([]string, len(cs))
			for k, c := range cs {
				bodies[k] = c.Body
			}
			t.Fatalf("%s issue %d has %d comments, want exactly one Investigating comment: %q", when, n, len(cs), bodies)
		}
	}
	checkInvestigating("after the drain")

	// Exactly once: nothing is left to run, and a scan finds nothing new.
	if k, err := ob.Drain(ctx); err != nil || k != 0 {
		t.Fatalf("a second drain ran %d jobs (%v), want 0", k, err)
	}
	if k, err := a.Errors.Scan(ctx, crashAdmin.Tenant, errCrashDep); err != nil || k != 0 {
		t.Fatalf("a scan after the restart read %d events (%v), want none: the dead child's scan committed them", k, err)
	}
	if k, err := ob.Drain(ctx); err != nil || k != 0 {
		t.Fatalf("a drain after the rescan ran %d jobs (%v), want 0", k, err)
	}
	checkInvestigating("after a second drain and a rescan")
	if len(gh.Issues(ghCrashRepo)) != 1 || onlyGroup(t, a).Count != 3 {
		t.Fatal("the second drain or the rescan filed or counted again")
	}
}

// onlyGroup is the one error group the child's scan created.
func onlyGroup(t *testing.T, a *app) errormon.Group {
	t.Helper()
	list, err := a.Errors.ListErrors(context.Background(), crashAdmin, errormon.ListInput{Deployment: errCrashDep, Params: listing.Params{Fields: "full"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 {
		t.Fatalf("%d error groups, want 1: %+v", len(list.Items), list.Items)
	}
	return list.Items[0].(errormon.Group)
}

// issuePosts counts the issue creations the fake GitHub answered 201.
func issuePosts(gh *githubfake.Server) int {
	return issueRequests(gh, http.MethodPost, http.StatusCreated)
}

// issueLists counts the listings of the repository's issues
// (CreateIssueOnce looking for its marker).
func issueLists(gh *githubfake.Server) int { return issueRequests(gh, http.MethodGet, http.StatusOK) }

func issueRequests(gh *githubfake.Server, method string, status int) int {
	k := 0
	for _, r := range gh.Requests() {
		if r.Method == method && r.Status == status && strings.HasSuffix(r.Path, "/repos/"+ghCrashRepo+"/issues") {
			k++
		}
	}
	return k
}

// stopAfterIssue is the child's HTTP transport: once GitHub has answered
// an issue's creation with 201 and the answer is read whole, it prints
// FILED and blocks, so the parent kills the process between GitHub's
// acceptance and the group's update. Convex's requests go through it
// untouched.
type stopAfterIssue struct{ next http.RoundTripper }

func (s stopAfterIssue) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := s.next.RoundTrip(r)
	if err == nil && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/issues") && resp.StatusCode == http.StatusCreated {
		_, _ = io.Copy(io.Discard, resp.Body)
		fmt.Println("FILED")
		time.Sleep(time.Hour)
	}
	return resp, err
}

// errorsCrashChild opens the data dir as the binary does (GitHub and the
// deploy key from the environment), adds the Convex deployment at
// convexURL, scans it and runs the filing job (one outbox drain), which
// stops once GitHub filed the issue.
func errorsCrashChild(dir, convexURL string) {
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	// The GitHub client's and the Convex source's (their HTTP clients have
	// no transport of their own).
	http.DefaultTransport = stopAfterIssue{http.DefaultTransport}
	ctx := context.Background()
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		fail(err)
	}
	if _, err := a.Errors.AddDeployment(ctx, crashAdmin, errormon.DeploymentInput{Name: errCrashDep, DeploymentURL: convexURL,
		DeployKeyEnvVar: errCrashKeyEnv, GitHubRepo: ghCrashRepo, Orchestrator: "sigma"}); err != nil {
		fail(err)
	}
	if n, err := a.Errors.Scan(ctx, crashAdmin.Tenant, errCrashDep); err != nil || n != 3 {
		fail(fmt.Errorf("scan: %d events, %v; want 3", n, err))
	}
	k, err := a.Outbox.Drain(ctx)
	fail(fmt.Errorf("the drain returned (%d jobs, %v): the issue was not filed", k, err))
}
