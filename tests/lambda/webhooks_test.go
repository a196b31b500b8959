package lambda_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/vp"
	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

// TestWebhooksFunctionAgainstFakeSecretsManager: the webhooks function
// under the emulator, on DynamoDB Local, its tenants' GitHub credentials in
// (a fake of) Secrets Manager as the CDK stack lays them out
// (<VP_GITHUB_SECRET_PREFIX><tenant>), answers GitHub deliveries as API
// Gateway passes them on (header names in lower case, the body base64): a
// signed issues.opened of a mapped repository is accepted and starts the
// issue's mission; its redelivery is a duplicate; an unsigned delivery, one
// signed with SHA-1 only and one for a tenant without a secret are refused.
// The tenant's secret is read on its first delivery, once.
func TestWebhooksFunctionAgainstFakeSecretsManager(t *testing.T) {
	began := time.Now()
	endpoint, tableName := table(t)
	const (
		prefix = "vantagepeers/VantagePeers-lambdatest/github/"
		secret = "lambda-test-webhook-secret"
		repo   = "acme/api"
		number = 42
	)
	sm := newFakeSecretsManager(t, "us-east-1", "123456789012")
	sm.put(prefix+vp.DefaultTenant, `{"webhookSecret":"`+secret+`","token":"ghs_lambdatest"}`)
	// The first comment of the protocol is an outbox job the scheduler's
	// outbox job posts: the webhooks function must not call GitHub.
	var githubCalls atomic.Int32
	gh := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		githubCalls.Add(1)
		http.Error(w, `{"message":"not here"}`, http.StatusTeapot)
	}))
	t.Cleanup(gh.Close)

	// The repository's mapping, written from here through the issue service.
	ctx := context.Background()
	st, err := dynamo.New(ctx, dynamo.Options{Client: dynamotest.NewClient(ctx, endpoint), Table: tableName})
	if err != nil {
		t.Fatal(err)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	admin := vp.Principal{Tenant: vp.DefaultTenant, Orchestrators: []string{"*"}, Admin: true}
	services := apptest.New(t, apptest.Options{Ports: app.Ports{Store: st, Cursors: signer}, NoIndex: true})
	issues := services.Issues
	if _, err := issues.AddMapping(ctx, admin, issue.MappingInput{Repo: repo, Orchestrator: "sigma", Project: "api"}); err != nil {
		t.Fatal(err)
	}

	env := baseEnv(endpoint, tableName)
	env[awsenv.EnvGitHubSecretPrefix] = prefix
	env[awsenv.EnvSecretsManagerEndpoint] = sm.URL
	env[awsenv.EnvGitHubAPIURL] = gh.URL
	fn := startRIE(t, "webhooks", env)

	body, err := json.Marshal(map[string]any{
		"action": "opened",
		"issue": map[string]any{
			"number": number, "title": "Search is slow on large projects", "body": "p95 above 2 s since 0.4.", "state": "open",
			"html_url": "https://github.com/acme/api/issues/42", "user": map[string]any{"login": "octocat", "type": "User"},
			"author_association": "OWNER", "created_at": "2026-11-30T12:00:00Z", "labels": []any{map[string]any{"name": "bug"}},
		},
		"repository": map[string]any{"full_name": repo},
		"sender":     map[string]any{"login": "octocat", "type": "User"},
	})
	if err != nil {
		t.Fatal(err)
	}
	sig := webhookstest.Sign(secret, body)
	post := func(path, route string, hdr map[string]string) (int, map[string]any) {
		t.Helper()
		ev := httpEvent("POST", path, route, hdr, body)
		ev["body"], ev["isBase64Encoded"] = base64.StdEncoding.EncodeToString(body), true
		var r httpResponse
		if err := json.Unmarshal(fn.invoke(t, ev), &r); err != nil {
			t.Fatal(err)
		}
		var b map[string]any
		if err := json.Unmarshal([]byte(r.Body), &b); err != nil {
			t.Errorf("%s: the answer is not JSON: %d %q", path, r.StatusCode, r.Body)
		}
		return r.StatusCode, b
	}
	delivery := func(id string, hdr map[string]string) map[string]string {
		h := map[string]string{"x-github-event": "issues", "x-github-delivery": id, "x-github-hook-id": "292430182",
			"x-github-hook-installation-target-type": "repository", "user-agent": "GitHub-Hookshot/044aadd"}
		for k, v := range hdr {
			h[k] = v
		}
		return h
	}
	signed := delivery("9f0c7a20-0000-4000-8000-000000000001", map[string]string{"x-hub-signature-256": sig})

	status, b := post("/webhooks/github", "POST /webhooks/github", signed)
	cold := fn.firstResponse
	if status != http.StatusAccepted || b["outcome"] != "accepted" {
		t.Fatalf("signed issues.opened: %d %v, want 202 accepted", status, b)
	}
	rest := time.Now()
	if status, b = post("/webhooks/github", "POST /webhooks/github", signed); status != http.StatusOK || b["outcome"] != "duplicate" {
		t.Errorf("the same delivery again: %d %v, want 200 duplicate", status, b)
	}
	for _, c := range []struct {
		name, path, route string
		hdr               map[string]string
		status            int
		says              string
	}{
		{"unsigned", "/webhooks/github", "POST /webhooks/github", delivery("d-2", nil), 401, "X-Hub-Signature-256 is missing"},
		{"signed with another secret", "/webhooks/github", "POST /webhooks/github",
			delivery("d-3", map[string]string{"x-hub-signature-256": webhookstest.Sign("not-the-secret", body)}), 401, ""},
		{"only SHA-1", "/webhooks/github", "POST /webhooks/github", delivery("d-4", map[string]string{"x-hub-signature": "sha1=00"}), 401, "SHA-1"},
		{"a tenant without a secret", "/webhooks/github/acme", "POST /webhooks/github/{tenant}", signed, 401, "no webhook secret is set"},
	} {
		status, b := post(c.path, c.route, c.hdr)
		msg, _ := b["error"].(string)
		if status != c.status || !strings.Contains(msg, c.says) {
			t.Errorf("%s: %d %v, want %d saying %q", c.name, status, b, c.status, c.says)
		}
	}
	// Another function's route is not served here.
	var r httpResponse
	if err := json.Unmarshal(fn.invoke(t, httpEvent("POST", "/mcp", "ANY /mcp", signed, body)), &r); err != nil || r.StatusCode != 404 {
		t.Errorf("ANY /mcp: %d %s, want 404", r.StatusCode, r.Body)
	}
	warm := time.Since(rest)

	// What the accepted delivery committed, read back from DynamoDB Local.
	got, err := issues.GetIssue(ctx, admin, issue.IssueRef{Repo: repo, IssueNumber: number})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != issue.StatusInProgress || got.MissionID == "" || got.Orchestrator != "sigma" {
		t.Errorf("the issue: status %q, mission %q, orchestrator %q; want in_progress with a mission, sigma's", got.Status, got.MissionID, got.Orchestrator)
	}
	m, err := services.Missions.GetMission(ctx, admin, mission.MissionRef{MissionID: got.MissionID})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Tasks) != 14 || m.TemplateID != issue.Template || m.Project != "api" {
		t.Errorf("the mission: %d tasks, template %q, project %q; want 14 of %s in api", len(m.Tasks), m.TemplateID, m.Project, issue.Template)
	}
	if len(m.Tasks) > 0 && !strings.HasPrefix(m.Tasks[0].Title, "[#42]") {
		t.Errorf("the first task: %q", m.Tasks[0].Title)
	}

	// Each tenant's secret was read once, on its first delivery (none at
	// start), then kept; GitHub was not called.
	if reads := sm.read(); !slices.Equal(reads, []string{prefix + vp.DefaultTenant, prefix + "acme"}) {
		t.Errorf("Secrets Manager reads %v, want the default tenant's once, then acme's", reads)
	}
	if n := githubCalls.Load(); n != 0 {
		t.Errorf("the webhooks function called GitHub %d times", n)
	}
	logs := fn.waitLog(`"tenant":"acme"`)
	if !strings.Contains(logs, `"msg":"webhook delivery"`) || !strings.Contains(logs, `"msg":"github issue opened"`) {
		t.Errorf("the function's log:\n%s", logs)
	}
	for _, leak := range []string{secret, strings.TrimPrefix(sig, "sha256="), "ghs_lambdatest"} {
		if strings.Contains(logs, leak) {
			t.Errorf("the log holds %q:\n%s", leak, logs)
		}
	}
	t.Logf("emulator start to the first answer %v (init %s ms, the accepted delivery handled in %s); the 6 other invocations %v; the whole test %v",
		cold.Round(time.Millisecond), fn.report("INIT REPORT"), nsText(fn.logField("webhook delivery", "duration")), warm.Round(time.Millisecond),
		time.Since(began).Round(time.Millisecond))
}

// nsText renders a duration logged in nanoseconds.
func nsText(ns string) string {
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return ns
	}
	return time.Duration(n).Round(100 * time.Microsecond).String()
}
