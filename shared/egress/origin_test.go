package egress_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/egress"
)

// TestOrigin: two URLs are the same origin when their scheme, host and
// port are, whatever the spelling (case, default port, trailing dot,
// path); anything else is another origin, and a URL without a host has
// none.
func TestOrigin(t *testing.T) {
	for raw, want := range map[string]string{
		"https://happy-otter-123.convex.cloud":                 "https://happy-otter-123.convex.cloud",
		"HTTPS://Happy-Otter-123.Convex.Cloud./api/x?cursor=1": "https://happy-otter-123.convex.cloud",
		"https://happy-otter-123.convex.cloud:443/":            "https://happy-otter-123.convex.cloud",
		"http://127.0.0.1:8080/x":                              "http://127.0.0.1:8080",
		"http://127.0.0.1:08080":                               "http://127.0.0.1:8080",
		"http://127.0.0.1":                                     "http://127.0.0.1",
		"https://[::1]:8443":                                   "https://[::1]:8443",
	} {
		got, err := egress.Origin(raw)
		if err != nil || got != want {
			t.Errorf("Origin(%q) = %q, %v; want %q", raw, got, err, want)
		}
	}
	for _, bad := range []string{"", "happy-otter-123.convex.cloud", "ftp://x.example", "https://", "https://u:p@x.example", "https://x.example:0", "https://x.example:99999", "/relative"} {
		if got, err := egress.Origin(bad); err == nil {
			t.Errorf("Origin(%q) = %q, want an error", bad, got)
		}
	}
	a, _ := egress.Origin("https://happy-otter-123.convex.cloud")
	for _, other := range []string{"http://happy-otter-123.convex.cloud", "https://happy-otter-124.convex.cloud", "https://happy-otter-123.convex.cloud:8443",
		"https://happy-otter-123.convex.cloud.evil.example"} {
		if b, _ := egress.Origin(other); b == a {
			t.Errorf("%s has the origin of https://happy-otter-123.convex.cloud", other)
		}
	}
}

func TestOriginOfIPv6DefaultPort(t *testing.T) {
	if got, err := egress.Origin("https://[2001:DB8::1]:443/x"); err != nil || got != "https://[2001:db8::1]" {
		t.Errorf("got %q, %v", got, err)
	}
}
