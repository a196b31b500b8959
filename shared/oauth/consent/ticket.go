package consent

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
	"strings"
	"time"
)

// A ticket carries the sign-in of step one to the approval of step two:
// the signed hash of the person's token (its store key, never its secret),
// bound to the authorization request and valid until it expires.

// Ticket seals hash, bound to the request's fields, until exp.
func Ticket(key []byte, hash string, exp time.Time, bound ...string) string {
	e := strconv.FormatInt(exp.UnixMilli(), 10)
	return e + "." + hash + "." + mac(key, hash, e, bound)
}

// OpenTicket returns the hash a ticket sealed for the same bound fields,
// ok=false when it was not sealed with key for them or has expired at now.
func OpenTicket(key []byte, tk string, now time.Time, bound ...string) (hash string, ok bool) {
	e, rest, _ := strings.Cut(tk, ".")
	hash, m, found := strings.Cut(rest, ".")
	ms, err := strconv.ParseInt(e, 10, 64)
	if !found || err != nil || ms <= now.UnixMilli() {
		return "", false
	}
	return hash, hmac.Equal([]byte(m), []byte(mac(key, hash, e, bound)))
}

func mac(key []byte, hash, exp string, bound []string) string {
	m := hmac.New(sha256.New, key)
	for _, part := range append([]string{"vp-consent-v1", hash, exp}, bound...) {
		m.Write([]byte(strconv.Itoa(len(part)) + ":" + part + "\n"))
	}
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
