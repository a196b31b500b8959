// Package ratelimit bounds how often one source address may call an
// unauthenticated endpoint: a fixed one-minute window per rule and address,
// counted in the store (one conditional counter item per rule, address and
// minute, with a TTL) so that the limit holds across Lambda instances and
// works the same on SQLite and DynamoDB. Without a store it counts in this
// process only.
//
// The source address is the peer of the connection — on Lambda, the source
// IP API Gateway reports (aws-lambda-go-api-proxy puts it in RemoteAddr) —
// never a header a client can write, unless the operator named the proxies
// in front (Options.TrustedProxies). IPv6 addresses count per /64, the block
// one subscriber usually holds.
package ratelimit

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Rule is one limit: at most PerMinute requests a minute from one address.
// Name keys its counters; rules with the same name share them.
//
// Shards spreads the count of one address over that many counter items,
// so that many concurrent requests from one address (a hosted client
// refreshing its users' tokens) do not all contend for one conditional
// write; the price is that concurrent requests may overshoot the limit by
// up to Shards-1. Zero or one: a single counter, exact under any
// concurrency — the setting of the limits that guard something.
type Rule struct {
	Name      string
	PerMinute int
	Shards    int
}

// Rules are the limits of the unauthenticated endpoints. Registration and
// the consent POST (where a token is pasted) are the tight ones; the token
// endpoint is looser because hosted MCP clients refresh every user's tokens
// from a few addresses of their own.
type Rules struct {
	Register, Consent, Authorize, Token, Clerk, Discovery, Health, Download Rule
	// AuthFailure counts an address's failed bearer checks (/mcp, /admin):
	// over it they are answered 429. A valid token is never counted.
	AuthFailure Rule
	// Webhook bounds the signed webhook deliveries of one address, valid
	// or not (generous: GitHub sends from a few addresses); WebhookBad the
	// refused ones (unsigned, or a signature that does not verify), per
	// address and hook: over it the body is not read at all.
	Webhook, WebhookBad Rule
}

// DefaultRules are the limits used where Options.Rules leaves one unset.
func DefaultRules() Rules {
	return Rules{
		Register:  Rule{Name: "register", PerMinute: 10},
		Consent:   Rule{Name: "consent", PerMinute: 10},
		Authorize: Rule{Name: "authorize", PerMinute: 60, Shards: 4},
		Token:     Rule{Name: "token", PerMinute: 300, Shards: 8},
		Clerk:     Rule{Name: "clerk", PerMinute: 30},
		Discovery: Rule{Name: "discovery", PerMinute: 120, Shards: 8},
		Health:    Rule{Name: "health", PerMinute: 120, Shards: 8},
		Download:  Rule{Name: "download", PerMinute: 60, Shards: 4},
		// Failures: exact counters, they guard something.
		AuthFailure: Rule{Name: "auth-failure", PerMinute: 30},
		Webhook:     Rule{Name: "webhook", PerMinute: 600, Shards: 8},
		WebhookBad:  Rule{Name: "webhook-bad", PerMinute: 10},
	}
}

// withDefaults fills the unset rules of r from DefaultRules.
func (r Rules) withDefaults() Rules {
	d := DefaultRules()
	for _, p := range []struct{ got, def *Rule }{{&r.Register, &d.Register}, {&r.Consent, &d.Consent}, {&r.Authorize, &d.Authorize},
		{&r.Token, &d.Token}, {&r.Clerk, &d.Clerk}, {&r.Discovery, &d.Discovery}, {&r.Health, &d.Health}, {&r.Download, &d.Download},
		{&r.AuthFailure, &d.AuthFailure}, {&r.Webhook, &d.Webhook}, {&r.WebhookBad, &d.WebhookBad}} {
		if p.got.Name == "" {
			p.got.Name = p.def.Name
		}
		if p.got.PerMinute <= 0 {
			p.got.PerMinute = p.def.PerMinute
		}
		if p.got.Shards <= 0 {
			p.got.Shards = p.def.Shards
		}
	}
	return r
}

// window is the length of one counting window.
const window = time.Minute

// Options configures New.
type Options struct {
	// Store keeps the counters; nil counts in this process only.
	Store store.Store
	Now   func() time.Time
	// TrustedProxies are the proxies whose X-Forwarded-For is believed:
	// the source is the rightmost address of that header not in these
	// prefixes. Empty (the default): the header is ignored.
	TrustedProxies []netip.Prefix
	Logger         *slog.Logger
	// Rules overrides the default limits (a zero field keeps its default).
	Rules Rules
}

// Limiter counts requests per rule and source address.
type Limiter struct {
	st      store.Store
	now     func() time.Time
	trusted []netip.Prefix
	log     *slog.Logger
	rules   Rules
	mem     *memCounts
}

