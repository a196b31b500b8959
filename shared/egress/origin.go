package egress

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"
)

// Origin is a URL's origin, scheme://host[:port], spelled one way (lower
// case, no default port, no trailing dot), so that two
// spellings of one origin compare equal: a secret bound to an origin is
// sent to that origin only. Only absolute http(s) URLs without user info
// have one.
func Origin(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Hostname() == "" {
		return "", errors.New("not an absolute http(s) URL")
	}
	if u.User != nil {
		return "", errors.New("user info in the URL")
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch {
	case scheme != "http" && scheme != "https":
		return "", errors.New("scheme " + strconv.Quote(u.Scheme) + ": only http(s)")
	case port == "" && scheme == "https":
		port = "443"
	case port == "":
		port = "80"
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return "", errors.New("port out of range")
	}
	host := normHost(u.Hostname())
	if scheme == "https" && n == 443 || scheme == "http" && n == 80 {
		if strings.Contains(host, ":") {
			return scheme + "://[" + host + "]", nil
		}
		return scheme + "://" + host, nil
	}
	return scheme + "://" + net.JoinHostPort(host, strconv.Itoa(n)), nil
}
