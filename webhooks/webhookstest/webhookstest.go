// Package webhookstest helps tests send GitHub webhook deliveries: signed
// requests as GitHub makes them, and GitHub's real payloads from the npm
// package @octokit/webhooks-examples (tests/package.json; installed by
// scripts/test-deps.sh into tests/node_modules).
package webhookstest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/testproc"
)

// ExamplesFile is where tests/node_modules holds the payloads, from the
// module root.
const ExamplesFile = "tests/node_modules/@octokit/webhooks-examples/api.github.com/index.json"

// Sign returns the X-Hub-Signature-256 value GitHub sends for body.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Request returns a POST of body to url (a full URL for an http.Client, or
// a path for a handler's ServeHTTP) with the headers GitHub sends: event,
// delivery id, the signature under secret (none when secret is empty) and
// a JSON content type.
func Request(url, secret, event, deliveryID string, body []byte) *http.Request {
	r, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		panic(fmt.Sprintf("webhookstest.Request: %v", err))
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("User-Agent", "GitHub-Hookshot/webhookstest")
	r.Header.Set("X-GitHub-Event", event)
	r.Header.Set("X-GitHub-Delivery", deliveryID)
	if secret != "" {
		r.Header.Set("X-Hub-Signature-256", Sign(secret, body))
	}
	return r
}

// Example is one payload of the package: the event it is sent as
// (X-GitHub-Event), its top-level action ("" when it has none) and its
// JSON, byte for byte as the package holds it.
type Example struct {
	Event, Action string
	Body          []byte
}

// Examples returns every example of the package, in its order (329 for
// version 7.6.1). Without the package the test is skipped, or fails when
// CI=true.
func Examples(t testing.TB) []Example {
	t.Helper()
	root, err := testproc.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ExamplesFile))
	if errors.Is(err, os.ErrNotExist) {
		msg := fmt.Sprintf("GitHub's webhook payloads are not installed (%s): run scripts/test-deps.sh", ExamplesFile)
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s (required with CI=true)", msg)
		}
		fmt.Fprintf(os.Stderr, "\n#### SKIPPING %s: %s\n", t.Name(), msg)
		t.Skip(msg)
	}
	if err != nil {
		t.Fatal(err)
	}
	var events []struct {
		Name     string            `json:"name"`
		Examples []json.RawMessage `json:"examples"`
	}
	if err := json.Unmarshal(b, &events); err != nil {
		t.Fatalf("%s: %v", ExamplesFile, err)
	}
	var out []Example
	for _, e := range events {
		for _, raw := range e.Examples {
			// A map, not a struct: the key "action" exactly, as GitHub's
			// consumers read it (a struct field would match "Action" too).
			var top map[string]json.RawMessage
			if err := json.Unmarshal(raw, &top); err != nil {
				t.Fatalf("%s: an example of %s: %v", ExamplesFile, e.Name, err)
			}
			var action string
			_ = json.Unmarshal(top["action"], &action) // "" when absent or not a string
			out = append(out, Example{Event: e.Name, Action: action, Body: raw})
		}
	}
	return out
}
