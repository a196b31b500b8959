package webhooks

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Delivery is one verified GitHub webhook delivery.
type Delivery struct {
	// Tenant is from the path: /webhooks/github is Options.DefaultTenant,
	// /webhooks/github/{tenant} is tenant.
	Tenant string
	// ID is X-GitHub-Delivery: the same for a delivery and its redeliveries.
	ID string
	// Event is X-GitHub-Event ("issues", "pull_request", "ping", ...).
	Event string
	// Action is the payload's top-level "action" ("opened", ...); "" when
	// absent or not a string.
	Action string
	// HookID is X-GitHub-Hook-ID, "" when absent or not a number.
	HookID string
	// Body is the raw body, verified against the signature.
	Body       []byte
	ReceivedAt time.Time
}

// Outcome is what a Dispatcher did with a delivery.
type Outcome string

const (
	// Accepted: the delivery changed something (answered 202).
	Accepted Outcome = "accepted"
	// Duplicate: the delivery was handled before; nothing changed (200).
	Duplicate Outcome = "duplicate"
	// Ignored: the event or action is not one that is handled (200).
	Ignored Outcome = "ignored"
)

// Dispatcher handles a verified delivery. It commits what it writes
// together with d.Seen() so that a redelivery changes nothing (see the
// package documentation), and answers Ignored, not an error, for events
// and actions it does not handle.
type Dispatcher interface {
	Deliver(ctx context.Context, d Delivery) (Outcome, error)
}

// Secrets gives a tenant's webhook secret; "" (unknown tenant or none set)
// refuses every delivery for it.
type Secrets interface {
	WebhookSecret(ctx context.Context, tenant string) (string, error)
}

// Options configures New. Secrets and Dispatcher are what a deployment
// provides; the others have defaults.
type Options struct {
	// Secrets is read on every request. Nil refuses every delivery.
	Secrets Secrets
	// Dispatcher handles verified deliveries. Nil answers 503 to them: the
	// delivery is refused as a temporary failure, to be redelivered once a
	// dispatcher is configured.
	Dispatcher Dispatcher
	Logger     *slog.Logger
	// DefaultTenant is the tenant of /webhooks/github ("default").
	DefaultTenant string
	// MaxBody bounds the body (25 MiB, GitHub's cap); a larger one is
	// answered 413 without being read whole.
	MaxBody int64
	Now     func() time.Time
	// Limiter bounds what one source address may make the handler do: its
	// refused requests (unsigned, or a signature that does not verify:
	// Rules.WebhookBad, per address and hook, checked before the body is
	// read) and its signed ones (Rules.Webhook, generous). A valid
	// delivery never counts against WebhookBad, and an outsider cannot
	// count against the tenant's hook from GitHub's addresses (GitHub
	// sends its own hook's id). Nil: counted in this process only.
	Limiter *ratelimit.Limiter
}

// path is where the handler listens; a tenant's hook is path + "/" + tenant.
const path = "/webhooks/github"

const defaultMaxBody = 25 << 20

// The delivery headers GitHub sends.
const (
	eventHeader    = "X-GitHub-Event"
	deliveryHeader = "X-GitHub-Delivery"
	hookIDHeader   = "X-GitHub-Hook-ID"
)

// New returns the handler of POST /webhooks/github and POST
// /webhooks/github/{tenant}.
func New(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.DefaultTenant == "" {
		o.DefaultTenant = "default"
	}
	if o.MaxBody <= 0 {
		o.MaxBody = defaultMaxBody
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Secrets == nil {
		o.Secrets = noSecrets{}
	}
	if o.Dispatcher == nil {
		o.Dispatcher = noDispatcher{}
	}
	if o.Limiter == nil {
		o.Limiter = ratelimit.New(ratelimit.Options{Logger: o.Logger})
	}
	return &handler{o: o}
}

type handler struct{ o Options }

// answer is the response to one request and what its log line says.
type answer struct {
	status     int
	body       any
	outcome    string        // for the log: an Outcome, "ping" or "refused"
	reason     string        // for the log: why a request was refused (the error sent)
	err        error         // for the log only: what a 5xx hides from the caller
	retryAfter time.Duration // 503 only
}

type errorBody struct {
	Error string `json:"error"`
}

type outcomeBody struct {
	Outcome  Outcome `json:"outcome"`
	Delivery string  `json:"delivery"`
}

type pingBody struct {
	OK    bool   `json:"ok"`
	Event string `json:"event"`
}

func refuse(status int, err error) answer {
	return answer{status: status, body: errorBody{err.Error()}, outcome: "refused", reason: err.Error()}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	d := Delivery{ReceivedAt: h.o.Now()}
	a := h.serve(w, r, &d)
	if a.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(a.retryAfter.Seconds())), 10))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_ = json.NewEncoder(w).Encode(a.body)

	// One line per delivery. Headers are not logged (they carry the
	// signature), only the values that passed validation.
	level := slog.LevelInfo
	switch {
	case a.status >= 500:
		level = slog.LevelError
	case a.status >= 400:
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{slog.String("tenant", d.Tenant), slog.String("event", d.Event), slog.String("action", d.Action),
		slog.String("delivery", d.ID), slog.String("outcome", a.outcome), slog.Int("status", a.status),
		slog.Duration("duration", time.Since(start))}
	if a.reason != "" {
		attrs = append(attrs, slog.String("reason", a.reason))
	}
	if a.err != nil {
		attrs = append(attrs, slog.String("err", a.err.Error()))
	}
	h.o.Logger.LogAttrs(r.Context(), level, "webhook delivery", attrs...)
}

