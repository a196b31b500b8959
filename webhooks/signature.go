package webhooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
)

// The signature headers GitHub sends.
const (
	signatureHeader     = "X-Hub-Signature-256"
	sha1SignatureHeader = "X-Hub-Signature" // legacy SHA-1; never accepted
	signaturePrefix     = "sha256="
)

// Why a signature is refused. The messages name the header and what to do,
// never the signature or the secret.
var (
	errNoSignature = errors.New(signatureHeader + " is missing: set a secret on the GitHub webhook")
	errOnlySHA1    = errors.New("only the SHA-1 " + sha1SignatureHeader + " was sent, and it is not accepted: " +
		"the webhook must send " + signatureHeader + " (HMAC-SHA256)")
	errTwoSignatures = errors.New(signatureHeader + " is given more than once")
	errSignatureForm = errors.New(signatureHeader + " must be sha256= followed by 64 hex digits")
	errNoSecret      = errors.New("no webhook secret is set for this tenant: every delivery is refused until one is")
	errBadSignature  = errors.New(signatureHeader + " does not match the body: the webhook's secret differs from the one set here")
)

// signatureOf returns the MAC a request claims, before the body is read:
// a malformed or missing header costs no read of the body nor of the
// secret.
func signatureOf(h http.Header) ([]byte, error) {
	values := h.Values(signatureHeader)
	switch {
	case len(values) == 0 && h.Get(sha1SignatureHeader) != "":
		return nil, errOnlySHA1
	case len(values) == 0:
		return nil, errNoSignature
	case len(values) > 1:
		return nil, errTwoSignatures
	}
	return parseSignature(values[0])
}

// parseSignature decodes "sha256=<64 hex>". The prefix is matched exactly,
// as GitHub writes it; the hex digits in either case.
func parseSignature(v string) ([]byte, error) {
	digits, ok := strings.CutPrefix(v, signaturePrefix)
	if !ok || len(digits) != hex.EncodedLen(sha256.Size) {
		return nil, errSignatureForm
	}
	mac, err := hex.DecodeString(digits)
	if err != nil {
		return nil, errSignatureForm
	}
	return mac, nil
}

// verify reports whether mac is the HMAC-SHA256 of body under secret, in
// time that does not depend on where they differ. An empty secret
// verifies nothing: a signature made with an empty key proves nothing.
func verify(secret string, body, mac []byte) error {
	if secret == "" {
		return errNoSecret
	}
	h := hmac.New(sha256.New, []byte(secret))
	h.Write(body)
	if !hmac.Equal(h.Sum(nil), mac) {
		return errBadSignature
	}
	return nil
}

// verifyHeader is parseSignature then verify: what the handler does with
// one header value (and what the fuzz test drives).
func verifyHeader(header, secret string, body []byte) error {
	mac, err := parseSignature(header)
	if err != nil {
		return err
	}
	return verify(secret, body, mac)
}
