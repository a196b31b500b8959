// Package convex reads a Convex deployment's failed function executions
// from its log endpoint, GET {deploymentUrl}/api/stream_function_logs
// ?cursor=<ms>, as a source.Source.
//
// The endpoint long-polls: with nothing logged after the cursor it holds
// the request for about a minute and answers empty. A Read bounds that
// wait well inside its context's deadline and treats a wait that ran out
// as "nothing new", not as a failure. Only failed completions are events;
// successes and Progress entries are read past (the cursor moves over
// them).
//
// Convex answers a chunk of the entries after the cursor and the chunk's
// last log time as newCursor; a Read returns one chunk, with More set when
// the chunk moved the cursor (there may be more after it) and Newest the
// log time reached, and the scan asks again until it has caught up.
//
// The cursor is Convex's own (the log time, in ms, of the last entry
// read), optionally followed by "|" and the ids of the last events
// returned: a Read skips those if the deployment answers them again (an
// overlap at the same ms), and when a Read stopped at max events before
// the end of Convex's answer, it stays at the same Convex cursor and the
// next Read resumes after the last id it returned.
//
// The deployment's URL is a tenant's: every request goes through the
// egress policy (shared/egress), and no byte of an answer other than the
// log itself reaches an error text; a refusal keeps its status and a
// classification only.
package convex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon/internal/errtext"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const op = "errormon.convex"

// Defaults and bounds.
const (
	// DefaultMaxWait is the longest a Read lets Convex hold its long poll.
	DefaultMaxWait = 20 * time.Second
	// DefaultMax is the number of events a Read returns when its caller
	// passes max <= 0.
	DefaultMax = 1000
	// deadlineMargin is kept between a request's end and the Read's
	// deadline, so that the Read can still answer in time.
	deadlineMargin = time.Second
	// tailIDs is how many returned ids the cursor remembers.
	tailIDs = 32
	// maxBody bounds an answer: Convex's log is an in-memory buffer, so an
	// answer larger than this is not one.
	maxBody = 64 << 20
	// requestTimeout bounds a request whole: longer than any long poll
	// (MaxWait is cut to the Read's deadline, which the scan budget bounds).
	requestTimeout = 2 * time.Minute
)

// Options configure a Source.
type Options struct {
	// Egress is the policy the requests go through (the operator's
	// allow-list included); nil: the default policy (public https only).
	Egress *egress.Policy
	// Now is the clock (the start of a first read when since is zero).
	Now func() time.Time
	// MaxWait is the longest long poll per request (default DefaultMaxWait);
	// always cut to the Read's deadline minus a margin.
	MaxWait time.Duration
}

// Source reads Convex deployments. It keeps no state between Reads: all
// of it is in the cursor.
type Source struct {
	policy  *egress.Policy
	hc      *http.Client
	now     func() time.Time
	maxWait time.Duration
}

var _ source.Source = (*Source)(nil)

// New returns a Source.
func New(o Options) *Source {
	s := &Source{policy: o.Egress, now: o.Now, maxWait: o.MaxWait}
	if s.policy == nil {
		s.policy = egress.New(egress.Options{})
	}
	s.hc = s.policy.Client(egress.ClientOptions{Timeout: requestTimeout, MaxBody: maxBody})
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxWait <= 0 {
		s.maxWait = DefaultMaxWait
	}
	return s
}

// Read implements source.Source.
func (s *Source) Read(ctx context.Context, t source.Target, cursor string, since time.Time, max int) (source.Page, error) {
	endpoint, err := s.logsURL(t)
	if err != nil {
		return source.Page{}, err
	}
	if t.Key == "" {
		return source.Page{}, &vp.Error{Op: op, Kind: vp.KindUnauthorized, Field: "deployKeyEnvVar",
			Msg: fmt.Sprintf("deployment %q has no deploy key: %s", t.Name, howToSetKey(t))}
	}
	// Checked here, where the key is sent, whatever the caller did: a key
	// goes to the origin it is bound to and nowhere else.
	if at, err := egress.Origin(endpoint); err != nil || t.KeyOrigin == "" || at != t.KeyOrigin {
		bound := t.KeyOrigin
		if bound == "" {
			bound = "no URL"
		}
		return source.Page{}, &vp.Error{Op: op, Kind: vp.KindForbidden, Field: "deployKeyEnvVar",
			Msg: fmt.Sprintf("deployment %q: its deploy key is bound to %s, not to the deployment's URL: nothing is sent", t.Name, bound)}
	}
	if max <= 0 {
		max = DefaultMax
	}
	cur, err := parseCursor(cursor)
	if err != nil {
		return source.Page{}, err
	}
	if cursor == "" {
		cur.ms = strconv.FormatInt(errtext.Since(since, s.now()).UnixMilli(), 10)
	}
	wait, ok := s.wait(ctx, t)
	if !ok {
		// No time is left for a request; nothing is wrong with the source.
		return source.Page{Cursor: cur.String()}, ctxErr(ctx)
	}
	body, timedOut, err := s.get(ctx, wait, endpoint, cur.ms, t)
	if err != nil {
		return source.Page{}, err
	}
	if timedOut {
		// The long poll outlasted our wait: nothing new, as Convex itself
		// would have answered had we waited out its minute.
		return source.Page{Cursor: cur.String(), Newest: cur.time()}, nil
	}
	var ans answer
	if err := json.Unmarshal(body, &ans); err != nil {
		// The decoder's error may quote the answer: it is not kept.
		return source.Page{}, vp.Unavailable(op, fmt.Errorf("deployment %q answered stream_function_logs with something that is not its JSON", t.Name))
	}
	return s.page(cur, ans, max), nil
}

