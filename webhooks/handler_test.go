package webhooks_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
	"github.com/vantagepeers/vantagepeers/webhooks"
	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

const deliveryID = "72d3162e-cc78-11e3-81ab-4c9367dc0958"

// TestGitHubTestVector: GitHub's documented example signs as documented
// and passes verification: its body is not a JSON object, so the handler
// goes on to refuse it with 400, never 401.
func TestGitHubTestVector(t *testing.T) {
	const secret, body = "It's a Secret to Everybody", "Hello, World!"
	const want = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	if got := webhookstest.Sign(secret, []byte(body)); got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
	f := newFixture(t, nil)
	f.secrets.set("vector", secret)
	r := webhookstest.Request("/webhooks/github/vector", secret, "issues", deliveryID, []byte(body))
	resp := f.do(t, r)
	if resp.status != http.StatusBadRequest || !strings.Contains(resp.raw, "not a JSON object") {
		t.Errorf("the test vector: %d %s, want 400 (verified, then not JSON)", resp.status, resp.raw)
	}
	r = webhookstest.Request("/webhooks/github/vector", secret+"!", "issues", deliveryID, []byte(body))
	if resp := f.do(t, r); resp.status != http.StatusUnauthorized {
		t.Errorf("the vector under another secret: %d %s, want 401", resp.status, resp.raw)
	}
}

