package webhooks_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/webhooks"
	"github.com/vantagepeers/vantagepeers/webhooks/webhookstest"
)

// from is a delivery of body to tenant a from addr, as hook hook, signed
// under secret (none when ""); its body counts what the handler reads.
func from(addr, hook, secret string, body []byte) (*http.Request, *countingReader) {
	r := webhookstest.Request("/webhooks/github/a", secret, "issues", fmt.Sprintf("d-%s-%d", hook, len(body)), body)
	if secret == "forged" {
		r.Header.Set("X-Hub-Signature-256", "sha256="+strings.Repeat("ab", 32))
	}
	cr := &countingReader{r: bytes.NewReader(body)}
	r.Body = io.NopCloser(cr)
	r.RemoteAddr = addr + ":40000"
	if hook != "" {
		r.Header.Set("X-GitHub-Hook-ID", hook)
	}
	return r, cr
}

// TestForgedDeliveriesAreLimitedPerAddress: an outsider posting 1 MiB
// bodies under a well-formed but forged signature has them read and
// hashed 10 times a minute per address and hook; past that it is
// answered 429 (naming the limit, with Retry-After) before its body is
// read. Unsigned requests are refused unread, and limited too. A delivery
// signed with the tenant's secret is never refused for that noise: not
// from another address, and not from the same address (GitHub's, shared
// by every hook) under its own hook, whose counter the outsider cannot
// reach.
func TestForgedDeliveriesAreLimitedPerAddress(t *testing.T) {
	f := newFixture(t, nil)
	big := append([]byte(`{"action":"opened","x":"`), bytes.Repeat([]byte("a"), 1<<20)...)
	big = append(big, `"}`...)
	const attacker, github = "203.0.113.9", "192.30.252.1"
	var read int64
	statuses := map[int]int{}
	for range 40 {
		r, cr := from(attacker, "666", "forged", big)
		resp := f.do(t, r)
		statuses[resp.status]++
		read += cr.n
		if resp.status == http.StatusTooManyRequests {
			if resp.header.Get("Retry-After") == "" || !strings.Contains(resp.raw, "10 a minute") {
				t.Fatalf("a 429 without Retry-After or the limit: %v %s", resp.header, resp.raw)
			}
			if cr.n != 0 {
				t.Fatalf("a refused forged delivery had %d bytes of its body read", cr.n)
			}
		}
	}
	if statuses[http.StatusUnauthorized] != 10 || statuses[http.StatusTooManyRequests] != 30 {
		t.Fatalf("40 forged deliveries from one address: %v; want 10 refused after reading, 30 limited unread", statuses)
	}
	if read > 11<<20 {
		t.Fatalf("%d MiB of forged bodies read, want at most 10 MiB", read>>20)
	}
	// Unsigned: refused unread, and limited.
	unsigned := map[int]int{}
	for range 20 {
		r, cr := from(attacker, "", "", big)
		unsigned[f.do(t, r).status]++
		if cr.n != 0 {
			t.Fatalf("an unsigned request had %d bytes read", cr.n)
		}
	}
	if unsigned[http.StatusTooManyRequests] == 0 || unsigned[http.StatusUnauthorized] > 10 {
		t.Fatalf("20 unsigned requests: %v, want at most 10 answered 401, the rest 429", unsigned)
	}

	// The noise through GitHub's own address (an outsider's hook pointed
	// at us) does not cost the tenant's hook a delivery.
	for range 15 {
		r, _ := from(github, "666", "forged", issueOpened)
		f.do(t, r)
	}
	for _, c := range []struct{ addr, hook string }{{github, "4242"}, {"192.30.252.2", "4242"}, {attacker, "4242"}} {
		r, _ := from(c.addr, c.hook, secretA, issueOpened)
		if resp := f.do(t, r); resp.status != http.StatusAccepted {
			t.Errorf("a valid delivery from %s as hook %s: %d %s, want 202", c.addr, c.hook, resp.status, resp.raw)
		}
	}
	if n := len(f.disp.deliveries()); n != 3 {
		t.Fatalf("%d deliveries dispatched, want the 3 valid ones", n)
	}
}

// TestSignedDeliveriesHaveAGenerousLimitPerAddress: signed requests of
// one address, whatever their hook (an outsider varying its hook id to
// escape the strict limit), stop being read at the generous per-address
// limit.
func TestSignedDeliveriesHaveAGenerousLimitPerAddress(t *testing.T) {
	lim := ratelimit.New(ratelimit.Options{Rules: ratelimit.Rules{Webhook: ratelimit.Rule{PerMinute: 25}}})
	f := newFixture(t, func(o *webhooks.Options) { o.Limiter = lim })
	read := 0
	for k := range 40 {
		r, cr := from("203.0.113.10", fmt.Sprint(1000+k), "forged", issueOpened)
		if f.do(t, r).status != http.StatusTooManyRequests && cr.n > 0 {
			read++
		}
	}
	if read != 25 {
		t.Fatalf("%d of 40 signed requests with varying hook ids were read, want 25 (the per-address limit)", read)
	}
}
