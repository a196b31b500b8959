package issue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/webhooks"
	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

type secret string

func (s secret) WebhookSecret(_ context.Context, _ string) (string, error) { return string(s), nil }

// TestEveryRealPayloadThroughTheIRP delivers every example of
// @octokit/webhooks-examples, signed, to the webhook handler wired to the
// issue service as main wires it, with every repository the examples
// name mapped: none gets a 5xx, each is answered once with an outcome,
// a redelivery of each changes nothing, and the issues.opened examples
// start missions.
func TestEveryRealPayloadThroughTheIRP(t *testing.T) {
	examples := webhookstest.Examples(t)
	e := newEnv(t, openSQLite(t), nil)
	repos := map[string]bool{}
	for _, ex := range examples {
		var p struct {
			Repository *struct {
				FullName string `json:"full_name"`
			} `json:"repository"`
		}
		if json.Unmarshal(ex.Body, &p) == nil && p.Repository != nil && p.Repository.FullName != "" && !repos[strings.ToLower(p.Repository.FullName)] {
			repos[strings.ToLower(p.Repository.FullName)] = true
			e.mapRepo(t, p.Repository.FullName, "sigma", "examples")
		}
	}
	srv := httptest.NewServer(webhooks.New(webhooks.Options{Secrets: secret("s3cret"), Dispatcher: e.issues, DefaultTenant: tenant}))
	t.Cleanup(srv.Close)
	outcomes := map[string]int{}
	post := func(ex webhookstest.Example, id string) (int, string) {
		resp, err := http.DefaultClient.Do(webhookstest.Request(srv.URL+"/webhooks/github", "s3cret", ex.Event, id, ex.Body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Outcome string `json:"outcome"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Outcome
	}
	for k, ex := range examples {
		id := fmt.Sprintf("ex-%d", k)
		code, out := post(ex, id)
		if code >= 500 {
			t.Errorf("%s.%s (example %d): %d", ex.Event, ex.Action, k, code)
		}
		if ex.Event != "ping" {
			outcomes[out]++
		}
		if code2, out2 := post(ex, id); code2 >= 500 || out2 == string(issue.Accepted) {
			t.Errorf("redelivery of %s.%s (example %d): %d %s; want nothing done", ex.Event, ex.Action, k, code2, out2)
		}
	}
	t.Logf("%d examples: %v", len(examples), outcomes)
	if outcomes[issue.Accepted] == 0 || outcomes[issue.Ignored] == 0 {
		t.Errorf("outcomes %v: want some accepted and many ignored", outcomes)
	}
	e.drain(t)
	page, err := e.missions.ListMissions(ctx(), admin(tenant), missionList("examples"))
	if err != nil || len(page.Items) == 0 {
		t.Fatalf("the issues.opened examples started %d missions (%v)", len(page.Items), err)
	}
	if e.gh.posts != len(page.Items) {
		t.Errorf("%d comments for %d missions: one Investigating comment each", e.gh.posts, len(page.Items))
	}
}
