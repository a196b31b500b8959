package egress

import (
	"net/netip"
	"strings"
)

// The address rules. A remote that a tenant, an agent or an OAuth client
// names must be a public address: every range below reaches something
// inside the server's network (its loopback, the cloud's metadata
// service, the VPC, the carrier's NAT) or nothing at all. Embedded forms
// (IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo) are judged by the
// IPv4 address they carry, since a host that routes them reaches it.

type rule struct {
	p      netip.Prefix
	reason string
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

var v4Rules = []rule{
	{mustPrefix("0.0.0.0/32"), "unspecified address"},
	{mustPrefix("0.0.0.0/8"), "this-network address (0.0.0.0/8)"},
	{mustPrefix("10.0.0.0/8"), "private address"},
	{mustPrefix("100.64.0.0/10"), "shared CGNAT address (100.64.0.0/10)"},
	{mustPrefix("127.0.0.0/8"), "loopback"},
	{mustPrefix("169.254.0.0/16"), "link-local"},
	{mustPrefix("172.16.0.0/12"), "private address"},
	{mustPrefix("192.0.0.0/24"), "IETF protocol assignment (192.0.0.0/24)"},
	{mustPrefix("192.0.2.0/24"), "documentation address"},
	{mustPrefix("192.88.99.0/24"), "6to4 relay anycast (192.88.99.0/24)"},
	{mustPrefix("192.168.0.0/16"), "private address"},
	{mustPrefix("198.18.0.0/15"), "benchmarking address (198.18.0.0/15)"},
	{mustPrefix("198.51.100.0/24"), "documentation address"},
	{mustPrefix("203.0.113.0/24"), "documentation address"},
	{mustPrefix("224.0.0.0/4"), "multicast"},
	{mustPrefix("255.255.255.255/32"), "broadcast"},
	{mustPrefix("240.0.0.0/4"), "reserved address (240.0.0.0/4)"},
}

var (
	v6Unspecified = mustPrefix("::/128")
	v6Loopback    = mustPrefix("::1/128")
	v6Compatible  = mustPrefix("::/96")
	v6Translated  = mustPrefix("::ffff:0:0:0/96")
	v6NAT64       = mustPrefix("64:ff9b::/96")
	v6Teredo      = mustPrefix("2001::/32")
	v66to4        = mustPrefix("2002::/16")
	v6Global      = mustPrefix("2000::/3")
)

var v6Rules = []rule{
	{mustPrefix("64:ff9b:1::/48"), "local-use NAT64 (64:ff9b:1::/48)"},
	{mustPrefix("100::/64"), "discard-only address (100::/64)"},
	{mustPrefix("2001:db8::/32"), "documentation address"},
	{mustPrefix("2001:10::/28"), "ORCHID address (2001:10::/28)"},
	{mustPrefix("2001:20::/28"), "ORCHIDv2 address (2001:20::/28)"},
	{mustPrefix("fc00::/7"), "IPv6 unique local address (fc00::/7)"},
	{mustPrefix("fe80::/10"), "link-local"},
	{mustPrefix("fec0::/10"), "IPv6 site-local (fec0::/10)"},
	{mustPrefix("ff00::/8"), "multicast"},
}

// Refused reports why a is not a public address ("" when it is one). A
// zone makes no address public.
func Refused(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid address"
	}
	if a.Zone() != "" {
		if r := Refused(a.WithZone("")); r != "" {
			return r
		}
		return "address with a zone id"
	}
	if a.Is4In6() {
		if r := refused4(a.Unmap()); r != "" {
			return r + ", IPv4-mapped"
		}
		return ""
	}
	if a.Is4() {
		return refused4(a)
	}
	return refused6(a)
}

func refused4(a netip.Addr) string {
	for _, r := range v4Rules {
		if r.p.Contains(a) {
			return r.reason
		}
	}
	return ""
}

func refused6(a netip.Addr) string {
	b := a.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{b[i], b[i+1], b[i+2], b[i+3]}) }
	switch {
	case v6Unspecified.Contains(a):
		return "unspecified address"
	case v6Loopback.Contains(a):
		return "loopback"
	case v6Compatible.Contains(a):
		// Deprecated (RFC 4291): nothing public is reached this way.
		if r := refused4(v4(12)); r != "" {
			return r + ", IPv4-compatible"
		}
		return "IPv4-compatible IPv6 address (deprecated)"
	case v6Translated.Contains(a):
		if r := refused4(v4(12)); r != "" {
			return r + ", IPv4-translated"
		}
		return "IPv4-translated IPv6 address (::ffff:0:0:0/96)"
	case v6NAT64.Contains(a):
		if r := refused4(v4(12)); r != "" {
			return r + ", via NAT64"
		}
		return ""
	case v66to4.Contains(a):
		if r := refused4(v4(2)); r != "" {
			return r + ", via 6to4"
		}
		return ""
	case v6Teredo.Contains(a):
		// The server's address, then the client's, obfuscated.
		if r := refused4(v4(4)); r != "" {
			return r + ", via Teredo"
		}
		c := v4(12).As4()
		if r := refused4(netip.AddrFrom4([4]byte{^c[0], ^c[1], ^c[2], ^c[3]})); r != "" {
			return r + ", via Teredo"
		}
		return ""
	}
	for _, r := range v6Rules {
		if r.p.Contains(a) {
			return r.reason
		}
	}
	if !v6Global.Contains(a) {
		return "reserved IPv6 address (outside 2000::/3)"
	}
	return ""
}

// numericHost reports whether host (no IP literal) looks like a number
// rather than a name: the forms inet_aton and some resolvers read as an
// IPv4 address (2130706433, 0177.0.0.1, 0x7f.1, 127.1). No top-level
// domain is numeric, so no real name is refused with them.
func numericHost(host string) bool {
	host = strings.TrimSuffix(host, ".")
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if l := strings.ToLower(last); strings.HasPrefix(l, "0x") {
		return true
	}
	for _, c := range last {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validHostname reports whether host is an ASCII DNS name (letters,
// digits, hyphens and underscores in labels of at most 63 bytes, 253 in
// all, one trailing dot allowed). Non-ASCII names must be given in their
// punycode (xn--) form, so that what is checked is what is resolved.
func validHostname(host string) bool {
	host = strings.TrimSuffix(host, ".")
	if host == "" || len(host) > 253 {
		return false
	}
	for label := range strings.SplitSeq(host, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// localhostName: RFC 6761 names that always mean this machine.
func localhostName(host string) bool {
	h := strings.ToLower(strings.TrimSuffix(host, "."))
	return h == "localhost" || strings.HasSuffix(h, ".localhost")
}
