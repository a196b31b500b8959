package webhooks_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

// TestGitHubExamples: every payload of @octokit/webhooks-examples, signed
// and sent as GitHub sends it, is verified and dispatched with its event
// and action (pings are answered without the Dispatcher); none is a 5xx.
func TestGitHubExamples(t *testing.T) {
	examples := webhookstest.Examples(t)
	if len(examples) < 300 {
		t.Fatalf("%d examples; @octokit/webhooks-examples 7.6.1 has 329", len(examples))
	}
	const secret = "examples-secret"
	f := newFixture(t, nil)
	f.secrets.set("acme", secret)
	pings := 0
	type want struct{ event, action, id string }
	var wants []want
	for i, ex := range examples {
		id := fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		resp := f.do(t, webhookstest.Request("/webhooks/github/acme", secret, ex.Event, id, ex.Body))
		switch {
		case resp.status >= 500:
			t.Errorf("example %d (%s %s): %d %s", i, ex.Event, ex.Action, resp.status, resp.raw)
		case ex.Event == "ping":
			pings++
			if resp.status != http.StatusOK || resp.body["ok"] != true {
				t.Errorf("example %d (ping): %d %s", i, resp.status, resp.raw)
			}
		default:
			wants = append(wants, want{ex.Event, ex.Action, id})
			if resp.status != http.StatusAccepted || resp.body["delivery"] != id {
				t.Errorf("example %d (%s %s): %d %s", i, ex.Event, ex.Action, resp.status, resp.raw)
			}
		}
	}
	got := f.disp.deliveries()
	if pings == 0 || len(got)+pings != len(examples) || len(got) != len(wants) {
		t.Fatalf("%d examples: %d dispatched and %d pings", len(examples), len(got), pings)
	}
	actions := 0
	for i, d := range got {
		w := wants[i]
		if d.Event != w.event || d.Action != w.action || d.ID != w.id || d.Tenant != "acme" {
			t.Errorf("dispatch %d: %s/%s id %s tenant %s, want %s/%s id %s", i, d.Event, d.Action, d.ID, d.Tenant, w.event, w.action, w.id)
		}
		if d.Action != "" {
			actions++
		}
	}
	if actions < len(got)/2 {
		t.Errorf("only %d of %d deliveries have an action: is the action read?", actions, len(got))
	}
	t.Logf("%d examples: %d dispatched (%d with an action), %d pings", len(examples), len(got), actions, pings)
}
