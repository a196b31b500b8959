package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// oracle says whether a must never be dialed, computed apart from
// Refused: netip's own predicates on the address and on the IPv4
// address every embedding form carries, plus the ranges netip does not
// know.
func oracle(a netip.Addr) bool {
	a = a.WithZone("")
	extra := []string{"0.0.0.0/8", "100.64.0.0/10", "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4",
		"192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24",
		"fc00::/7", "fec0::/10", "::/96", "::ffff:0:0:0/96", "64:ff9b:1::/48", "100::/64", "2001:db8::/32"}
	bad := func(a netip.Addr) bool {
		if a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsMulticast() ||
			a.IsUnspecified() || a.IsInterfaceLocalMulticast() {
			return true
		}
		for _, p := range extra {
			if netip.MustParsePrefix(p).Contains(a) {
				return true
			}
		}
		return false
	}
	if a.Is4In6() {
		a = a.Unmap()
	}
	if bad(a) {
		return true
	}
	if a.Is6() {
		b := a.As16()
		at := func(i int) netip.Addr { return netip.AddrFrom4([4]byte(b[i : i+4])) }
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
			return bad(at(12))
		case netip.MustParsePrefix("2002::/16").Contains(a):
			return bad(at(2))
		}
	}
	return false
}

func TestRefusedAddresses(t *testing.T) {
	tests := []struct {
		addr, rule string // rule "" = public
	}{
		{"127.0.0.1", "loopback"}, {"127.255.255.254", "loopback"}, {"10.0.0.5", "private address"},
		{"172.16.0.1", "private address"}, {"172.31.255.255", "private address"}, {"192.168.1.1", "private address"},
		{"169.254.169.254", "link-local"}, {"100.64.0.1", "CGNAT"}, {"100.127.255.255", "CGNAT"},
		{"0.0.0.0", "unspecified"}, {"0.1.2.3", "this-network"}, {"224.0.0.1", "multicast"}, {"239.255.255.250", "multicast"},
		{"255.255.255.255", "broadcast"}, {"240.0.0.1", "reserved"}, {"198.18.0.1", "benchmarking"},
		{"192.0.2.1", "documentation"}, {"192.0.0.170", "IETF"},
		{"::1", "loopback"}, {"::", "unspecified"}, {"::ffff:127.0.0.1", "loopback, IPv4-mapped"},
		{"::ffff:7f00:1", "loopback, IPv4-mapped"}, {"0:0:0:0:0:ffff:a00:1", "private address, IPv4-mapped"},
		{"::ffff:169.254.169.254", "link-local, IPv4-mapped"}, {"::127.0.0.1", "loopback, IPv4-compatible"},
		{"::7f00:1", "loopback, IPv4-compatible"}, {"::8.8.8.8", "IPv4-compatible"}, {"::ffff:0:7f00:1", "IPv4-translated"},
		{"64:ff9b::7f00:1", "loopback, via NAT64"}, {"64:ff9b::a9fe:a9fe", "link-local, via NAT64"},
		{"64:ff9b:1::1", "local-use NAT64"}, {"2002:7f00:1::1", "loopback, via 6to4"}, {"2002:a00:1::", "private address, via 6to4"},
		{"2001:0:7f00:1::1", "loopback, via Teredo"}, {"2001:0:808:808::80ff:fffe", "loopback, via Teredo"}, // client ^ffffffff = 127.0.0.1
		{"fc00::1", "unique local"}, {"fd00:ec2::254", "unique local"}, {"fe80::1", "link-local"}, {"fe80::1%eth0", "link-local"},
		{"fec0::1", "site-local"}, {"ff02::1", "multicast"}, {"100::1", "discard"}, {"2001:db8::1", "documentation"},
		{"4000::1", "outside 2000::/3"},
		// Public.
		{"1.1.1.1", ""}, {"8.8.8.8", ""}, {"100.128.0.1", ""}, {"172.32.0.1", ""}, {"::ffff:8.8.8.8", ""},
		{"2606:4700:4700::1111", ""}, {"64:ff9b::808:808", ""}, {"2002:808:808::1", ""},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		got := Refused(a)
		if (got == "") != (tt.rule == "") || !strings.Contains(got, tt.rule) {
			t.Errorf("Refused(%s) = %q, want %q", tt.addr, got, tt.rule)
		}
		if oracle(a) && got == "" {
			t.Errorf("Refused(%s) accepts what the oracle refuses", tt.addr)
		}
	}
}

