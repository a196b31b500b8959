package lambda_test

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

// TestWebhooksFunction: the webhooks function under the emulator answers
// GitHub deliveries as API Gateway passes them on (header names in lower
// case, the body base64), on its two routes only.
//
// No webhook secret is wired into the function yet (awsapp.WireWebhooks is
// unset until the GitHub integration sets it), so it fails closed: every
// delivery is refused with 401. Once secrets are wired, sign with the
// configured one here and expect the ping's 200.
func TestWebhooksFunction(t *testing.T) {
	// Load makes no store call, and nothing here reaches the dispatcher:
	// no DynamoDB Local is needed.
	fn := startRIE(t, "webhooks", baseEnv("http://127.0.0.1:9", "vp-webhooks-unused"))
	body := []byte(`{"zen":"Design for failure.","hook_id":292430182}`)
	const secret = "lambda-test-webhook-secret"
	sig := webhookstest.Sign(secret, body)
	post := func(path, route string, hdr map[string]string) httpResponse {
		t.Helper()
		ev := httpEvent("POST", path, route, hdr, body)
		ev["body"], ev["isBase64Encoded"] = base64.StdEncoding.EncodeToString(body), true
		var r httpResponse
		if err := json.Unmarshal(fn.invoke(t, ev), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	delivery := map[string]string{"x-github-event": "ping", "x-github-delivery": "9f0c7a20-0000-4000-8000-000000000001",
		"x-github-hook-id": "292430182", "x-hub-signature-256": sig, "user-agent": "GitHub-Hookshot/044aadd"}
	for _, c := range []struct {
		name, path, route string
		hdr               map[string]string
		status            int
		says              string
	}{
		{"signed, no secret wired", "/webhooks/github/acme", "POST /webhooks/github/{tenant}", delivery, 401, "no webhook secret is set"},
		{"the default tenant", "/webhooks/github", "POST /webhooks/github", delivery, 401, "no webhook secret is set"},
		{"unsigned", "/webhooks/github/acme", "POST /webhooks/github/{tenant}",
			map[string]string{"x-github-event": "ping", "x-github-delivery": "d-2"}, 401, "X-Hub-Signature-256 is missing"},
		{"only SHA-1", "/webhooks/github/acme", "POST /webhooks/github/{tenant}",
			map[string]string{"x-github-event": "ping", "x-github-delivery": "d-3", "x-hub-signature": "sha1=00"}, 401, "SHA-1"},
		{"another function's route", "/mcp", "ANY /mcp", delivery, 404, ""},
	} {
		r := post(c.path, c.route, c.hdr)
		var b map[string]any
		if r.StatusCode != c.status || (c.says != "" && (json.Unmarshal([]byte(r.Body), &b) != nil || !strings.Contains(b["error"].(string), c.says))) {
			t.Errorf("%s: %d %s, want %d saying %q", c.name, r.StatusCode, r.Body, c.status, c.says)
		}
	}
	logs := fn.waitLog(`"tenant":"default"`)
	if !strings.Contains(logs, `"msg":"webhook delivery"`) || !strings.Contains(logs, `"tenant":"acme"`) ||
		!strings.Contains(logs, "every GitHub delivery is refused") {
		t.Errorf("the function's log:\n%s", logs)
	}
	if strings.Contains(logs, strings.TrimPrefix(sig, "sha256=")) {
		t.Errorf("the log holds the signature:\n%s", logs)
	}
}
