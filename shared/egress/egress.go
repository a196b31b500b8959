// Package egress is the one policy for every request to a URL that a
// tenant, an agent or an OAuth client supplies (a Convex deploymentUrl, a
// client ID metadata document, anything added later): https only; the
// host resolved by the policy itself and EVERY resolved address checked
// (Refused) before the checked address is dialed, with no second lookup
// that DNS rebinding could answer differently; no proxy from the
// environment (it would dial for us, unchecked); no redirects; bounded
// connect, TLS and request times; bounded bodies.
//
// The operator may allow named hosts, addresses or CIDRs (EnvAllowHosts,
// parsed by ParseAllow and passed in Options), for a local or in-VPC
// deployment: those may be reached over http and at any address.
//
// A remote a tenant named may answer anything: callers keep its status and
// a classification (Classify), never its bytes, in what they show.
package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Defaults.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultTLSTimeout     = 5 * time.Second
	DefaultTimeout        = 30 * time.Second
	DefaultMaxBody        = 1 << 20
	// MaxURLBytes bounds a URL given to CheckURL.
	MaxURLBytes    = 2048
	maxHeaderBytes = 64 << 10
)

// Resolver looks a host up; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Policy.
type Options struct {
	// Allow is the operator's allow-list (ParseAllow of EnvAllowHosts);
	// the zero Allow allows nothing.
	Allow Allow
	// Resolver resolves host names (default net.DefaultResolver).
	Resolver Resolver
	// ConnectTimeout bounds a dial, the lookup included (default 5 s);
	// TLSTimeout the TLS handshake (default 5 s); Timeout a whole request,
	// its body read included (default 30 s); MaxBody an answer's body
	// (default 1 MiB). A Client may set its own last two.
	ConnectTimeout, TLSTimeout, Timeout time.Duration
	MaxBody                             int64
	// TLSConfig is the TLS client configuration (nil: the system's roots);
	// a test trusts its own listener's certificate with it.
	TLSConfig *tls.Config
}

// Policy is the egress policy. It is safe for concurrent use.
type Policy struct {
	o Options
	// dial connects to a checked address; tests watch it.
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// New returns a Policy.
func New(o Options) *Policy {
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.TLSTimeout <= 0 {
		o.TLSTimeout = DefaultTLSTimeout
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	p := &Policy{o: o}
	d := &net.Dialer{Timeout: o.ConnectTimeout, ControlContext: p.control}
	p.dial = d.DialContext
	return p
}

// Allowed returns the operator's allow-list.
func (p *Policy) Allowed() Allow { return p.o.Allow }

// RefusedError is a refusal by the policy. Rule names the rule broken
// ("loopback", "private address", "scheme http", "redirect", ...).
type RefusedError struct {
	// What was refused: the URL's host, or a name and the address it
	// resolved to.
	Host string
	Addr netip.Addr
	Rule string
	// Allowable: the operator could allow it with EnvAllowHosts.
	Allowable bool
}

func (e *RefusedError) Error() string {
	what := e.Host
	if e.Addr.IsValid() {
		if a := e.Addr.String(); what != a && what != "["+a+"]" && what != "" {
			what += " (" + a + ")"
		} else {
			what = a
		}
	}
	var b strings.Builder
	b.WriteString("egress: refused")
	if what != "" {
		b.WriteString(" " + what)
	}
	b.WriteString(" (" + e.Rule + ")")
	if e.Allowable {
		b.WriteString("; an operator may allow it with " + EnvAllowHosts)
	}
	return b.String()
}

// BodyTooLargeError: an answer's body went over its limit.
type BodyTooLargeError struct{ Limit int64 }

func (e *BodyTooLargeError) Error() string {
	return fmt.Sprintf("egress: the answer's body is over its limit of %d bytes", e.Limit)
}

// StatusError is an answer's status that its caller did not accept.
type StatusError struct{ Code int }

func (e *StatusError) Error() string { return "egress: HTTP " + strconv.Itoa(e.Code) }

// ClassifyStatus is the classification of an HTTP status: "http 401",
// "http 404", "http 5xx".
func ClassifyStatus(code int) string {
	if code >= 500 && code <= 599 {
		return "http 5xx"
	}
	return "http " + strconv.Itoa(code)
}

// Classify says what kind of failure err is, in words that carry none of
// the remote's bytes: "refused by egress policy: loopback", "timeout",
// "tls", "dns", "http 401", "http 5xx", "body over limit", "connection
// refused", "connection failed", "cancelled", "request failed". "" for nil.
func Classify(err error) string {
	var (
		refused  *RefusedError
		tooLarge *BodyTooLargeError
		status   *StatusError
		dnsErr   *net.DNSError
		certErr  *tls.CertificateVerificationError
		recErr   tls.RecordHeaderError
		alertErr tls.AlertError
		netErr   net.Error
		opErr    *net.OpError
	)
	switch {
	case err == nil:
		return ""
	case errors.As(err, &refused):
		return "refused by egress policy: " + refused.Rule
	case errors.As(err, &tooLarge):
		return "body over limit"
	case errors.As(err, &status):
		return ClassifyStatus(status.Code)
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.As(err, &dnsErr):
		return "dns"
	case errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &alertErr), strings.Contains(err.Error(), "tls: "):
		return "tls"
	case strings.Contains(err.Error(), "connection refused"):
		return "connection refused"
	case errors.As(err, &opErr):
		return "connection failed"
	}
	return "request failed"
}

// CheckURL checks a URL before it is stored or used: an absolute http(s)
// URL of at most MaxURLBytes, without user info; https unless its host is
// allowed; a host that is a DNS name or an IP literal, not a numeric
// spelling of an address (0x7f.1, 2130706433), not a localhost name and
// not a refused address literal. The address a name resolves to is
// checked when it is dialed.
func (p *Policy) CheckURL(raw string) (*url.URL, error) {
	if len(raw) > MaxURLBytes {
		return nil, &RefusedError{Rule: fmt.Sprintf("a URL of %d bytes; the limit is %d", len(raw), MaxURLBytes)}
	}
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return nil, &RefusedError{Rule: "not a valid absolute http(s) URL"}
	}
	if u.User != nil {
		return nil, &RefusedError{Host: u.Hostname(), Rule: "user info in the URL"}
	}
	if err := p.checkScheme(u); err != nil {
		return nil, err
	}
	if err := p.checkHost(u.Hostname()); err != nil {
		return nil, err
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, &RefusedError{Host: u.Host, Rule: "port out of range"}
		}
	}
	return u, nil
}