// recorder is a resolver and a dialer: it answers every name with its
// addresses and records the lookups and dials.
type recorder struct {
	mu      sync.Mutex
	addrs   map[string][]netip.Addr
	lookups []string
	dials   []string
}

func (r *recorder) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups = append(r.lookups, host)
	if a, ok := r.addrs[strings.ToLower(strings.TrimSuffix(host, "."))]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var errDialed = errors.New("dialed (test)")

func (r *recorder) dial(_ context.Context, _, addr string) (net.Conn, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dials = append(r.dials, addr)
	return nil, errDialed
}

func recording(allow string, names map[string][]string) (*Policy, *recorder) {
	r := &recorder{addrs: map[string][]netip.Addr{}}
	for n, as := range names {
		for _, a := range as {
			r.addrs[n] = append(r.addrs[n], netip.MustParseAddr(a))
		}
	}
	al, err := ParseAllow(allow)
	if err != nil {
		panic(err)
	}
	p := New(Options{Resolver: r, Allow: al})
	p.dial = r.dial
	return p, r
}

// The spellings of refused addresses in a URL's host: each is refused by
// CheckURL with its rule, and nothing is dialed at dial time.
var refusedHosts = []struct{ url, rule string }{
	{"https://127.0.0.1/", "loopback"}, {"https://127.0.0.1./", "loopback"}, {"https://127.1/", "numeric host"},
	{"https://2130706433/", "numeric host"}, {"https://0177.0.0.1/", "numeric host"}, {"https://0x7f.0.0.1/", "numeric host"},
	{"https://0x7f000001/", "numeric host"}, {"https://017700000001/", "numeric host"}, {"https://0X7F.1/", "numeric host"},
	{"https://10.1/", "numeric host"}, {"https://[::1]/", "loopback"}, {"https://[::ffff:127.0.0.1]/", "loopback"},
	{"https://[::ffff:7f00:1]/", "loopback"}, {"https://[0:0:0:0:0:ffff:a00:1]/", "private"}, {"https://[::127.0.0.1]/", "IPv4-compatible"},
	{"https://[::7f00:1]/", "IPv4-compatible"}, {"https://[fe80::1%25eth0]/", "zone id"}, {"https://[::1%25lo]/", "zone id"},
	{"https://localhost/", "loopback"}, {"https://LOCALHOST./", "loopback"}, {"https://api.localhost/", "loopback"},
	{"https://169.254.169.254/latest/meta-data/", "link-local"}, {"https://[fd00:ec2::254]/", "unique local"},
	{"https://100.64.0.1/", "CGNAT"}, {"https://[64:ff9b::7f00:1]/", "NAT64"}, {"https://[2002:7f00:1::1]/", "6to4"},
	{"https://0.0.0.0/", "unspecified"}, {"https://[::]/", "unspecified"}, {"https://224.0.0.1/", "multicast"},
	{"https://255.255.255.255/", "broadcast"}, {"https://240.0.0.1/", "reserved"}, {"https://10.0.0.5:8443/", "private"},
	{"https://192.168.1.1/", "private"}, {"https://172.16.0.1/", "private"}, {"https://[fec0::1]/", "site-local"},
	{"https://%31%32%37.0.0.1/", "absolute"}, {"https://１２７.０.０.１/", "not a DNS name"},
	{"http://example.com/", "scheme http"}, {"ftp://example.com/", "scheme"}, {"https://user:pw@example.com/", "user info"},
	{"https://user@example.com/", "user info"}, {"//example.com/", "absolute"}, {"https:///path", "absolute"},
	{"https://exa mple.com/", "absolute"}, {"https://-bad.example/", "not a DNS name"},
}

