package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// EnvAllowHosts names the operator's allow-list: comma-separated host
// names, IP addresses or CIDRs that may be reached although not public,
// and over http. Only the composition roots read it.
const EnvAllowHosts = "VP_EGRESS_ALLOW_HOSTS"

// MaxAllowEntries bounds the allow-list.
const MaxAllowEntries = 256

// Allow is the operator's allow-list (ParseAllow). The zero Allow allows
// nothing.
type Allow struct {
	hosts    []string
	prefixes []netip.Prefix
}

// ParseAllow parses a comma-separated list of host names ("convex.internal"),
// IP addresses ("127.0.0.1", "::1") and CIDRs ("10.0.0.0/8"). Every bad
// entry is reported, by position and text.
func ParseAllow(s string) (Allow, error) {
	var a Allow
	var errs []error
	n := 0
	for i, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if n++; n > MaxAllowEntries {
			errs = append(errs, fmt.Errorf("%s: more than %d entries", EnvAllowHosts, MaxAllowEntries))
			break
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			if p.Addr().Zone() != "" {
				errs = append(errs, fmt.Errorf("%s: entry %d %q: a CIDR has no zone id", EnvAllowHosts, i+1, e))
				continue
			}
			if p.Addr().Is4In6() && p.Bits() >= 96 {
				p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
			}
			a.prefixes = append(a.prefixes, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			if ip.Zone() != "" {
				errs = append(errs, fmt.Errorf("%s: entry %d %q: an address with a zone id cannot be allowed", EnvAllowHosts, i+1, e))
				continue
			}
			ip = ip.Unmap()
			a.prefixes = append(a.prefixes, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		if strings.ContainsAny(e, "/:") || !validHostname(e) || numericHost(e) {
			errs = append(errs, fmt.Errorf("%s: entry %d %q is not a host name, an IP address or a CIDR (e.g. convex.internal, 127.0.0.1, 10.0.0.0/8)", EnvAllowHosts, i+1, e))
			continue
		}
		if h := normHost(e); !slices.Contains(a.hosts, h) {
			a.hosts = append(a.hosts, h)
		}
	}
	if len(errs) > 0 {
		return Allow{}, errors.Join(errs...)
	}
	return a, nil
}

// Empty reports whether a allows nothing.
func (a Allow) Empty() bool { return len(a.hosts) == 0 && len(a.prefixes) == 0 }

// String lists the entries, comma-separated.
func (a Allow) String() string {
	out := slices.Clone(a.hosts)
	for _, p := range a.prefixes {
		if p.IsSingleIP() {
			out = append(out, p.Addr().String())
		} else {
			out = append(out, p.String())
		}
	}
	return strings.Join(out, ",")
}

func normHost(h string) string { return strings.ToLower(strings.TrimSuffix(h, ".")) }

// host reports whether the host of a URL (a name or an IP literal) is
// allowed by name or, for a literal, by CIDR.
func (a Allow) host(h string) bool {
	if ip, ok := literal(h); ok {
		return a.addr(ip)
	}
	return slices.Contains(a.hosts, normHost(h))
}

// addr reports whether ip is in an allowed CIDR.
func (a Allow) addr(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	for _, p := range a.prefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// literal parses an IP literal host ("10.0.0.1", "[::1]", "::1",
// "127.0.0.1."), keeping a zone so that it can be refused.
func literal(h string) (netip.Addr, bool) {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	ip, err := netip.ParseAddr(strings.TrimSuffix(h, "."))
	return ip, err == nil
}