// wait is how long a request may last: MaxWait (or the target's shorter
// Wait), cut so that the request
// ends a margin before ctx's deadline (half the time left when that is
// short). ok is false when no time is left.
func (s *Source) wait(ctx context.Context, t source.Target) (time.Duration, bool) {
	if ctx.Err() != nil {
		return 0, false
	}
	d := s.maxWait
	if t.Wait > 0 {
		d = min(d, t.Wait)
	}
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl)
		margin := min(deadlineMargin, left/2)
		d = min(d, left-margin)
	}
	return d, d > 0
}

func ctxErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return vp.Unavailable(op, err)
	}
	return nil
}

// get sends the request. timedOut reports that our own wait ran out
// before Convex answered (ctx itself still being alive).
func (s *Source) get(ctx context.Context, wait time.Duration, endpoint, cursor string, t source.Target) (body []byte, timedOut bool, err error) {
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, endpoint+"?cursor="+url.QueryEscape(cursor), nil)
	if err != nil {
		return nil, false, vp.Wrap(op, vp.KindInvalid, err)
	}
	req.Header.Set("Authorization", "Convex "+t.Key)
	req.Header.Set("Accept", "application/json")
	resp, err := s.hc.Do(req)
	if err == nil {
		defer func() { _ = resp.Body.Close() }()
		if resp.StatusCode == http.StatusOK {
			body, err = io.ReadAll(resp.Body)
		}
	}
	if err != nil {
		// A long poll that ran out of time found nothing new: that is an
		// empty answer, also when the Read's own deadline passed with it
		// (a loaded machine fires the request's timer late). Only a
		// cancelled Read is an error.
		if errors.Is(rctx.Err(), context.DeadlineExceeded) && !errors.Is(ctx.Err(), context.Canceled) {
			return nil, true, nil
		}
		return nil, false, requestError(t, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, false, statusError(resp, t)
	}
	return body, false, nil
}

// requestError is a failed request in words of its class only: the
// failure's own text may carry the remote's bytes (a certificate's names,
// a redirect's target) or what its address resolved to.
func requestError(t source.Target, err error) error {
	class := egress.Classify(err)
	var refused *egress.RefusedError
	switch {
	case errors.As(err, &refused):
		msg := fmt.Sprintf("deployment %q: %s", t.Name, class)
		if refused.Allowable {
			msg += "; an operator may allow the host with " + egress.EnvAllowHosts
		}
		return &vp.Error{Op: op, Kind: vp.KindForbidden, Field: "deploymentUrl", Msg: msg}
	case class == "body over limit":
		return vp.Unavailable(op, fmt.Errorf("deployment %q answered more than %d bytes (%s)", t.Name, maxBody, class))
	}
	return vp.Unavailable(op, fmt.Errorf("reading the logs of deployment %q: %s", t.Name, class))
}

// statusError maps a refusal to its kind, by its status alone: the body
// is the remote's, and a remote a tenant named is never echoed to it.
func statusError(resp *http.Response, t source.Target) error {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // lets the connection be reused
	status := fmt.Sprintf("HTTP %d", resp.StatusCode)
	switch code := resp.StatusCode; {
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return &vp.Error{Op: op, Kind: vp.KindUnauthorized, Field: "deployKeyEnvVar",
			Msg: fmt.Sprintf("deployment %q refused its deploy key (%s), which is wrong or revoked: %s", t.Name, status, howToSetKey(t))}
	case code == http.StatusTooManyRequests:
		return vp.RateLimited(op, retryAfter(resp.Header.Get("Retry-After")), fmt.Errorf("deployment %q: %s", t.Name, status))
	case code == http.StatusRequestTimeout || code >= 500:
		return vp.Unavailable(op, fmt.Errorf("deployment %q: %s", t.Name, status))
	case code == http.StatusNotFound:
		return &vp.Error{Op: op, Kind: vp.KindInvalid, Field: "deploymentUrl",
			Msg: fmt.Sprintf("deployment %q has no stream_function_logs endpoint at its URL (%s): check deploymentUrl", t.Name, status)}
	default:
		return &vp.Error{Op: op, Kind: vp.KindInvalid, Msg: fmt.Sprintf("deployment %q: %s", t.Name, status)}
	}
}

// howToSetKey says where a tenant's deploy key is set: the key is the
// tenant's, never a variable of the server.
func howToSetKey(t source.Target) string {
	tenant := t.Tenant
	if tenant == "" {
		tenant = "<tenant>"
	}
	return fmt.Sprintf("whoever manages tenant %s stores its key under the name the deployment's deployKeyEnvVar gives "+
		"(`vantagepeers deploykey set --tenant %s --url <deployment URL> <NAME>`, or on AWS the secret <prefix>%s/<NAME>)", tenant, tenant, tenant)
}

// retryAfter parses a Retry-After header in seconds (or an HTTP date);
// zero when absent or unreadable.
func retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if n, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if at, err := http.ParseTime(h); err == nil {
		return max(time.Until(at), 0)
	}
	return 0
}

func (s *Source) logsURL(t source.Target) (string, error) {
	raw := strings.TrimSpace(t.DeploymentURL)
	if raw == "" {
		return "", vp.Errorf(op, vp.KindInvalid, "deploymentUrl", "deployment %q has no deployment URL", t.Name)
	}
	u, err := s.policy.CheckURL(raw)
	if err != nil {
		return "", vp.Errorf(op, vp.KindInvalid, "deploymentUrl", "deployment %q: %v", t.Name, err)
	}
	u.RawQuery, u.Fragment = "", ""
	return strings.TrimRight(u.String(), "/") + "/api/stream_function_logs", nil
}