func TestCheckURLRefusesEverySpelling(t *testing.T) {
	p, r := recording("", nil)
	for _, tt := range refusedHosts {
		_, err := p.CheckURL(tt.url)
		var re *RefusedError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tt.rule) {
			t.Errorf("CheckURL(%s) = %v, want a refusal naming %q", tt.url, err, tt.rule)
			continue
		}
		if !strings.HasPrefix(Classify(err), "refused by egress policy: ") {
			t.Errorf("Classify(%v) = %q", err, Classify(err))
		}
	}
	for _, ok := range []string{"https://happy-otter-123.convex.cloud", "https://1.1.1.1/x", "https://[2606:4700:4700::1111]:8443/",
		"https://Example.COM./path?q=1", "https://a_b.example/"} {
		if _, err := p.CheckURL(ok); err != nil {
			t.Errorf("CheckURL(%s) = %v, want accepted", ok, err)
		}
	}
	if len(r.lookups)+len(r.dials) != 0 {
		t.Fatalf("CheckURL looked up %v and dialed %v", r.lookups, r.dials)
	}
}

func TestCheckURLWithTheAllowList(t *testing.T) {
	p, _ := recording("127.0.0.1, 10.0.0.0/8, convex.internal", nil)
	for _, ok := range []string{"https://127.0.0.1:3210", "http://127.0.0.1:3210", "http://10.2.3.4/", "https://[::ffff:10.0.0.1]/",
		"http://convex.internal:3210/", "http://CONVEX.INTERNAL./"} {
		if _, err := p.CheckURL(ok); err != nil {
			t.Errorf("allowed: CheckURL(%s) = %v", ok, err)
		}
	}
	for _, bad := range []string{"https://127.0.0.2/", "http://example.com/", "https://169.254.169.254/", "http://other.internal/",
		"https://user:pw@127.0.0.1/"} {
		if _, err := p.CheckURL(bad); err == nil {
			t.Errorf("CheckURL(%s) accepted with the allow-list", bad)
		}
	}
}

// Every spelling of a refused address reaches no dial, whether written
// in the URL or behind a name; a name with one refused address among
// public ones is refused whole.
func TestDialNeverReachesARefusedAddress(t *testing.T) {
	names := map[string][]string{
		"loop.example": {"127.0.0.1"}, "meta.example": {"169.254.169.254"}, "mixed.example": {"1.1.1.1", "10.0.0.1"},
		"mapped.example": {"::ffff:127.0.0.1"}, "v6.example": {"::1"}, "ula.example": {"fd00::1"}, "nat64.example": {"64:ff9b::a00:1"},
		"cgnat.example": {"100.100.100.100"}, "zone.example": {"fe80::1%eth0"}, "sixtofour.example": {"2002:c0a8:101::1"},
	}
	p, r := recording("", names)
	hosts := []string{"127.0.0.1", "127.0.0.1.", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "0:0:0:0:0:ffff:a00:1", "::127.0.0.1",
		"fe80::1%eth0", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "0x7f000001", "127.1", "localhost", "localhost."}
	for n := range names {
		hosts = append(hosts, n, strings.ToUpper(n)+".")
	}
	for _, h := range hosts {
		_, err := p.DialContext(context.Background(), "tcp", net.JoinHostPort(h, "443"))
		if err == nil || errors.Is(err, errDialed) {
			t.Errorf("dial %s: %v, want a refusal", h, err)
		}
	}
	if len(r.dials) != 0 {
		t.Fatalf("refused hosts were dialed: %v", r.dials)
	}
}