// serve checks the request in the order that costs an unauthenticated
// caller the least: path and method, the signature's form, the secret,
// the body (bounded), the signature itself; only then the delivery
// headers and the payload, so that an unsigned request learns nothing but
// 401.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, d *Delivery) answer {
	tenant, ok := h.tenantOf(r.URL.Path)
	if !ok {
		return refuse(http.StatusNotFound, errors.New("no such webhook endpoint: use "+path+" or "+path+"/{tenant} (a tenant id)"))
	}
	d.Tenant = tenant
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return refuse(http.StatusMethodNotAllowed, errors.New("a webhook delivery is a POST"))
	}
	// Read now so that the log line names a well-formed event and id even
	// when the delivery is refused; reported after the signature.
	var evErr, idErr error
	d.Event, evErr = header(r.Header, eventHeader, validEvent, "1 to 64 characters of a-z, 0-9 and _")
	d.ID, idErr = header(r.Header, deliveryHeader, validDeliveryID, "1 to 100 characters of A-Z, a-z, 0-9 and -")

	lim := h.o.Limiter
	rules := lim.Rules()
	src := ratelimit.Key(lim.Source(r))
	mac, err := signatureOf(r.Header)
	if err != nil {
		return h.refused(r, src+"#unsigned", refuse(http.StatusUnauthorized, err))
	}
	// Before any byte of the body: this address and hook's refusals, then
	// its signed requests.
	bad := src + "#hook-" + cmp.Or(hookID(r.Header), "none")
	if d, err := lim.Exhausted(r.Context(), rules.WebhookBad, bad); err == nil && !d.Allowed {
		return limited(d, "deliveries refused for their signature")
	}
	if d, err := lim.Allow(r.Context(), rules.Webhook, src); err == nil && !d.Allowed {
		return limited(d, "signed deliveries")
	}
	secret, err := h.o.Secrets.WebhookSecret(r.Context(), tenant)
	if err != nil {
		a := unavailable(vp.Retryable(err), err)
		a.reason = "reading the webhook secret"
		return a
	}
	if secret == "" {
		return h.refused(r, bad, refuse(http.StatusUnauthorized, errNoSecret))
	}
	body, a, ok := h.readBody(w, r)
	if !ok {
		return a
	}
	if err := verify(secret, body, mac); err != nil {
		return h.refused(r, bad, refuse(http.StatusUnauthorized, err))
	}
	if err := errors.Join(evErr, idErr); err != nil {
		return refuse(http.StatusBadRequest, err)
	}
	d.HookID = hookID(r.Header)
	action, ok := topLevelAction(body)
	if !ok {
		return refuse(http.StatusBadRequest, errors.New("the body is not a JSON object: set the webhook's content type to application/json"))
	}
	d.Action, d.Body = action, body
	if d.Event == "ping" {
		// GitHub's hello when a hook is created: nothing to dispatch.
		return answer{status: http.StatusOK, body: pingBody{OK: true, Event: "ping"}, outcome: "ping"}
	}
	return h.dispatch(r.Context(), *d)
}

// refused counts a refusal against key (Rules.WebhookBad): a refusal over
// the limit is answered 429, so that its sender learns to stop.
func (h *handler) refused(r *http.Request, key string, a answer) answer {
	d, err := h.o.Limiter.Allow(r.Context(), h.o.Limiter.Rules().WebhookBad, key)
	if err != nil || d.Allowed {
		return a
	}
	return limited(d, "deliveries refused for their signature")
}

// limited is the 429 of a limit, naming it.
func limited(d ratelimit.Decision, what string) answer {
	msg := d.Message(what)
	return answer{status: http.StatusTooManyRequests, body: errorBody{msg}, outcome: "limited", reason: msg, retryAfter: d.RetryAfter}
}

// tenantOf maps the path to its tenant.
func (h *handler) tenantOf(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, path)
	if !ok {
		return "", false
	}
	if rest == "" {
		return h.o.DefaultTenant, true
	}
	// The one tenant-id rule of the product (vp.ValidTenant); a "/" in the
	// segment fails it, so deeper paths are not webhook endpoints either.
	t, ok := strings.CutPrefix(rest, "/")
	if !ok || !vp.ValidTenant(t) {
		return "", false
	}
	return t, true
}

