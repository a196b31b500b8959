package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// tlsServer is a real TLS listener on 127.0.0.1 (its certificate is
// valid for 127.0.0.1 and example.com) that counts the requests it gets.
func tlsServer(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64, *tls.Config) {
	t.Helper()
	var hits atomic.Int64
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, &hits, ts.Client().Transport.(*http.Transport).TLSClientConfig
}

func policy(t *testing.T, allow string, cfg *tls.Config, names map[string]string) *Policy {
	t.Helper()
	a, err := ParseAllow(allow)
	if err != nil {
		t.Fatal(err)
	}
	r := &recorder{addrs: map[string][]netip.Addr{}}
	for n, ip := range names {
		r.addrs[n] = []netip.Addr{netip.MustParseAddr(ip)}
	}
	return New(Options{Allow: a, TLSConfig: cfg, Resolver: r, Timeout: 5 * time.Second})
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "hello") }

func TestLoopbackTLSListenerRefusedUnlessAllowed(t *testing.T) {
	ts, hits, cfg := tlsServer(t, ok)
	port := ts.URL[strings.LastIndexByte(ts.URL, ':'):]
	names := map[string]string{"example.com": "127.0.0.1"}
	for _, u := range []string{ts.URL, "https://example.com" + port, "https://[::ffff:127.0.0.1]" + port} {
		_, err := policy(t, "", cfg, names).Client(ClientOptions{}).Get(u)
		var re *RefusedError
		if !errors.As(err, &re) || Classify(err) != "refused by egress policy: loopback" && !strings.Contains(Classify(err), "loopback") {
			t.Errorf("GET %s without the allow-list: %v (%q)", u, err, Classify(err))
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback listener was reached %d times", hits.Load())
	}
	for _, allow := range []string{"127.0.0.1", "127.0.0.0/8", "::ffff:127.0.0.1"} {
		resp, err := policy(t, allow, cfg, names).Client(ClientOptions{}).Get(ts.URL + "/x")
		if err != nil {
			t.Fatalf("allowed %s: %v", allow, err)
		}
		b, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if err != nil || string(b) != "hello" {
			t.Fatalf("allowed %s: %q, %v", allow, b, err)
		}
	}
	// Allowed by name: the name is what the certificate is checked for.
	resp, err := policy(t, "example.com", cfg, names).Client(ClientOptions{}).Get("https://example.com" + port)
	if err != nil {
		t.Fatalf("allowed by name: %v", err)
	}
	_ = resp.Body.Close()
	if hits.Load() != 4 {
		t.Fatalf("%d hits, want 4", hits.Load())
	}
}

func TestHTTPOnlyForAllowedHosts(t *testing.T) {
	var hits atomic.Int64
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer ts.Close()
	if _, err := policy(t, "", nil, nil).Client(ClientOptions{}).Get(ts.URL); !strings.Contains(Classify(err), "scheme http") {
		t.Fatalf("http without the allow-list: %v", err)
	}
	// An allowed address does not make http allowed for a name that
	// resolves to it... unless the name itself is allowed.
	resp, err := policy(t, "127.0.0.1", nil, nil).Client(ClientOptions{}).Get(ts.URL)
	if err != nil {
		t.Fatalf("http to an allowed address: %v", err)
	}
	_ = resp.Body.Close()
	if hits.Load() != 1 {
		t.Fatalf("%d hits, want 1", hits.Load())
	}
}

func TestRedirectsAreRefused(t *testing.T) {
	var target atomic.Int64
	ts, _, cfg := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-loopback":
			http.Redirect(w, r, "https://127.0.0.1:1/latest/meta-data/", http.StatusFound)
		case "/to-public":
			http.Redirect(w, r, "https://1.1.1.1/", http.StatusMovedPermanently)
		case "/to-self":
			http.Redirect(w, r, "/target", http.StatusTemporaryRedirect)
		case "/target":
			target.Add(1)
		}
	})
	p := policy(t, "127.0.0.1", cfg, nil)
	p.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !strings.HasPrefix(addr, "127.0.0.1:") || strings.HasSuffix(addr, ":1") {
			t.Errorf("dialed %s", addr)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	for _, path := range []string{"/to-loopback", "/to-public", "/to-self"} {
		_, err := p.Client(ClientOptions{}).Get(ts.URL + path)
		var re *RefusedError
		if !errors.As(err, &re) || !strings.HasPrefix(re.Rule, "redirect") || !strings.Contains(err.Error(), "redirects are not followed") {
			t.Errorf("%s: %v, want a refused redirect", path, err)
		}
	}
	if target.Load() != 0 {
		t.Fatal("a redirect was followed")
	}
}

