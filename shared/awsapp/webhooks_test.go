package awsapp_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/aws/aws-lambda-go/events"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/vp"
	"github.com/vantagepeers/vantagepeers/webhooks"
	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

type webhookSecrets map[string]string

func (s webhookSecrets) WebhookSecret(_ context.Context, tenant string) (string, error) {
	return s[tenant], nil
}

type recordingDispatcher struct{ got []webhooks.Delivery }

func (r *recordingDispatcher) Deliver(_ context.Context, d webhooks.Delivery) (webhooks.Outcome, error) {
	r.got = append(r.got, d)
	return webhooks.Accepted, nil
}

// webhookEvent is a GitHub delivery as API Gateway (HTTP API, payload 2.0)
// gives it to the function: header names in lower case, the body base64.
func webhookEvent(method, path, routeKey string, headers map[string]string, body []byte) events.APIGatewayV2HTTPRequest {
	h := map[string]string{"content-type": "application/json", "user-agent": "GitHub-Hookshot/abc1234", "x-forwarded-proto": "https"}
	for k, v := range headers {
		h[strings.ToLower(k)] = v
	}
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: path, Headers: h,
		Body: base64.StdEncoding.EncodeToString(body), IsBase64Encoded: true,
		RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: "abc.execute-api.us-east-1.amazonaws.com", Stage: "$default",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, SourceIP: "140.82.115.1"}},
	}
}

func signedHeaders(secret, event, id string, body []byte) map[string]string {
	r := webhookstest.Request("/", secret, event, id, body)
	out := map[string]string{}
	for k := range r.Header {
		out[k] = r.Header.Get(k)
	}
	return out
}

// TestWebhooksHandler: the webhooks function, given API Gateway events,
// verifies and dispatches a signed delivery for the tenant of its path,
// refuses an unsigned one, and serves none of the other functions' routes.
func TestWebhooksHandler(t *testing.T) {
	var logs bytes.Buffer
	disp := &recordingDispatcher{}
	log := awsapp.NewLogger(&logs, slog.LevelInfo, awsenv.FuncWebhooks)
	a := &awsapp.App{Function: awsenv.FuncWebhooks, Log: log,
		Services: &vpapp.Services{Log: log, Webhooks: &webhooks.Options{Secrets: webhookSecrets{"acme": "acme-secret"}, Dispatcher: disp}}}
	h := a.HTTP(a.WebhooksHandler())
	ctx := context.Background()
	body := []byte(`{"action":"opened","issue":{"number":1,"title":"caf\u00e9 ☕"}}`)

	resp, err := h(ctx, webhookEvent("POST", "/webhooks/github/acme", "POST /webhooks/github/{tenant}",
		signedHeaders("acme-secret", "issues", "d-1", body), body))
	if err != nil || resp.StatusCode != 202 {
		t.Fatalf("signed delivery: %+v, %v", resp, err)
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(resp.Body), &out); err != nil || out["outcome"] != "accepted" || out["delivery"] != "d-1" {
		t.Errorf("answer %q", resp.Body)
	}
	if len(disp.got) != 1 || disp.got[0].Tenant != "acme" || disp.got[0].Event != "issues" || disp.got[0].Action != "opened" ||
		!bytes.Equal(disp.got[0].Body, body) {
		t.Errorf("dispatched %+v", disp.got)
	}
	if !strings.Contains(logs.String(), `"msg":"webhook delivery"`) || strings.Contains(logs.String(), "acme-secret") {
		t.Errorf("logs: %s", logs.String())
	}

	for _, c := range []struct {
		name   string
		ev     events.APIGatewayV2HTTPRequest
		status int
	}{
		{"unsigned", webhookEvent("POST", "/webhooks/github/acme", "POST /webhooks/github/{tenant}", signedHeaders("", "issues", "d-2", body), body), 401},
		{"signed for another tenant", webhookEvent("POST", "/webhooks/github", "POST /webhooks/github",
			signedHeaders("acme-secret", "issues", "d-3", body), body), 401},
		{"mcp", webhookEvent("POST", "/mcp", "ANY /mcp", nil, []byte(`{}`)), 404},
		{"health", webhookEvent("GET", "/health", "GET /health", nil, nil), 404},
	} {
		resp, err := h(ctx, c.ev)
		if err != nil || resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, %v; want %d", c.name, resp.StatusCode, resp.Body, err, c.status)
		}
	}
	if len(disp.got) != 1 {
		t.Errorf("%d deliveries dispatched, want 1", len(disp.got))
	}
}

// TestLoadWiresWebhooks: Load builds the webhooks function's issue
// service and reads each tenant's webhook secret from Secrets Manager
// (<prefix><tenant>) on the first delivery, not at start; without a
// prefix every delivery is refused.
func TestLoadWiresWebhooks(t *testing.T) {
	s := &countingSecrets{StaticSecrets: awsapp.StaticSecrets{
		"vp/test/github/default": `{"webhookSecret":"k","token":"ghs_x"}`,
	}}
	a, _, err := load(t, awsenv.FuncWebhooks, map[string]string{awsenv.EnvGitHubSecretPrefix: "vp/test/github/"}, s)
	if err != nil {
		t.Fatal(err)
	}
	if a.Issues == nil || a.Tasks == nil || a.Outbox == nil || a.Tokens != nil || len(s.read) != 0 {
		t.Fatalf("issues %v, tasks %v, tokens %v, secrets read at start %v", a.Issues != nil, a.Tasks != nil, a.Tokens != nil, s.read)
	}
	body := []byte(`{"action":"created"}`)
	h := a.HTTP(a.WebhooksHandler())
	resp, err := h(context.Background(), webhookEvent("POST", "/webhooks/github", "POST /webhooks/github", signedHeaders("k", "issue_comment", "d-9", body), body))
	if err != nil || resp.StatusCode != 200 || !strings.Contains(resp.Body, `"ignored"`) {
		t.Errorf("through Load: %+v %v", resp, err)
	}
	if len(s.read) != 1 || s.read[0] != "vp/test/github/default" {
		t.Errorf("secrets read %v, want the default tenant's", s.read)
	}
	resp, _ = h(context.Background(), webhookEvent("POST", "/webhooks/github/acme", "POST /webhooks/github/{tenant}", signedHeaders("k", "issues", "d-10", body), body))
	if resp.StatusCode != 401 {
		t.Errorf("a tenant without a secret: %d %s, want 401", resp.StatusCode, resp.Body)
	}

	// No prefix: the function starts and refuses.
	a, _, err = load(t, awsenv.FuncWebhooks, map[string]string{}, s)
	if err != nil {
		t.Fatal(err)
	}
	resp, _ = a.HTTP(a.WebhooksHandler())(context.Background(),
		webhookEvent("POST", "/webhooks/github", "POST /webhooks/github", signedHeaders("k", "issues", "d-11", body), body))
	if resp.StatusCode != 401 {
		t.Errorf("no prefix: %d %s, want 401", resp.StatusCode, resp.Body)
	}
}

// TestDefaultTenantOfTheStack: the CDK stack names the default tenant's
// GitHub secret with awsenv.DefaultTenant (it cannot import vp).
func TestDefaultTenantOfTheStack(t *testing.T) {
	if awsenv.DefaultTenant != vp.DefaultTenant {
		t.Errorf("awsenv.DefaultTenant = %q, vp.DefaultTenant = %q", awsenv.DefaultTenant, vp.DefaultTenant)
	}
}