// New returns a Limiter.
func New(o Options) *Limiter {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	l := &Limiter{st: o.Store, now: o.Now, trusted: o.TrustedProxies, log: o.Logger, rules: o.Rules.withDefaults()}
	if l.st == nil {
		l.mem = &memCounts{n: map[string]memCount{}}
	}
	return l
}

// Decision is the outcome of Allow.
type Decision struct {
	Allowed bool
	// Limit is the rule's requests per minute.
	Limit int
	// RetryAfter is how long until the window ends (when refused).
	RetryAfter time.Duration
}

// RetryAfterSeconds is RetryAfter rounded up, at least 1: retrying early
// fails again.
func (d Decision) RetryAfterSeconds() int {
	return max(1, int((d.RetryAfter+time.Second-1)/time.Second))
}

// Message says what was refused, naming the limit.
func (d Decision) Message(what string) string {
	return fmt.Sprintf("too many %s from your address: the limit is %d a minute; retry after %d seconds", what, d.Limit, d.RetryAfterSeconds())
}

// Rules returns the limits in force.
func (l *Limiter) Rules() Rules { return l.rules }

// Allow counts one request from addr under rule. A request over the limit
// is not counted. The error is a store failure; the decision then allows
// (availability first: the endpoints behind a limiter check their callers
// themselves).
func (l *Limiter) Allow(ctx context.Context, rule Rule, addr string) (Decision, error) {
	now := l.now()
	start := now.Truncate(window)
	d := Decision{Allowed: true, Limit: max(1, rule.PerMinute), RetryAfter: start.Add(window).Sub(now)}
	key := rule.Name + "#" + addr
	if l.mem != nil {
		d.Allowed = l.mem.incr(key, start, d.Limit)
		return d, nil
	}
	shards := max(1, rule.Shards)
	pk := counters.PK("", store.Primary, table.Values{"rule": rule.Name, "addr": addr})
	minute := strconv.FormatInt(start.Unix(), 10)
	err := table.Conflicts{Op: "ratelimit", Max: maxAttempts,
		// Another request of the same address counted meanwhile: wait a
		// little, longer each time, at random so that the losers spread.
		Pause: func(ctx context.Context, try int) error {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Duration(1+rand.IntN(2<<min(try-1, 5))) * time.Millisecond):
				return nil
			}
		},
		// A counter this contended is a flood from one address.
		Exhausted: func() error { d.Allowed = false; return nil },
	}.Retry(ctx, func() error {
		rows, err := l.st.Query(ctx, store.Query{PK: pk, SKPrefix: minute + "#", Limit: shards + 1})
		if err != nil {
			return vp.Wrap("ratelimit", vp.KindUnavailable, err)
		}
		total, held := 0, make(map[string]store.Item, len(rows))
		for _, it := range rows {
			var n int
			if err := json.Unmarshal(it.Data, &n); err != nil {
				return vp.Wrap("ratelimit", vp.KindInternal, err)
			}
			total += n
			held[it.Key.SK] = it
		}
		if total >= d.Limit {
			d.Allowed = false
			return nil
		}
		c := counter{Rule: rule.Name, Addr: addr, Minute: start.Unix(), Shard: rand.IntN(shards), expires: start.Add(2 * window).Unix()}
		cond := store.IfNotExists
		if it, ok := held[c.values()["slot"]]; ok {
			_ = json.Unmarshal(it.Data, &c.N)
			cond = store.IfVersion(it.Version)
		}
		c.N++
		item, err := counters.Item("ratelimit", "", c)
		if err != nil {
			return err
		}
		// A lost write stays a condition failure through the wrap.
		return vp.Wrap("ratelimit", vp.KindUnavailable, l.st.Write(ctx, store.Put(item, cond)))
	})
	return d, err
}

// Exhausted reports, without counting, whether addr has used up rule in
// this window (Allowed false then): a check before work that only a
// failure would count, such as reading a body whose signature may not
// verify. The error is a store failure; the decision then allows.
func (l *Limiter) Exhausted(ctx context.Context, rule Rule, addr string) (Decision, error) {
	now := l.now()
	start := now.Truncate(window)
	d := Decision{Allowed: true, Limit: max(1, rule.PerMinute), RetryAfter: start.Add(window).Sub(now)}
	if l.mem != nil {
		d.Allowed = l.mem.count(rule.Name+"#"+addr, start) < d.Limit
		return d, nil
	}
	pk := counters.PK("", store.Primary, table.Values{"rule": rule.Name, "addr": addr})
	rows, err := l.st.Query(ctx, store.Query{PK: pk, SKPrefix: strconv.FormatInt(start.Unix(), 10) + "#", Limit: max(1, rule.Shards) + 1})
	if err != nil {
		return d, vp.Wrap("ratelimit", vp.KindUnavailable, err)
	}
	total := 0
	for _, it := range rows {
		var n int
		if err := json.Unmarshal(it.Data, &n); err != nil {
			return d, vp.Wrap("ratelimit", vp.KindInternal, err)
		}
		total += n
	}
	d.Allowed = total < d.Limit
	return d, nil
}

