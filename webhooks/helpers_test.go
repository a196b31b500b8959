package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/webhooks"
)

const (
	secretA = "tenant-a-secret-0123456789"
	secretB = "tenant-b-secret-9876543210"
	// secretDefault is the default tenant's (/webhooks/github).
	secretDefault = "default-tenant-secret"
)

// testSecrets is a Secrets whose values a test may change between requests.
type testSecrets struct {
	mu    sync.Mutex
	m     map[string]string
	err   error
	reads []string
}

func (s *testSecrets) WebhookSecret(_ context.Context, tenant string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, tenant)
	return s.m[tenant], s.err
}

func (s *testSecrets) set(tenant, secret string) {
	s.mu.Lock()
	s.m[tenant] = secret
	s.mu.Unlock()
}

func newSecrets() *testSecrets {
	return &testSecrets{m: map[string]string{"a": secretA, "b": secretB, "default": secretDefault, "nosecret": ""}}
}

// recorder is a Dispatcher that records what reaches it and answers with
// answer (Accepted when nil).
type recorder struct {
	mu     sync.Mutex
	got    []webhooks.Delivery
	answer func(d webhooks.Delivery) (webhooks.Outcome, error)
}

func (r *recorder) Deliver(_ context.Context, d webhooks.Delivery) (webhooks.Outcome, error) {
	r.mu.Lock()
	r.got = append(r.got, d)
	answer := r.answer
	r.mu.Unlock()
	if answer == nil {
		return webhooks.Accepted, nil
	}
	return answer(d)
}

func (r *recorder) deliveries() []webhooks.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]webhooks.Delivery(nil), r.got...)
}

var testNow = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// fixture is a handler with its secrets, dispatcher and log.
type fixture struct {
	h       http.Handler
	secrets *testSecrets
	disp    *recorder
	logs    *bytes.Buffer
}

func newFixture(t *testing.T, edit func(o *webhooks.Options)) *fixture {
	t.Helper()
	f := &fixture{secrets: newSecrets(), disp: &recorder{}, logs: &bytes.Buffer{}}
	o := webhooks.Options{Secrets: f.secrets, Dispatcher: f.disp, Now: func() time.Time { return testNow },
		Logger: slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	if edit != nil {
		edit(&o)
	}
	f.h = webhooks.New(o)
	return f
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	body   map[string]any
	raw    string
}

func (f *fixture) do(t *testing.T, r *http.Request) response {
	t.Helper()
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, r)
	resp := response{status: rec.Code, header: rec.Header(), raw: rec.Body.String()}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q, want application/json", r.Method, r.URL.Path, ct)
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &resp.body); err != nil {
		t.Errorf("%s %s: the answer is not a JSON object: %v: %q", r.Method, r.URL.Path, err, rec.Body.String())
	}
	return resp
}

// logLines are the handler's JSON log lines.
func (f *fixture) logLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(f.logs.Bytes()))
	for {
		var m map[string]any
		if err := dec.Decode(&m); err == io.EOF {
			return out
		} else if err != nil {
			t.Fatalf("log: %v\n%s", err, f.logs.String())
		}
		out = append(out, m)
	}
}

// issueOpened is a small issues/opened payload.
var issueOpened = []byte(`{"action":"opened","issue":{"number":7,"title":"It breaks"},"repository":{"full_name":"acme/app"}}`)

// countingReader counts what is read from it; unbounded when r is nil
// (an endless stream of spaces inside a JSON string).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if c.r == nil {
		for i := range p {
			p[i] = ' '
		}
		c.n += int64(len(p))
		return len(p), nil
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
