package auth

import "strings"

// ParseBearer reads the credential of an Authorization header value of
// the Bearer scheme. The scheme is matched case-insensitively (RFC 7235
// §2.1: "bearer", "BEARER" and "Bearer" are one scheme) and may be
// followed by more than one space; ok is false for any other scheme or
// an empty credential.
func ParseBearer(header string) (secret string, ok bool) {
	scheme, rest, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	secret = strings.TrimSpace(rest)
	return secret, secret != ""
}
