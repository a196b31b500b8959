package ratelimit_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// TestLimitPerAddressAndMinute: 300 requests from one address over three
// minutes of a fake clock get exactly the limit each minute; another
// address is counted apart; two limiters on one store (two Lambda
// instances) share the count.
func TestLimitPerAddressAndMinute(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := &clock{t: time.Date(2026, 7, 28, 10, 0, 0, 0, time.UTC)}
		st := b.Open(t, c.Now)
		rule := ratelimit.Rule{Name: "register", PerMinute: 10}
		a := ratelimit.New(ratelimit.Options{Store: st, Now: c.Now})
		other := ratelimit.New(ratelimit.Options{Store: st, Now: c.Now}) // another instance
		ctx := context.Background()
		perMinute := map[int]int{}
		for i := range 300 {
			l := a
			if i%2 == 1 {
				l = other
			}
			d, err := l.Allow(ctx, rule, "203.0.113.7")
			if err != nil {
				t.Fatal(err)
			}
			if d.Allowed {
				perMinute[i/100]++
			} else if d.Limit != 10 || d.RetryAfterSeconds() < 1 || d.RetryAfterSeconds() > 60 {
				t.Fatalf("refusal: %+v", d)
			}
			if i%100 == 99 {
				c.Add(time.Minute)
			} else {
				c.Add(100 * time.Millisecond) // 100 requests in 10 s
			}
		}
		for m := range 3 {
			if perMinute[m] != 10 {
				t.Errorf("minute %d: %d accepted, want 10 (all: %v)", m, perMinute[m], perMinute)
			}
		}
		d, err := a.Allow(ctx, rule, "198.51.100.9")
		if err != nil || !d.Allowed {
			t.Errorf("another address was refused: %+v %v", d, err)
		}
	})
}

// TestConcurrentRequestsDoNotOvershoot: 50 requests at once from one
// address, through two limiters on one store, admit at most the limit.
func TestConcurrentRequestsDoNotOvershoot(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := &clock{t: time.Date(2026, 7, 28, 10, 0, 30, 0, time.UTC)}
		st := b.Open(t, c.Now)
		ls := []*ratelimit.Limiter{ratelimit.New(ratelimit.Options{Store: st, Now: c.Now}), ratelimit.New(ratelimit.Options{Store: st, Now: c.Now})}
		var ok atomic.Int32
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				d, err := ls[i%2].Allow(context.Background(), ratelimit.Rule{Name: "x", PerMinute: 10}, "192.0.2.1")
				if err != nil {
					t.Error(err)
				}
				if d.Allowed {
					ok.Add(1)
				}
			})
		}
		wg.Wait()
		if n := ok.Load(); n > 10 || n == 0 {
			t.Errorf("%d of 50 concurrent requests admitted, want 1..10", n)
		}
	})
}

func TestSourceIgnoresForwardedForUnlessTrusted(t *testing.T) {
	trusted, err := ratelimit.ParsePrefixes("10.0.0.0/8, 192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, remote, xff string
		trusted           []netip.Prefix
		want              string
	}{
		{"no proxy configured: the header is ignored", "203.0.113.5:4000", "1.2.3.4", nil, "203.0.113.5"},
		{"Lambda: RemoteAddr is API Gateway's source IP, no port", "203.0.113.5", "1.2.3.4, 203.0.113.5", nil, "203.0.113.5"},
		{"a trusted proxy: the rightmost untrusted hop", "10.1.2.3:443", "1.2.3.4, 198.51.100.2, 10.9.9.9", trusted, "198.51.100.2"},
		{"an untrusted peer's header is ignored", "198.51.100.2:1", "10.0.0.1", trusted, "198.51.100.2"},
		{"a garbled chain stops at the last trusted hop", "192.0.2.1:1", "junk, 10.0.0.5", trusted, "10.0.0.5"},
		{"IPv4-mapped IPv6 is IPv4", "[::ffff:203.0.113.5]:1", "", nil, "203.0.113.5"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got := ratelimit.Source(r, tc.trusted).String(); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	a := netip.MustParseAddr("2001:db8:1:2:aaaa::1")
	b := netip.MustParseAddr("2001:db8:1:2:bbbb::2")
	c := netip.MustParseAddr("2001:db8:1:3::1")
	if ratelimit.Key(a) != ratelimit.Key(b) || ratelimit.Key(a) == ratelimit.Key(c) {
		t.Errorf("IPv6 keys: %s %s %s, want one per /64", ratelimit.Key(a), ratelimit.Key(b), ratelimit.Key(c))
	}
	if _, err := ratelimit.ParsePrefixes("10.0.0.0/8,nonsense"); err == nil {
		t.Error("a bad trusted proxy was accepted")
	}
}

// TestWrapRefusesWith429: past the limit the wrapped handler is not
// called, and the answer is a 429 with Retry-After and the limit named.
func TestWrapRefusesWith429(t *testing.T) {
	var calls atomic.Int32
	l := ratelimit.New(ratelimit.Options{Rules: ratelimit.Rules{Health: ratelimit.Rule{PerMinute: 3}}})
	h := l.Wrap(l.Rules().Health, "health checks", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { calls.Add(1) }))
	var last *httptest.ResponseRecorder
	for range 5 {
		last = httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/health", nil)
		r.RemoteAddr = "203.0.113.9:5555"
		h.ServeHTTP(last, r)
	}
	if calls.Load() != 3 || last.Code != 429 || last.Header().Get("Retry-After") == "" {
		t.Fatalf("calls %d, last %d %q", calls.Load(), last.Code, last.Header().Get("Retry-After"))
	}
	if body := last.Body.String(); !contains(body, "rate_limited") || !contains(body, "limit is 3 a minute") {
		t.Errorf("body %s", body)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestShardedRules: a sharded rule admits exactly its limit to sequential
// requests, overshoots by less than its shards under concurrency, and
// under a limit not reached admits every one of 40 concurrent requests of
// one address (none is refused for contention alone).
func TestShardedRules(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		c := &clock{t: time.Date(2026, 7, 28, 10, 0, 5, 0, time.UTC)}
		st := b.Open(t, c.Now)
		l := ratelimit.New(ratelimit.Options{Store: st, Now: c.Now})
		ctx := context.Background()
		rule := ratelimit.Rule{Name: "token", PerMinute: 10, Shards: 4}
		ok := 0
		for range 30 {
			if d, err := l.Allow(ctx, rule, "192.0.2.7"); err != nil {
				t.Fatal(err)
			} else if d.Allowed {
				ok++
			}
		}
		if ok != 10 {
			t.Errorf("sequential: %d admitted, want 10", ok)
		}
		concurrent := func(rule ratelimit.Rule, addr string, n int) int32 {
			var admitted atomic.Int32
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					d, err := l.Allow(ctx, rule, addr)
					if err != nil {
						t.Error(err)
					}
					if d.Allowed {
						admitted.Add(1)
					}
				})
			}
			wg.Wait()
			return admitted.Load()
		}
		if n := concurrent(rule, "192.0.2.8", 50); n < 1 || n > 13 {
			t.Errorf("50 concurrent: %d admitted, want 1..13", n)
		}
		for _, shards := range []int{1, 8} {
			if n := concurrent(ratelimit.Rule{Name: "roomy", PerMinute: 1000, Shards: shards}, "192.0.2.9", 40); n != 40 {
				t.Errorf("%d shards, 40 concurrent under the limit: %d admitted", shards, n)
			}
			c.Add(time.Minute)
		}
	})
}