// TestRefusals: every request that is not a well-formed, signed delivery
// to a known endpoint is refused with its status and a JSON error that
// says why; none reaches the Dispatcher.
func TestRefusals(t *testing.T) {
	signed := func(path string, body []byte) *http.Request {
		return webhookstest.Request(path, secretA, "issues", deliveryID, body)
	}
	tooLong := strings.Repeat("a", 64)
	cases := []struct {
		name   string
		req    func() *http.Request
		status int
		says   string // in the "error"
	}{
		{"no signature", func() *http.Request {
			return webhookstest.Request("/webhooks/github/a", "", "issues", deliveryID, issueOpened)
		},
			401, "X-Hub-Signature-256 is missing"},
		{"only the SHA-1 signature", func() *http.Request {
			r := webhookstest.Request("/webhooks/github/a", "", "issues", deliveryID, issueOpened)
			r.Header.Set("X-Hub-Signature", "sha1=0123456789abcdef0123456789abcdef01234567")
			return r
		}, 401, "SHA-1"},
		{"sha1= prefix in the 256 header", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Set("X-Hub-Signature-256", strings.Replace(r.Header.Get("X-Hub-Signature-256"), "sha256=", "sha1=", 1))
			return r
		}, 401, "must be sha256="},
		{"no prefix", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Set("X-Hub-Signature-256", strings.TrimPrefix(r.Header.Get("X-Hub-Signature-256"), "sha256="))
			return r
		}, 401, "must be sha256="},
		{"bad hex", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("zz", 32))
			return r
		}, 401, "64 hex digits"},
		{"short hex", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Set("X-Hub-Signature-256", r.Header.Get("X-Hub-Signature-256")[:40])
			return r
		}, 401, "64 hex digits"},
		{"empty signature", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Set("X-Hub-Signature-256", "")
			return r
		}, 401, "must be sha256="},
		{"two signatures", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Add("X-Hub-Signature-256", webhookstest.Sign(secretB, issueOpened))
			return r
		}, 401, "more than once"},
		{"wrong secret", func() *http.Request {
			return webhookstest.Request("/webhooks/github/a", secretB, "issues", deliveryID, issueOpened)
		}, 401, "does not match"},
		{"body changed after signing", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			tampered := bytes.Replace(issueOpened, []byte("opened"), []byte("closed"), 1)
			r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(tampered)), int64(len(tampered))
			return r
		}, 401, "does not match"},
		{"tenant without a secret", func() *http.Request {
			return webhookstest.Request("/webhooks/github/nosecret", "", "issues", deliveryID, issueOpened)
		}, 401, "X-Hub-Signature-256 is missing"},
		{"tenant without a secret, signed with the empty key", func() *http.Request {
			r := webhookstest.Request("/webhooks/github/nosecret", "", "issues", deliveryID, issueOpened)
			r.Header.Set("X-Hub-Signature-256", webhookstest.Sign("", issueOpened))
			return r
		}, 401, "no webhook secret"},
		{"unknown tenant", func() *http.Request {
			return webhookstest.Request("/webhooks/github/zeta", secretA, "issues", deliveryID, issueOpened)
		}, 401, "no webhook secret"},
		{"GET", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Method = http.MethodGet
			return r
		}, 405, "POST"},
		{"PUT", func() *http.Request {
			r := signed("/webhooks/github", issueOpened)
			r.Method = http.MethodPut
			return r
		}, 405, "POST"},
		{"no event", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Del("X-GitHub-Event")
			return r
		}, 400, "X-GitHub-Event is missing"},
		{"bad event", func() *http.Request {
			return webhookstest.Request("/webhooks/github/a", secretA, "Issues", deliveryID, issueOpened)
		}, 400, "X-GitHub-Event must be"},
		{"event too long", func() *http.Request {
			return webhookstest.Request("/webhooks/github/a", secretA, tooLong+"x", deliveryID, issueOpened)
		}, 400, "X-GitHub-Event must be"},
		{"no delivery id", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Del("X-GitHub-Delivery")
			return r
		}, 400, "X-GitHub-Delivery is missing"},
		{"bad delivery id", func() *http.Request {
			return webhookstest.Request("/webhooks/github/a", secretA, "issues", "72d3162e/../x", issueOpened)
		}, 400, "X-GitHub-Delivery must be"},
		{"delivery id too long", func() *http.Request {
			return webhookstest.Request("/webhooks/github/a", secretA, "issues", strings.Repeat("a", 101), issueOpened)
		}, 400, "X-GitHub-Delivery must be"},
		{"two delivery ids", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.Header.Add("X-GitHub-Delivery", "other")
			return r
		}, 400, "X-GitHub-Delivery is given more than once"},
		{"a JSON array", func() *http.Request { return signed("/webhooks/github/a", []byte(`[{"action":"opened"}]`)) }, 400, "not a JSON object"},
		{"JSON null", func() *http.Request { return signed("/webhooks/github/a", []byte(`null`)) }, 400, "not a JSON object"},
		{"truncated JSON", func() *http.Request { return signed("/webhooks/github/a", issueOpened[:20]) }, 400, "not a JSON object"},
		{"trailing garbage", func() *http.Request { return signed("/webhooks/github/a", append(issueOpened, '}')) }, 400, "not a JSON object"},
		{"form-encoded", func() *http.Request {
			return signed("/webhooks/github/a", []byte("payload=%7B%22action%22%3A%22opened%22%7D"))
		}, 400, "application/json"},
		{"empty body", func() *http.Request { return signed("/webhooks/github/a", nil) }, 400, "not a JSON object"},
		{"declared length over the limit", func() *http.Request {
			r := signed("/webhooks/github/a", issueOpened)
			r.ContentLength = 25<<20 + 1
			return r
		}, 413, "over 26214400 bytes"},
		{"upper-case tenant", func() *http.Request { return signed("/webhooks/github/A", issueOpened) }, 404, "no such webhook endpoint"},
		{"tenant too long", func() *http.Request { return signed("/webhooks/github/"+tooLong, issueOpened) }, 404, "no such webhook endpoint"},
		{"tenant with a dot", func() *http.Request { return signed("/webhooks/github/a.b", issueOpened) }, 404, "no such webhook endpoint"},
		{"deeper path", func() *http.Request { return signed("/webhooks/github/a/b", issueOpened) }, 404, "no such webhook endpoint"},
		{"trailing slash", func() *http.Request { return signed("/webhooks/github/", issueOpened) }, 404, "no such webhook endpoint"},
		{"another path", func() *http.Request { return signed("/webhooks/githubx", issueOpened) }, 404, "no such webhook endpoint"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil)
			req := c.req()
			sig := strings.TrimPrefix(req.Header.Get("X-Hub-Signature-256"), "sha256=")
			resp := f.do(t, req)
			msg, _ := resp.body["error"].(string)
			if resp.status != c.status || !strings.Contains(msg, c.says) {
				t.Errorf("%d %s, want %d with an error saying %q", resp.status, resp.raw, c.status, c.says)
			}
			if c.status == 405 && resp.header.Get("Allow") != http.MethodPost {
				t.Errorf("Allow = %q", resp.header.Get("Allow"))
			}
			if n := len(f.disp.deliveries()); n != 0 {
				t.Errorf("%d deliveries dispatched", n)
			}
			lines := f.logLines(t)
			if len(lines) != 1 || lines[0]["status"] != float64(c.status) || lines[0]["outcome"] != "refused" || lines[0]["level"] != "WARN" {
				t.Errorf("log = %v, want one WARN line with status %d and outcome refused", lines, c.status)
			}
			if s := f.logs.String(); strings.Contains(s, secretA) || len(sig) >= 16 && strings.Contains(s, sig) {
				t.Errorf("the log holds a secret or a signature: %s", s)
			}
		})
	}
}

