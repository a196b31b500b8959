package egress

import (
	"context"
	"net"
	"net/netip"
	"net/url"
	"testing"
)

// fuzzResolver answers every name with the addresses spelled by its
// bytes: a length byte (4 or 16, by parity) then the address.
type fuzzResolver struct{ raw []byte }

func (f fuzzResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	var out []netip.Addr
	b := f.raw
	for len(b) > 0 && len(out) < 8 {
		n := 4
		if b[0]%2 == 1 {
			n = 16
		}
		b = b[1:]
		if len(b) < n {
			break
		}
		if n == 4 {
			out = append(out, netip.AddrFrom4([4]byte(b[:4])))
		} else {
			out = append(out, netip.AddrFrom16([16]byte(b[:16])))
		}
		b = b[n:]
	}
	return out, nil
}

// FuzzCheckDial: whatever the host's spelling and whatever its name
// resolves to, no address the oracle refuses is ever dialed, and CheckURL
// never accepts a literal the oracle refuses.
func FuzzCheckDial(f *testing.F) {
	for _, h := range refusedHosts {
		if u, err := url.Parse(h.url); err == nil {
			f.Add(u.Host, []byte{0, 127, 0, 0, 1})
		}
	}
	for _, h := range []string{"example.com", "1.1.1.1", "[2606:4700:4700::1111]", "[::ffff:a00:1]", "[64:ff9b::7f00:1]",
		"[2002:a9fe:a9fe::]", "0x7f.1", "2130706433", "127.1", "localhost.", "[fe80::1%25en0]", "EXAMPLE.com."} {
		f.Add(h, []byte{0, 8, 8, 8, 8, 1, 0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1})
		f.Add(h, []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 169, 254})
		f.Add(h, []byte{0, 1, 1, 1, 1})
	}
	f.Fuzz(func(t *testing.T, host string, raw []byte) {
		var dialed []string
		p := New(Options{Resolver: fuzzResolver{raw}})
		p.dial = func(_ context.Context, _, addr string) (net.Conn, error) {
			dialed = append(dialed, addr)
			return nil, errDialed
		}
		_, _ = p.DialContext(context.Background(), "tcp", net.JoinHostPort(stripBrackets(host), "443"))
		_, _ = p.DialContext(context.Background(), "tcp", host)
		for _, d := range dialed {
			h, _, err := net.SplitHostPort(d)
			a, perr := netip.ParseAddr(h)
			if err != nil || perr != nil {
				t.Fatalf("dialed %q: not an address", d)
			}
			if oracle(a) || Refused(a) != "" {
				t.Fatalf("host %q resolving to %v: dialed the refused %s", host, fuzzResolver{raw}, a)
			}
		}
		if u, err := p.CheckURL("https://" + host + "/"); err == nil {
			a, ok := literal(u.Hostname())
			if ok && (oracle(a) || a.Zone() != "") {
				t.Fatalf("CheckURL accepted the literal %s", a)
			}
			if !ok && (localhostName(u.Hostname()) || numericHost(u.Hostname())) {
				t.Fatalf("CheckURL accepted the host %q", u.Hostname())
			}
		}
	})
}

func stripBrackets(h string) string {
	if len(h) > 1 && h[0] == '[' && h[len(h)-1] == ']' {
		return h[1 : len(h)-1]
	}
	return h
}
