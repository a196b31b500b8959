package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	gogithub "github.com/google/go-github/v62/github"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// SecondaryLimitWait is how long a tenant waits after a secondary rate
// limit answer that said neither retry-after nor a reset: GitHub's docs ask
// for at least a minute.
const SecondaryLimitWait = time.Minute

// minLimitWait bounds a wait from below, so that a retry-after of 0 or a
// reset already past (clock skew) does not turn into a retry loop.
const minLimitWait = time.Second

// apiError is the GitHub failure carried inside a *vp.Error. It is built
// from go-github's error rather than wrapping it, because go-github's errors
// hold the *http.Request, whose Authorization header holds the token: an
// error logged with reflection (or a debugger's dump) must not reveal it.
type apiError struct {
	Method, Path string
	Status       int
	Message      string
}

func (e *apiError) Error() string {
	var b strings.Builder
	if e.Method != "" {
		fmt.Fprintf(&b, "%s %s: ", e.Method, e.Path)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "%d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Message != "" {
		if e.Status != 0 {
			b.WriteString(": ")
		}
		b.WriteString(e.Message)
	}
	return b.String()
}

// fail maps a go-github error onto a *vp.Error and, for a rate limit,
// blocks the tenant's writes in the limiter so that every process waits.
func (c *Client) fail(ctx context.Context, op string, a Account, resp *gogithub.Response, err error) error {
	now := c.now()
	hr := httpResponse(resp, err)
	ae := describe(hr, err)
	if wait, ok := limitWait(now, hr, err); ok {
		if c.limiter != nil {
			// Recorded even when the caller's context is ending: the block
			// is what keeps the tenant's other writers from hitting the
			// limit again.
			bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
			// A failed block only costs the other writers one more limit
			// answer each; this call is rate-limited either way.
			_ = c.limiter.Block(bctx, a.Tenant, now.Add(wait))
			cancel()
		}
		e := vp.RateLimited(op, wait, ae)
		e.Msg = fmt.Sprintf("GitHub rate-limited tenant %s; retry after %v", a.Tenant, wait.Round(time.Second))
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return vp.Unavailable(op, err)
	}
	status := ae.Status
	switch {
	case status == 0:
		// No answer: a network failure or a timeout. go-github has
		// already removed secrets from a *url.Error's URL, and such an
		// error holds no header.
		return vp.Unavailable(op, err)
	case status >= 200 && status < 300:
		// An answer we could not decode: most likely a proxy's page.
		return vp.Unavailable(op, ae)
	case status == http.StatusUnauthorized:
		return &vp.Error{Op: op, Kind: vp.KindUnauthorized, Field: "token", Err: ae,
			Msg: fmt.Sprintf("GitHub refused tenant %s's token: it is missing, invalid, expired or revoked; set a new one with `vantagepeers github set --tenant %s --token-stdin`", a.Tenant, a.Tenant)}
	case status == http.StatusForbidden:
		return &vp.Error{Op: op, Kind: vp.KindForbidden, Err: ae,
			Msg: fmt.Sprintf("tenant %s's GitHub token may not do this (it needs the issues or pull requests permission on the repository)", a.Tenant)}
	case status == http.StatusNotFound || status == http.StatusGone:
		return &vp.Error{Op: op, Kind: vp.KindNotFound, Err: ae,
			Msg: "GitHub has no such repository, issue or pull request, or the token cannot see it"}
	case status == http.StatusUnprocessableEntity || status == http.StatusBadRequest:
		return &vp.Error{Op: op, Kind: vp.KindInvalid, Field: invalidField(err), Err: ae, Msg: "GitHub refused the request"}
	case status >= 500:
		return vp.Unavailable(op, ae)
	}
	return vp.Wrap(op, vp.KindInternal, ae)
}

// httpResponse returns the answer behind err: the one go-github's error
// carries (a fail-fast error carries a synthesised one, with no header),
// else resp's.
func httpResponse(resp *gogithub.Response, err error) *http.Response {
	var (
		rle *gogithub.RateLimitError
		are *gogithub.AbuseRateLimitError
		er  *gogithub.ErrorResponse
	)
	switch {
	case errors.As(err, &rle) && rle.Response != nil:
		return rle.Response
	case errors.As(err, &are) && are.Response != nil:
		return are.Response
	case errors.As(err, &er) && er.Response != nil:
		return er.Response
	case resp != nil:
		return resp.Response
	}
	return nil
}