// TestOversizeBodyIsNotReadWhole: a body with no declared length is read
// up to the limit and no further.
func TestOversizeBodyIsNotReadWhole(t *testing.T) {
	for _, maxBody := range []int64{1024, 0 /* the default, 25 MiB */} {
		f := newFixture(t, func(o *webhooks.Options) { o.MaxBody = maxBody })
		limit := maxBody
		if limit == 0 {
			limit = 25 << 20
		}
		r := webhookstest.Request("/webhooks/github/a", secretA, "issues", deliveryID, nil)
		body := &countingReader{} // endless
		r.Body, r.ContentLength = io.NopCloser(io.MultiReader(strings.NewReader(`{"x":"`), body)), -1
		resp := f.do(t, r)
		if resp.status != http.StatusRequestEntityTooLarge {
			t.Errorf("limit %d: %d %s, want 413", limit, resp.status, resp.raw)
		}
		const slack = 4096
		if body.n > limit+slack {
			t.Errorf("limit %d: the handler read %d bytes of the body", limit, body.n)
		}
		if len(f.disp.deliveries()) != 0 {
			t.Error("an oversize body was dispatched")
		}
	}
	// Exactly at the limit is fine.
	body := append([]byte(`{"action":"opened","pad":"`), bytes.Repeat([]byte{'x'}, 1000)...)
	body = append(body, `"}`...)
	f := newFixture(t, func(o *webhooks.Options) { o.MaxBody = int64(len(body)) })
	r := webhookstest.Request("/webhooks/github/a", secretA, "issues", deliveryID, body)
	r.ContentLength = -1
	if resp := f.do(t, r); resp.status != http.StatusAccepted {
		t.Errorf("a body of exactly MaxBody: %d %s", resp.status, resp.raw)
	}
}

// TestPing: answered without the Dispatcher.
func TestPing(t *testing.T) {
	f := newFixture(t, nil)
	resp := f.do(t, webhookstest.Request("/webhooks/github/a", secretA, "ping", deliveryID, []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)))
	if resp.status != 200 || resp.raw != `{"ok":true,"event":"ping"}`+"\n" {
		t.Errorf("ping: %d %q", resp.status, resp.raw)
	}
	if len(f.disp.deliveries()) != 0 {
		t.Error("ping reached the dispatcher")
	}
}

