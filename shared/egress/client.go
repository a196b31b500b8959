package egress

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// ClientOptions narrow a Client's bounds; zero keeps the policy's.
type ClientOptions struct {
	// Timeout bounds a whole request, its body read included.
	Timeout time.Duration
	// MaxBody bounds an answer's body: reading past it fails with
	// *BodyTooLargeError.
	MaxBody int64
}

// Client returns an HTTP client that sends requests as the policy allows:
// its scheme rule per request, its dial (DialContext), no proxy, no
// redirects (the error names the rule; the redirect's target is not
// read), bounded times and body.
func (p *Policy) Client(o ClientOptions) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = p.o.Timeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = p.o.MaxBody
	}
	tr := &http.Transport{
		// No Proxy: a proxy from the environment would resolve and dial
		// the host itself, past DialContext.
		Proxy:                  nil,
		DialContext:            p.DialContext,
		TLSClientConfig:        p.o.TLSConfig.Clone(),
		TLSHandshakeTimeout:    p.o.TLSTimeout,
		ForceAttemptHTTP2:      true,
		MaxIdleConns:           16,
		IdleConnTimeout:        90 * time.Second,
		MaxResponseHeaderBytes: maxHeaderBytes,
	}
	return &http.Client{
		Transport: &transport{p: p, next: tr, maxBody: o.MaxBody},
		Timeout:   o.Timeout,
		CheckRedirect: func(req *http.Request, _ []*http.Request) error {
			status := 0
			if req.Response != nil {
				status = req.Response.StatusCode
			}
			return &RefusedError{Host: req.URL.Hostname(), Rule: redirectRule(status)}
		},
	}
}

func redirectRule(status int) string {
	if status == 0 {
		return "redirect: redirects are not followed"
	}
	return "redirect (HTTP " + strconv.Itoa(status) + "): redirects are not followed"
}

// transport applies the scheme rule to every request and the body limit
// to every answer.
type transport struct {
	p       *Policy
	next    http.RoundTripper
	maxBody int64
}

func (t *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := t.p.checkScheme(r.URL); err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, err
	}
	resp, err := t.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{r: resp.Body, c: resp.Body, left: t.maxBody, limit: t.maxBody}
	return resp, nil
}

// LimitReader returns a reader of r that fails with *BodyTooLargeError
// once r holds more than limit bytes (io.LimitReader would stop silently,
// and a cut answer would read as a whole one).
func LimitReader(r io.Reader, limit int64) io.Reader {
	return &limitedBody{r: r, left: limit, limit: limit}
}

type limitedBody struct {
	r           io.Reader
	c           io.Closer
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if b.left <= 0 {
		// At the limit: one more byte means over it.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			return 0, &BodyTooLargeError{Limit: b.limit}
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error {
	if b.c == nil {
		return nil
	}
	return b.c.Close()
}