// A public name is resolved once and dialed by the address checked: no
// second lookup for DNS rebinding to answer.
func TestDialUsesTheCheckedAddress(t *testing.T) {
	p, r := recording("", map[string][]string{"convex.example": {"1.1.1.1", "2606:4700:4700::1111"}})
	_, err := p.DialContext(context.Background(), "tcp", "convex.example:443")
	if !errors.Is(err, errDialed) {
		t.Fatalf("err = %v", err)
	}
	if fmt.Sprint(r.lookups) != "[convex.example]" || fmt.Sprint(r.dials) != "[1.1.1.1:443 [2606:4700:4700::1111]:443]" {
		t.Fatalf("lookups %v, dials %v", r.lookups, r.dials)
	}
}

func TestAllowedNameMayResolvePrivate(t *testing.T) {
	p, r := recording("convex.internal", map[string][]string{"convex.internal": {"10.0.0.7"}, "other.internal": {"10.0.0.8"}})
	if _, err := p.DialContext(context.Background(), "tcp", "convex.internal:3210"); !errors.Is(err, errDialed) {
		t.Fatalf("allowed name: %v", err)
	}
	if _, err := p.DialContext(context.Background(), "tcp", "other.internal:3210"); errors.Is(err, errDialed) || err == nil {
		t.Fatalf("other name: %v", err)
	}
	if fmt.Sprint(r.dials) != "[10.0.0.7:3210]" {
		t.Fatalf("dials %v", r.dials)
	}
}

func TestParseAllow(t *testing.T) {
	a, err := ParseAllow(" 127.0.0.1 , 10.0.0.0/8,Convex.Internal., ::1, [fd00::5], ::ffff:192.168.0.0/112,,")
	if err != nil {
		t.Fatal(err)
	}
	if got := a.String(); got != "convex.internal,127.0.0.1,10.0.0.0/8,::1,fd00::5,192.168.0.0/16" {
		t.Fatalf("String() = %q", got)
	}
	for _, ip := range []string{"127.0.0.1", "::ffff:127.0.0.1", "10.9.9.9", "::1", "192.168.3.4"} {
		if !a.addr(netip.MustParseAddr(ip)) {
			t.Errorf("%s not allowed", ip)
		}
	}
	if a.addr(netip.MustParseAddr("127.0.0.2")) || a.host("convex.external") || !a.host("CONVEX.internal") {
		t.Fatal("allows too much or too little")
	}
	if z, err := ParseAllow(""); err != nil || !z.Empty() {
		t.Fatalf("empty: %v %v", z, err)
	}
	_, err = ParseAllow("127.0.0.1,exa mple.com,10.0.0.0/33,fe80::1%eth0,0x7f.1,http://x.example")
	for _, want := range []string{EnvAllowHosts, `entry 2 "exa mple.com"`, `entry 3 "10.0.0.0/33"`, `entry 4 "fe80::1%eth0"`, `entry 5 "0x7f.1"`, `entry 6 "http://x.example"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("bad entries: %v, want it to name %s", err, want)
		}
	}
}

func TestRefusedErrorNamesTheRule(t *testing.T) {
	p, _ := recording("", map[string][]string{"db.example": {"10.0.0.5"}})
	_, err := p.DialContext(context.Background(), "tcp", "10.0.0.5:443")
	if err == nil || err.Error() != "egress: refused 10.0.0.5 (private address); an operator may allow it with VP_EGRESS_ALLOW_HOSTS" {
		t.Fatalf("err = %v", err)
	}
	_, err = p.DialContext(context.Background(), "tcp", "db.example:443")
	if err == nil || err.Error() != "egress: refused db.example (10.0.0.5) (private address); an operator may allow it with VP_EGRESS_ALLOW_HOSTS" {
		t.Fatalf("err = %v", err)
	}
	if Classify(err) != "refused by egress policy: private address" {
		t.Fatalf("Classify = %q", Classify(err))
	}
}