// TestDispatch: a verified delivery reaches the Dispatcher whole, and what
// the Dispatcher says becomes the answer.
func TestDispatch(t *testing.T) {
	f := newFixture(t, nil)
	r := webhookstest.Request("/webhooks/github/a", secretA, "issues", deliveryID, issueOpened)
	r.Header.Set("X-GitHub-Hook-ID", "292430182")
	resp := f.do(t, r)
	if resp.status != http.StatusAccepted || resp.raw != `{"outcome":"accepted","delivery":"`+deliveryID+`"}`+"\n" {
		t.Errorf("%d %q", resp.status, resp.raw)
	}
	got := f.disp.deliveries()
	want := webhooks.Delivery{Tenant: "a", ID: deliveryID, Event: "issues", Action: "opened", HookID: "292430182", Body: issueOpened, ReceivedAt: testNow}
	if len(got) != 1 || got[0].Tenant != want.Tenant || got[0].ID != want.ID || got[0].Event != want.Event || got[0].Action != want.Action ||
		got[0].HookID != want.HookID || !bytes.Equal(got[0].Body, want.Body) || !got[0].ReceivedAt.Equal(want.ReceivedAt) {
		t.Errorf("dispatched %+v\nwant %+v", got, want)
	}
	lines := f.logLines(t)
	if len(lines) != 1 {
		t.Fatalf("log lines: %v", lines)
	}
	l := lines[0]
	for k, v := range map[string]any{"tenant": "a", "event": "issues", "action": "opened", "delivery": deliveryID, "outcome": "accepted",
		"status": float64(202), "level": "INFO"} {
		if l[k] != v {
			t.Errorf("log %s = %v, want %v (%v)", k, l[k], v, l)
		}
	}
	if _, ok := l["duration"]; !ok {
		t.Errorf("log without duration: %v", l)
	}

	// The action is the top-level one, matched exactly; a malformed hook
	// id is dropped.
	for _, c := range []struct {
		body   string
		action string
	}{
		{`{"issue":{"action":"nested"}}`, ""},
		{`{"Action":"opened"}`, ""},
		{`{"action":7}`, ""},
		{`{"action":null}`, ""},
		{` {"a":[1,{"action":"x"}],"action":"labeled"} `, "labeled"},
		{`{"action":"a\u0062c"}`, "abc"},
	} {
		f := newFixture(t, nil)
		r := webhookstest.Request("/webhooks/github", secretDefault, "issues", deliveryID, []byte(c.body))
		r.Header.Set("X-GitHub-Hook-ID", "12a")
		if resp := f.do(t, r); resp.status != 202 {
			t.Errorf("%s: %d %s", c.body, resp.status, resp.raw)
			continue
		}
		if d := f.disp.deliveries(); len(d) != 1 || d[0].Action != c.action || d[0].HookID != "" || d[0].Tenant != "default" {
			t.Errorf("%s: dispatched %+v, want action %q, no hook id, the default tenant", c.body, d, c.action)
		}
	}
}