// describe keeps what may be shown of a failure: method, path (no query),
// status and GitHub's message with its field errors.
func describe(hr *http.Response, err error) *apiError {
	ae := &apiError{}
	if hr != nil {
		ae.Status = hr.StatusCode
		if hr.Request != nil && hr.Request.URL != nil {
			ae.Method, ae.Path = hr.Request.Method, hr.Request.URL.Path
		}
	}
	var (
		rle *gogithub.RateLimitError
		are *gogithub.AbuseRateLimitError
		er  *gogithub.ErrorResponse
	)
	switch {
	case errors.As(err, &rle):
		ae.Message = rle.Message
	case errors.As(err, &are):
		ae.Message = are.Message
	case errors.As(err, &er):
		ae.Message = er.Message
		for _, fe := range er.Errors {
			switch {
			case fe.Message != "":
				ae.Message += "; " + fe.Message
			case fe.Field != "":
				ae.Message += fmt.Sprintf("; %s: %s", fe.Field, fe.Code)
			}
		}
	default:
		if hr == nil || hr.StatusCode < 300 {
			ae.Message = err.Error()
		}
	}
	return ae
}

// invalidField names the argument GitHub's 422 blames, when it says.
func invalidField(err error) string {
	var er *gogithub.ErrorResponse
	if errors.As(err, &er) {
		for _, fe := range er.Errors {
			if fe.Field != "" {
				return fe.Field
			}
		}
	}
	return ""
}

// limitWait reports whether err is a rate-limit answer and how long to wait.
// GitHub answers a limit with 403 or 429 and says the wait with
// retry-after (seconds), or with x-ratelimit-reset when
// x-ratelimit-remaining is 0; a secondary limit may say neither (wait at
// least a minute). go-github v62 recognises only the 403s, and fails fast
// without a request, with a synthesised 403 and no header, once it has
// seen a limit: those carry the wait in the error.
func limitWait(now time.Time, hr *http.Response, err error) (time.Duration, bool) {
	var h http.Header
	status := 0
	if hr != nil {
		h, status = hr.Header, hr.StatusCode
	}
	var (
		rle *gogithub.RateLimitError
		are *gogithub.AbuseRateLimitError
		er  *gogithub.ErrorResponse
	)
	var fallback time.Duration
	switch {
	case errors.As(err, &rle):
		fallback = SecondaryLimitWait
		if !rle.Rate.Reset.IsZero() {
			fallback = rle.Rate.Reset.Sub(now)
		}
	case errors.As(err, &are):
		fallback = SecondaryLimitWait
		// Only a fail-fast error (no header) is trusted for its
		// RetryAfter: on a real answer v62 takes it from
		// x-ratelimit-reset even when requests remain.
		if len(h) == 0 && are.RetryAfter != nil {
			fallback = *are.RetryAfter
		}
	case errors.As(err, &er) && (status == http.StatusTooManyRequests ||
		status == http.StatusForbidden && (h.Get("Retry-After") != "" || h.Get("X-RateLimit-Remaining") == "0" ||
			strings.Contains(strings.ToLower(er.Message), "rate limit"))):
		fallback = SecondaryLimitWait
	default:
		return 0, false
	}
	d, ok := headerWait(now, h)
	if !ok {
		d = fallback
	}
	return max(d, minLimitWait), true
}

// headerWait reads the wait a limit answer's headers ask for.
func headerWait(now time.Time, h http.Header) (time.Duration, bool) {
	if v := strings.TrimSpace(h.Get("Retry-After")); v != "" {
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
			return time.Duration(s) * time.Second, true
		}
		// RFC 9110 also allows an HTTP date.
		if t, err := http.ParseTime(v); err == nil {
			return t.Sub(now), true
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if s, err := strconv.ParseInt(strings.TrimSpace(h.Get("X-RateLimit-Reset")), 10, 64); err == nil && s > 0 {
			return time.Unix(s, 0).Sub(now), true
		}
	}
	return 0, false
}