// maxAttempts bounds the conditional writes one request tries.
const maxAttempts = 24

// Check is Allow for an HTTP request: the rule, counted against the
// request's source. A store failure is logged and allowed.
func (l *Limiter) Check(r *http.Request, rule Rule) Decision {
	d, err := l.Allow(r.Context(), rule, Key(l.Source(r)))
	if err != nil {
		l.log.WarnContext(r.Context(), "rate limit not checked", "rule", rule.Name, "err", err)
	}
	if !d.Allowed {
		l.log.InfoContext(r.Context(), "rate limited", "rule", rule.Name, "limit", d.Limit, "path", r.URL.Path)
	}
	return d
}

// Source is the request's source address: the peer, or with trusted
// proxies in front the rightmost X-Forwarded-For entry that is not one of
// them. Unparsable: the zero Addr.
func (l *Limiter) Source(r *http.Request) netip.Addr { return Source(r, l.trusted) }

// Source is the request's source address given the trusted proxies.
func Source(r *http.Request, trusted []netip.Prefix) netip.Addr {
	peer := parseAddr(r.RemoteAddr)
	if !peer.IsValid() || !inAny(peer, trusted) {
		return peer
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a := parseAddr(strings.TrimSpace(hops[i]))
		if !a.IsValid() {
			return peer // a garbled chain: the last proxy we trust is the source
		}
		if !inAny(a, trusted) {
			return a
		}
		peer = a
	}
	return peer
}

// parseAddr reads "ip", "ip:port" or "[ip]:port".
func parseAddr(s string) netip.Addr {
	if host, _, err := net.SplitHostPort(s); err == nil {
		s = host
	}
	a, err := netip.ParseAddr(strings.Trim(s, "[]"))
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

func inAny(a netip.Addr, ps []netip.Prefix) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Key is the counting key of an address: an IPv4 address, an IPv6 /64.
func Key(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is4():
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}

// ParsePrefixes reads a comma-separated list of CIDRs or addresses (the
// operator's trusted proxies).
func ParsePrefixes(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither an address nor a CIDR", f)
		}
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Refuse writes the 429 of a refused request: Retry-After and a JSON body
// {"error": code, "error_description": msg}, the shape OAuth clients read.
func Refuse(w http.ResponseWriter, d Decision, code, msg string) {
	w.Header().Set("Retry-After", strconv.Itoa(d.RetryAfterSeconds()))
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusTooManyRequests)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": msg})
}

// Wrap limits next under rule, refusing with a 429 naming what.
func (l *Limiter) Wrap(rule Rule, what string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := l.Check(r, rule); !d.Allowed {
			Refuse(w, d, "rate_limited", d.Message(what))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ---- counters ----

// counter is one shard of a rule's count for one address and minute.
type counter struct {
	Rule, Addr string
	Minute     int64
	Shard      int
	N          int
	expires    int64
}

func (c counter) values() table.Values {
	return table.Values{"rule": c.Rule, "addr": c.Addr, "slot": strconv.FormatInt(c.Minute, 10) + "#" + strconv.Itoa(c.Shard)}
}

var counters = table.Declare(table.Schema[counter]{
	Entity: "rate-limit counter",
	Global: true,
	Primary: table.Key{PK: "RATE#{rule}#{addr}", SK: "{slot}", Pattern: "requests of one source address in one minute",
		Note: "conditional counter; `<slot>` is `<unix minute start>#<shard>` (one shard for the strict rules); TTL 2 minutes"},
	Fields:  func(c counter) table.Values { return c.values() },
	Encode:  func(c counter) ([]byte, error) { return json.Marshal(c.N) },
	Expires: func(c counter) int64 { return c.expires },
})

// Tables describes this package's keys for KEYS.md.
func Tables() []table.Doc { return []table.Doc{counters.Doc()} }

// memCounts is the in-process fallback.
type memCounts struct {
	mu sync.Mutex
	n  map[string]memCount
}

type memCount struct {
	start time.Time
	n     int
}

func (m *memCounts) count(key string, start time.Time) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c := m.n[key]; c.start.Equal(start) {
		return c.n
	}
	return 0
}

func (m *memCounts) incr(key string, start time.Time, limit int) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.n) > 100_000 { // bound the map: drop windows that have ended
		for k, c := range m.n {
			if c.start.Before(start) {
				delete(m.n, k)
			}
		}
	}
	c := m.n[key]
	if !c.start.Equal(start) {
		c = memCount{start: start}
	}
	if c.n >= limit {
		return false
	}
	c.n++
	m.n[key] = c
	return true
}