// readBody reads at most MaxBody bytes. A declared length over the limit
// is refused before any read; an undeclared one stops at the limit
// (http.MaxBytesReader), so that a larger body is never held whole.
func (h *handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, answer, bool) {
	tooLarge := refuse(http.StatusRequestEntityTooLarge,
		fmt.Errorf("the body is over %d bytes, the most GitHub sends", h.o.MaxBody))
	if r.ContentLength > h.o.MaxBody {
		return nil, tooLarge, false
	}
	if r.Body == nil {
		return nil, answer{}, true
	}
	var buf bytes.Buffer
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead) // one allocation, no regrowth
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, h.o.MaxBody))
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return nil, tooLarge, false
	case err != nil:
		a := refuse(http.StatusBadRequest, errors.New("the body could not be read whole"))
		a.err = err
		return nil, a, false
	}
	return buf.Bytes(), answer{}, true
}

// dispatch hands d to the Dispatcher and maps what it says onto HTTP.
func (h *handler) dispatch(ctx context.Context, d Delivery) (a answer) {
	defer func() {
		// A Dispatcher's bug answers 500 like any other internal error
		// rather than ending the process (or the Lambda invocation).
		if p := recover(); p != nil {
			a = unavailable(false, fmt.Errorf("the dispatcher panicked: %v\n%s", p, debug.Stack()))
		}
	}()
	out, err := h.o.Dispatcher.Deliver(ctx, d)
	if err != nil && IsRedelivery(err, d) {
		// A Dispatcher may return its Write's error as it is: the dedup
		// record's failed condition means "handled before".
		out, err = Duplicate, nil
	}
	if err != nil {
		return failure(err)
	}
	switch out {
	case Accepted:
		return answer{status: http.StatusAccepted, body: outcomeBody{out, d.ID}, outcome: string(out)}
	case Duplicate, Ignored:
		return answer{status: http.StatusOK, body: outcomeBody{out, d.ID}, outcome: string(out)}
	}
	return unavailable(false, fmt.Errorf("the dispatcher returned the unknown outcome %q", out))
}

// failure maps a Dispatcher error onto HTTP.
func failure(err error) answer {
	if vp.IsKind(err, vp.KindInvalid) {
		a := refuse(http.StatusBadRequest, err)
		a.outcome = "invalid"
		return a
	}
	a := unavailable(vp.Retryable(err), err)
	a.retryAfter, _ = vp.RetryAfter(err)
	return a
}

// unavailable is a 503 when retryable (a redelivery later will work) or
// else a 500, with a generic message: the details are in the log only.
func unavailable(retryable bool, err error) answer {
	if retryable {
		return answer{status: http.StatusServiceUnavailable, outcome: "failed", err: err,
			body: errorBody{"temporarily unavailable: nothing was written; redeliver this delivery later"}}
	}
	return answer{status: http.StatusInternalServerError, outcome: "failed", err: err,
		body: errorBody{"internal error: nothing was written; the server's log has the details"}}
}

// header returns the one value of a required header when valid.
func header(h http.Header, name string, valid func(string) bool, rule string) (string, error) {
	vs := h.Values(name)
	switch {
	case len(vs) == 0 || vs[0] == "":
		return "", fmt.Errorf("%s is missing: it is sent by GitHub with every delivery", name)
	case len(vs) > 1:
		return "", fmt.Errorf("%s is given more than once", name)
	case !valid(vs[0]):
		return "", fmt.Errorf("%s must be %s", name, rule)
	}
	return vs[0], nil
}

// validEvent: GitHub's event names are lower-case words joined by "_",
// some with digits ("projects_v2_item").
func validEvent(s string) bool {
	return validChars(s, 64, func(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' })
}

// validDeliveryID: GitHub's delivery ids are GUIDs; anything of that
// alphabet is accepted, bounded so that it fits a key.
func validDeliveryID(s string) bool {
	return validChars(s, 100, func(c byte) bool {
		return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-'
	})
}

func validChars(s string, maxLen int, ok func(byte) bool) bool {
	if len(s) == 0 || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// hookID is X-GitHub-Hook-ID when it is a number. It only informs the
// Dispatcher, so a malformed one is dropped rather than refused.
func hookID(h http.Header) string {
	v := h.Get(hookIDHeader)
	if !validChars(v, 20, func(c byte) bool { return '0' <= c && c <= '9' }) {
		return ""
	}
	return v
}

// topLevelAction checks that body is a JSON object and returns its
// top-level "action" (matched exactly, unlike encoding/json's
// case-insensitive field matching), "" when absent or not a string.
func topLevelAction(body []byte) (string, bool) {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return "", false
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if _, err := dec.Token(); err != nil { // the object's "{"
		return "", false
	}
	action := ""
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return "", false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return "", false
		}
		if k == "action" {
			action = ""
			_ = json.Unmarshal(v, &action) // a string, or "" for any other value
		}
	}
	return action, true
}

// noSecrets is the Secrets of a handler given none: every tenant is
// refused.
type noSecrets struct{}

func (noSecrets) WebhookSecret(context.Context, string) (string, error) { return "", nil }

// noDispatcher is the Dispatcher of a handler given none.
type noDispatcher struct{}

func (noDispatcher) Deliver(context.Context, Delivery) (Outcome, error) {
	return "", vp.Unavailable("webhooks", errors.New("no dispatcher is configured: redeliver once one is"))
}