// TestDispatcherAnswers: each outcome and error kind of the Dispatcher has
// its status; internal details never reach the caller.
func TestDispatcherAnswers(t *testing.T) {
	secretDetail := "dynamodb: connection to 10.0.0.7 refused"
	cases := []struct {
		name       string
		outcome    webhooks.Outcome
		err        error
		panics     bool
		status     int
		body       string // the whole answer, or a part of its "error"
		retryAfter string
		level      string
	}{
		{"accepted", webhooks.Accepted, nil, false, 202, `{"outcome":"accepted","delivery":"` + deliveryID + `"}`, "", "INFO"},
		{"duplicate", webhooks.Duplicate, nil, false, 200, `{"outcome":"duplicate","delivery":"` + deliveryID + `"}`, "", "INFO"},
		{"ignored", webhooks.Ignored, nil, false, 200, `{"outcome":"ignored","delivery":"` + deliveryID + `"}`, "", "INFO"},
		{"invalid", "", vp.E("webhooks.issues", vp.KindInvalid, "issue.number", "must be positive"), false, 400, "issue.number: must be positive", "", "WARN"},
		{"unavailable", "", vp.Unavailable("store", errors.New(secretDetail)), false, 503, "temporarily unavailable", "", "ERROR"},
		{"rate limited, 30 s", "", vp.RateLimited("github", 30*time.Second, errors.New(secretDetail)), false, 503, "temporarily unavailable", "30", "ERROR"},
		{"rate limited, 1.2 s", "", vp.RateLimited("github", 1200*time.Millisecond, nil), false, 503, "temporarily unavailable", "2", "ERROR"},
		{"rate limited, unknown wait", "", vp.RateLimited("github", 0, nil), false, 503, "temporarily unavailable", "", "ERROR"},
		{"internal", "", vp.Wrap("webhooks", vp.KindInternal, errors.New(secretDetail)), false, 500, "internal error", "", "ERROR"},
		{"not found", "", vp.E("webhooks", vp.KindNotFound, "repo", secretDetail), false, 500, "internal error", "", "ERROR"},
		{"a plain error", "", errors.New(secretDetail), false, 500, "internal error", "", "ERROR"},
		{"an unknown outcome", "maybe", nil, false, 500, "internal error", "", "ERROR"},
		{"no outcome", "", nil, false, 500, "internal error", "", "ERROR"},
		{"a panic", "", nil, true, 500, "internal error", "", "ERROR"},
		{"the dedup record's condition, as is", "", &store.ConditionError{Index: 1, Key: seenKey(t, "a", deliveryID)}, false, 200,
			`{"outcome":"duplicate","delivery":"` + deliveryID + `"}`, "", "INFO"},
		{"another record's condition", "", &store.ConditionError{Index: 0, Key: store.Key{PK: "T#a#TASK#x", SK: "TASK"}}, false, 500, "internal error", "", "ERROR"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, nil)
			f.disp.answer = func(webhooks.Delivery) (webhooks.Outcome, error) {
				if c.panics {
					panic(secretDetail)
				}
				return c.outcome, c.err
			}
			resp := f.do(t, webhookstest.Request("/webhooks/github/a", secretA, "issues", deliveryID, issueOpened))
			if resp.status != c.status {
				t.Errorf("status %d %s, want %d", resp.status, resp.raw, c.status)
			}
			if strings.HasPrefix(c.body, "{") {
				if resp.raw != c.body+"\n" {
					t.Errorf("body %q, want %q", resp.raw, c.body)
				}
			} else if msg, _ := resp.body["error"].(string); !strings.Contains(msg, c.body) {
				t.Errorf("error %q, want it to say %q", msg, c.body)
			}
			if strings.Contains(resp.raw, secretDetail) {
				t.Errorf("the answer leaks the internal error: %s", resp.raw)
			}
			if got := resp.header.Get("Retry-After"); got != c.retryAfter {
				t.Errorf("Retry-After %q, want %q", got, c.retryAfter)
			}
			lines := f.logLines(t)
			if len(lines) != 1 || lines[0]["level"] != c.level || lines[0]["status"] != float64(c.status) {
				t.Errorf("log %v, want one %s line", lines, c.level)
			}
			if c.status >= 500 && lines[0]["err"] == nil {
				t.Errorf("log without the error: %v", lines)
			}
			if c.panics && !strings.Contains(fmt.Sprint(lines[0]["err"]), "panicked: "+secretDetail) {
				t.Errorf("the panic is not in the log: %v", lines)
			}
		})
	}
}

// TestNoDispatcherNoSecrets: a handler given neither refuses deliveries
// (401), and one given secrets but no dispatcher answers 503 so that they
// can be redelivered once it is wired.
func TestNoDispatcherNoSecrets(t *testing.T) {
	h := webhooks.New(webhooks.Options{})
	f := &fixture{h: h}
	if resp := f.do(t, webhookstest.Request("/webhooks/github", secretDefault, "issues", deliveryID, issueOpened)); resp.status != 401 ||
		!strings.Contains(resp.raw, "no webhook secret") {
		t.Errorf("no secrets: %d %s", resp.status, resp.raw)
	}
	f.h = webhooks.New(webhooks.Options{Secrets: newSecrets()})
	if resp := f.do(t, webhookstest.Request("/webhooks/github", secretDefault, "issues", deliveryID, issueOpened)); resp.status != 503 {
		t.Errorf("no dispatcher: %d %s", resp.status, resp.raw)
	}
}

// TestSecretsErrors: a failing secret store is a 503 when it may recover,
// a 500 otherwise, and the delivery is not dispatched.
func TestSecretsErrors(t *testing.T) {
	for _, c := range []struct {
		err    error
		status int
	}{
		{vp.Unavailable("secrets", errors.New("throttled")), 503},
		{errors.New("access denied"), 500},
	} {
		f := newFixture(t, nil)
		f.secrets.err = c.err
		resp := f.do(t, webhookstest.Request("/webhooks/github/a", secretA, "issues", deliveryID, issueOpened))
		if resp.status != c.status || strings.Contains(resp.raw, c.err.Error()) || len(f.disp.deliveries()) != 0 {
			t.Errorf("%v: %d %s, %d dispatched", c.err, resp.status, resp.raw, len(f.disp.deliveries()))
		}
	}
}

