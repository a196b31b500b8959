package tests

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/github/githubfake"
)

// TestGitHubIssueResolutionAgainstFakeGitHub runs the Issue Resolution
// Protocol end to end over HTTP: a server of its own (tenant default, its
// webhook secret and GitHub token from the environment, GitHub at a fake),
// driven by the official MCP TypeScript SDK as orchestrator sigma
// (clients/github.mjs) — a repository mapping, a signed issues.opened
// delivered to /webhooks/github (and its redelivery, and forgeries), the
// issue, its 14-task mission and sigma's message, steps T0..T6 completed in
// order, a fix task auto-linked by its title. The Go side checks what the
// fake GitHub received: the Investigating comment and T6's, once each,
// signed and marked, and nothing more after another outbox drain.
func TestGitHubIssueResolutionAgainstFakeGitHub(t *testing.T) {
	requireNode(t)
	started := time.Now()

	const repo, project = "acme/widgets", "widgets"
	gh := githubfake.New(t)
	ghToken, secret := randomHex(t), randomHex(t)
	gh.AllowToken(ghToken)
	n := gh.AddIssue(repo, "Widgets render blank after upgrade", "Steps: upgrade to 2.0, open /widgets.", time.Time{})
	issueURL := gh.Issues(repo)[0].URL

	env := map[string]string{
		"VP_MASTER_TOKEN":          masterToken,
		"VP_GITHUB_WEBHOOK_SECRET": secret,
		"VP_GITHUB_TOKEN":          ghToken,
		"VP_GITHUB_API_URL":        gh.URL(),
	}
	gs, err := startServer(filepath.Join(t.TempDir(), "data"), env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := gs.stop(15 * time.Second); err != nil {
			t.Errorf("GitHub test server shutdown: %v", err)
		}
		if bad := gs.errorLines(); len(bad) > 0 {
			t.Errorf("the GitHub test server logged %d ERROR line(s):\n%s", len(bad), strings.Join(bad, "\n"))
		}
	})
	sigma := createTokenOn(t, gs, "default", "sigma")

	s := runClientOn(t, gs, "github.mjs", "github", map[string]any{
		"url": gs.url, "webhookUrl": "http://" + gs.addr + "/webhooks/github",
		"token": sigma, "secret": secret, "repo": repo, "issueNumber": n, "project": project, "issueUrl": issueURL,
	})
	clientDone := time.Now()

	// ---- the client's facts ----
	if s.Passed < 60 {
		t.Errorf("only %d checks passed; the scenario makes more than 60", s.Passed)
	}
	issueID, _ := s.Facts["issueId"].(string)
	if !strings.HasPrefix(issueID, "iss") {
		t.Fatalf("issueId = %v", s.Facts["issueId"])
	}
	if got := fmt.Sprint(s.Facts["webhookStatuses"]); got != "[202 200 401 401 401]" {
		t.Errorf("webhook statuses (opened, redelivery, wrong signature, unsigned, tampered) = %s, want [202 200 401 401 401]", got)
	}
	titles := factStrings(t, s.Facts["taskTitles"])
	if len(titles) != 14 || !strings.HasPrefix(titles[0], fmt.Sprintf("[#%d] T0 — Acknowledge", n)) ||
		!strings.HasPrefix(titles[13], fmt.Sprintf("[#%d] T13 — Close Issue", n)) {
		t.Errorf("task titles = %q", titles)
	}
	if got := s.Facts["pilot"]; got != "sigma" {
		t.Errorf("pilot = %v, want sigma", got)
	}
	if got := s.Facts["issueStatus"]; got != "fixed" {
		t.Errorf("issue status after the fix task = %v, want fixed", got)
	}
	if got := factStrings(t, s.Facts["commitShas"]); !slices.Equal(got, []string{"3f2a9c1"}) {
		t.Errorf("commitShas = %v, want [3f2a9c1]", got)
	}
	fixID, _ := s.Facts["fixTaskId"].(string)
	if linked := factStrings(t, s.Facts["linkedTaskIds"]); fixID == "" || !slices.Contains(linked, fixID) {
		t.Errorf("linkedTaskIds = %v, want the fix task %q among them", linked, fixID)
	}

	// ---- what GitHub received ----
	// Investigating (the webhook) and Bug reproduced (T6): posted by the
	// server's outbox after the commits that queued them.
	deadline := time.Now().Add(10 * time.Second)
	for len(gh.Comments(repo, n)) < 2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	commentsAt := time.Now()
	want := []struct{ step, text string }{
		{"open", "Investigating - assigned to Sigma"},
		{"T6", "Bug reproduced in test suite. Root cause identified."},
	}
	checkComments := func(when string) {
		t.Helper()
		cs := gh.Comments(repo, n)
		if len(cs) != len(want) {
			bodies := make([]string, len(cs))
			for i, c := range cs {
				bodies[i] = c.Body
			}
			t.Fatalf("%s: the fake GitHub has %d comments on %s#%d, want %d: %q\nserver log:\n%s", when, len(cs), repo, n, len(want), bodies, gs.logTail())
		}
		for i, w := range want {
			b := cs[i].Body
			marker := fmt.Sprintf("<!-- vantagepeers:irp:%s:%s -->", w.step, issueID)
			if !strings.HasPrefix(b, w.text) || !strings.Contains(b, "Orchestrator: Sigma — VantageOS Team Infra | ") ||
				!strings.HasSuffix(b, marker) || cs[i].User != githubfake.Login {
				t.Errorf("%s: comment %d by %s = %q; want %q, the signature and the marker %s", when, i, cs[i].User, b, w.text, marker)
			}
		}
	}
	checkComments("after the scenario")
	posts := func() int {
		k := 0
		for _, r := range gh.Requests() {
			if r.Method == "POST" && strings.HasSuffix(r.Path, fmt.Sprintf("/issues/%d/comments", n)) {
				k++
			}
		}
		return k
	}
	if p := posts(); p != 2 {
		t.Errorf("%d comment POSTs reached the fake GitHub, want 2", p)
	}

	// One more pass of the outbox job, from another process as the
	// scheduler's would be: nothing is left to post.
	out := runBinary(t, env, "jobs", "run", "outbox", "--data-dir", gs.dataDir)
	time.Sleep(2 * time.Second) // and the server's own drains meanwhile
	checkComments("after one more outbox drain")
	if p := posts(); p != 2 {
		t.Errorf("after one more drain %d comment POSTs reached the fake GitHub, want 2\n%s", p, out)
	}
	if dead := runBinary(t, env, "outbox", "dead", "--data-dir", gs.dataDir); strings.Count(strings.TrimSpace(dead), "\n") != 0 {
		t.Errorf("dead letters after the scenario:\n%s", dead)
	}

	// ---- the MCP Inspector CLI sees the mapping ----
	insp, inspErr, err := runInspectorOn(t, gs, "--method", "tools/call", "--tool-name", "list_repo_mappings",
		"--header", "Authorization: Bearer "+sigma)
	if err != nil {
		t.Fatalf("inspector list_repo_mappings: %v\nstdout:\n%s\nstderr:\n%s", err, insp, inspErr)
	}
	var res struct {
		IsError           bool `json:"isError"`
		StructuredContent struct {
			Items []struct {
				ID           string `json:"_id"`
				Repo         string `json:"repo"`
				Orchestrator string `json:"orchestrator"`
				Project      string `json:"project"`
				Active       bool   `json:"active"`
			} `json:"items"`
		} `json:"structuredContent"`
	}
	if err := json.Unmarshal([]byte(insp), &res); err != nil {
		t.Fatalf("inspector output is not JSON: %v\n%s", err, insp)
	}
	items := res.StructuredContent.Items
	if res.IsError || len(items) != 1 || items[0].Repo != repo || items[0].Orchestrator != "sigma" || items[0].Project != project ||
		!items[0].Active || items[0].ID != s.Facts["mappingId"] {
		t.Errorf("list_repo_mappings via the inspector = %s; want the one mapping %s (%v)", insp, repo, s.Facts["mappingId"])
	}
	t.Logf("client %v, comments %v after it, whole test %v", clientDone.Sub(started).Round(time.Millisecond),
		commentsAt.Sub(clientDone).Round(time.Millisecond), time.Since(started).Round(time.Millisecond))
}

// runBinary runs the built binary with env and returns its stdout; a
// failure fails the test.
func runBinary(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Env = childEnv(env)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("vantagepeers %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}
