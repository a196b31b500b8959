package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"
)

func sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

func TestVerifyHeader(t *testing.T) {
	const vector = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
	body := []byte("Hello, World!")
	cases := []struct {
		header, secret string
		want           error
	}{
		{vector, "It's a Secret to Everybody", nil},
		{strings.ToUpper(vector[:7]) + vector[7:], "It's a Secret to Everybody", errSignatureForm},
		{"sha256=" + strings.ToUpper(vector[7:]), "It's a Secret to Everybody", nil},
		{vector, "It's a secret to everybody", errBadSignature},
		{vector, "", errNoSecret},
		{sign("", body), "", errNoSecret},
		{vector + "00", "It's a Secret to Everybody", errSignatureForm},
		{vector[:len(vector)-1], "It's a Secret to Everybody", errSignatureForm},
		{" " + vector, "It's a Secret to Everybody", errSignatureForm},
		{"sha1=" + vector[7:47], "It's a Secret to Everybody", errSignatureForm},
		{"", "It's a Secret to Everybody", errSignatureForm},
	}
	for _, c := range cases {
		if got := verifyHeader(c.header, c.secret, body); got != c.want {
			t.Errorf("verifyHeader(%q, %q) = %v, want %v", c.header, c.secret, got, c.want)
		}
	}
}

// FuzzVerifyHeader: no input panics, and a header verifies exactly when it
// is the body's HMAC-SHA256 under a non-empty secret (hex in either case).
func FuzzVerifyHeader(f *testing.F) {
	f.Add("sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", "It's a Secret to Everybody", []byte("Hello, World!"))
	f.Add("sha256=", "s", []byte{})
	f.Add("sha1=0123456789abcdef0123456789abcdef01234567", "s", []byte("{}"))
	f.Add("sha256="+strings.Repeat("g", 64), "s", []byte("{}"))
	f.Add(sign("k", []byte(`{"action":"opened"}`)), "k", []byte(`{"action":"opened"}`))
	f.Fuzz(func(t *testing.T, header, secret string, body []byte) {
		err := verifyHeader(header, secret, body)
		want := secret != "" && strings.EqualFold(header, sign(secret, body)) && strings.HasPrefix(header, "sha256=")
		if (err == nil) != want {
			t.Errorf("verifyHeader(%q, %q, %q) = %v, want verified %v", header, secret, body, err, want)
		}
		// The signature GitHub would send always verifies.
		if secret != "" {
			if err := verifyHeader(sign(secret, body), secret, body); err != nil {
				t.Errorf("the body's own signature: %v", err)
			}
		}
	})
}