// TestSecretRotation: the secret is read for every delivery, so that a
// new one applies at once and the old one stops working.
func TestSecretRotation(t *testing.T) {
	f := newFixture(t, nil)
	if resp := f.do(t, webhookstest.Request("/webhooks/github/a", secretA, "issues", deliveryID, issueOpened)); resp.status != 202 {
		t.Fatalf("before rotation: %d %s", resp.status, resp.raw)
	}
	const rotated = "the-new-secret"
	f.secrets.set("a", rotated)
	if resp := f.do(t, webhookstest.Request("/webhooks/github/a", secretA, "issues", "d2", issueOpened)); resp.status != 401 {
		t.Errorf("the old secret after rotation: %d %s", resp.status, resp.raw)
	}
	if resp := f.do(t, webhookstest.Request("/webhooks/github/a", rotated, "issues", "d3", issueOpened)); resp.status != 202 {
		t.Errorf("the new secret: %d %s", resp.status, resp.raw)
	}
	if got := f.disp.deliveries(); len(got) != 2 || got[1].ID != "d3" {
		t.Errorf("dispatched %v", got)
	}
	if !slices.Equal(f.secrets.reads, []string{"a", "a", "a"}) {
		t.Errorf("secret reads %v, want one a delivery", f.secrets.reads)
	}
}

// TestTenantRouting: the path names the tenant, whose secret alone
// verifies its deliveries.
func TestTenantRouting(t *testing.T) {
	f := newFixture(t, nil)
	if resp := f.do(t, webhookstest.Request("/webhooks/github/b", secretA, "issues", deliveryID, issueOpened)); resp.status != 401 {
		t.Errorf("signed for a, sent to b: %d %s", resp.status, resp.raw)
	}
	if resp := f.do(t, webhookstest.Request("/webhooks/github", secretA, "issues", deliveryID, issueOpened)); resp.status != 401 {
		t.Errorf("signed for a, sent to the default tenant: %d %s", resp.status, resp.raw)
	}
	if n := len(f.disp.deliveries()); n != 0 {
		t.Fatalf("%d deliveries dispatched", n)
	}
	for path, tenant := range map[string]string{"/webhooks/github/b": "b", "/webhooks/github": "default", "/webhooks/github/default": "default"} {
		secret := map[string]string{"b": secretB, "default": secretDefault}[tenant]
		f := newFixture(t, nil)
		if resp := f.do(t, webhookstest.Request(path, secret, "issues", deliveryID, issueOpened)); resp.status != 202 {
			t.Errorf("%s: %d %s", path, resp.status, resp.raw)
		}
		if d := f.disp.deliveries(); len(d) != 1 || d[0].Tenant != tenant {
			t.Errorf("%s: dispatched %+v, want tenant %s", path, d, tenant)
		}
	}
	// Another default tenant.
	f = newFixture(t, func(o *webhooks.Options) { o.DefaultTenant = "b" })
	if resp := f.do(t, webhookstest.Request("/webhooks/github", secretB, "issues", deliveryID, issueOpened)); resp.status != 202 {
		t.Errorf("DefaultTenant b: %d %s", resp.status, resp.raw)
	}
}

// TestUnknownEventsAreNotErrors: an event or action nobody handles goes to
// the Dispatcher like any other and is answered 200 when it says Ignored.
func TestUnknownEventsAreNotErrors(t *testing.T) {
	f := newFixture(t, nil)
	f.disp.answer = func(webhooks.Delivery) (webhooks.Outcome, error) { return webhooks.Ignored, nil }
	for _, ev := range []string{"sponsorship", "deployment_review", "a_future_event_v2"} {
		resp := f.do(t, webhookstest.Request("/webhooks/github/a", secretA, ev, deliveryID, []byte(`{"action":"something_new"}`)))
		if resp.status != 200 || resp.body["outcome"] != "ignored" {
			t.Errorf("%s: %d %s", ev, resp.status, resp.raw)
		}
	}
	if len(f.disp.deliveries()) != 3 {
		t.Errorf("dispatched %d, want 3", len(f.disp.deliveries()))
	}
}