func (p *Policy) checkScheme(u *url.URL) error {
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if p.o.Allow.host(u.Hostname()) {
			return nil
		}
		return &RefusedError{Host: u.Hostname(), Rule: "scheme http: only https", Allowable: true}
	}
	return &RefusedError{Host: u.Hostname(), Rule: fmt.Sprintf("scheme %q: only https", u.Scheme)}
}

// checkHost checks a host's syntax and, for a literal, its address.
func (p *Policy) checkHost(h string) error {
	if h == "" {
		return &RefusedError{Rule: "no host"}
	}
	if ip, ok := literal(h); ok {
		if ip.Zone() != "" {
			return &RefusedError{Host: h, Rule: "an address with a zone id"}
		}
		if r := Refused(ip); r != "" && !p.o.Allow.addr(ip) {
			return &RefusedError{Host: h, Addr: ip, Rule: r, Allowable: true}
		}
		return nil
	}
	if p.o.Allow.host(h) {
		return nil
	}
	switch {
	case !validHostname(h):
		return &RefusedError{Host: h, Rule: "not a DNS name (ASCII letters, digits, hyphens; punycode for other names)"}
	case numericHost(h):
		return &RefusedError{Host: h, Rule: "a numeric host that is not a dotted-decimal IPv4 address"}
	case localhostName(h):
		return &RefusedError{Host: h, Rule: "loopback", Allowable: true}
	}
	return nil
}

// DialContext connects to addr ("host:port") as the policy allows: the
// host resolved here and every address checked; then the checked
// addresses are dialed, in order, by address. It is the transport's dial
// of Client, and usable by other clients (a WebSocket dialer).
func (p *Policy) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, &RefusedError{Host: addr, Rule: "not a host:port address"}
	}
	ctx, cancel := context.WithTimeout(ctx, p.o.ConnectTimeout)
	defer cancel()
	allowed := p.o.Allow.host(host)
	var addrs []netip.Addr
	if ip, ok := literal(host); ok {
		addrs = []netip.Addr{ip}
	} else {
		if err := p.checkHost(host); err != nil {
			return nil, err
		}
		if addrs, err = p.o.Resolver.LookupNetIP(ctx, "ip", host); err != nil {
			return nil, err
		}
		if len(addrs) == 0 {
			return nil, &net.DNSError{Err: "no addresses", Name: host, IsNotFound: true}
		}
	}
	for _, a := range addrs {
		if a.Zone() != "" && !allowed {
			return nil, &RefusedError{Host: host, Addr: a, Rule: "an address with a zone id"}
		}
		if r := Refused(a); r != "" && !allowed && !p.o.Allow.addr(a) {
			return nil, &RefusedError{Host: host, Addr: a, Rule: r, Allowable: true}
		}
	}
	var errs []error
	for _, a := range addrs {
		c, err := p.dial(withChecked(ctx, allowed), network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	return nil, errors.Join(errs...)
}

type allowedKey struct{}

func withChecked(ctx context.Context, hostAllowed bool) context.Context {
	return context.WithValue(ctx, allowedKey{}, hostAllowed)
}

// control re-checks the address the socket connects to, after every
// lookup: whatever a future change does to DialContext, no refused
// address is connected to.
func (p *Policy) control(ctx context.Context, _, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return &RefusedError{Host: host, Rule: "not an IP address at connect time"}
	}
	hostAllowed, _ := ctx.Value(allowedKey{}).(bool)
	if r := Refused(a); r != "" && !hostAllowed && !p.o.Allow.addr(a) {
		return &RefusedError{Addr: a, Rule: r, Allowable: true}
	}
	return nil
}