func TestBodyLimit(t *testing.T) {
	ts, _, cfg := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(make([]byte, 1<<20+1))
	})
	c := policy(t, "127.0.0.1", cfg, nil).Client(ClientOptions{MaxBody: 1 << 20})
	resp, err := c.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	var tl *BodyTooLargeError
	if !errors.As(err, &tl) || n != 1<<20 || Classify(err) != "body over limit" {
		t.Fatalf("read %d bytes, err %v", n, err)
	}
	// Exactly at the limit is whole.
	b, err := io.ReadAll(LimitReader(strings.NewReader("12345"), 5))
	if err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q %v", b, err)
	}
	if _, err := io.ReadAll(LimitReader(strings.NewReader("123456"), 5)); !errors.As(err, &tl) {
		t.Fatalf("over the limit: %v", err)
	}
}

func TestTimeouts(t *testing.T) {
	release := make(chan struct{})
	ts, _, cfg := tlsServer(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	defer close(release)
	start := time.Now()
	_, err := policy(t, "127.0.0.1", cfg, nil).Client(ClientOptions{Timeout: 300 * time.Millisecond}).Get(ts.URL)
	if Classify(err) != "timeout" || time.Since(start) > 3*time.Second {
		t.Fatalf("a slow answer: %v (%q) after %v", err, Classify(err), time.Since(start))
	}

	// A connect that never completes ends at the connect timeout.
	p := New(Options{ConnectTimeout: 200 * time.Millisecond, Resolver: &recorder{}})
	p.dial = func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	start = time.Now()
	_, err = p.Client(ClientOptions{Timeout: time.Minute}).Get("https://1.1.1.1/")
	if Classify(err) != "timeout" || time.Since(start) > 3*time.Second {
		t.Fatalf("a stuck connect: %v (%q) after %v", err, Classify(err), time.Since(start))
	}

	// A TLS handshake that never completes ends at the TLS timeout.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close() // silent: never answers the ClientHello
		}
	}()
	a, _ := ParseAllow("127.0.0.1")
	p = New(Options{Allow: a, TLSTimeout: 200 * time.Millisecond})
	start = time.Now()
	_, err = p.Client(ClientOptions{Timeout: time.Minute}).Get("https://" + ln.Addr().String())
	if Classify(err) != "timeout" || time.Since(start) > 3*time.Second {
		t.Fatalf("a stuck handshake: %v (%q) after %v", err, Classify(err), time.Since(start))
	}
}

// A proxy named by the environment is never used: it would resolve and
// dial the host itself, unchecked.
func TestNoProxyFromTheEnvironment(t *testing.T) {
	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { proxied.Add(1) }))
	defer proxy.Close()
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY"} {
		t.Setenv(k, proxy.URL)
	}
	t.Setenv("NO_PROXY", "")
	ts, hits, cfg := tlsServer(t, ok)
	// Go's own proxy rule skips loopback hosts: the request names one
	// that resolves there.
	u := "https://example.com" + ts.URL[strings.LastIndexByte(ts.URL, ':'):]
	names := map[string]string{"example.com": "127.0.0.1"}
	if _, err := policy(t, "", cfg, names).Client(ClientOptions{}).Get(u); err == nil {
		t.Fatal("loopback reached")
	}
	resp, err := policy(t, "example.com", cfg, names).Client(ClientOptions{}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if proxied.Load() != 0 || hits.Load() != 1 {
		t.Fatalf("proxy got %d requests, the server %d", proxied.Load(), hits.Load())
	}
}

func TestClassify(t *testing.T) {
	for err, want := range map[error]string{
		nil:                                  "",
		&RefusedError{Rule: "loopback"}:      "refused by egress policy: loopback",
		&StatusError{Code: 401}:              "http 401",
		&StatusError{Code: 503}:              "http 5xx",
		&BodyTooLargeError{Limit: 1}:         "body over limit",
		context.DeadlineExceeded:             "timeout",
		context.Canceled:                     "cancelled",
		&net.DNSError{Err: "no such host"}:   "dns",
		tls.RecordHeaderError{Msg: "x"}:      "tls",
		errors.New("tls: handshake failure"): "tls",
		&net.OpError{Op: "dial", Err: errors.New("connection refused")}: "connection refused",
		&net.OpError{Op: "read", Err: errors.New("reset")}:              "connection failed",
		errors.New("something else"):                                    "request failed",
	} {
		if got := Classify(err); got != want {
			t.Errorf("Classify(%v) = %q, want %q", err, got, want)
		}
	}
}
