package listing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// Signer signs and verifies cursors with HMAC-SHA256. A cursor is bound to
// the tenant and to the query's binding: replaying it in another tenant or
// with other filters fails verification instead of leaking rows.
type Signer struct {
	key []byte
}

// NewSigner returns a signer using key (at least 32 bytes).
func NewSigner(key []byte) (*Signer, error) {
	if len(key) < 32 {
		return nil, errors.New("listing: cursor key must be at least 32 bytes")
	}
	return &Signer{key: append([]byte(nil), key...)}, nil
}

type cursorBody struct {
	PK  string `json:"p"`
	SK  string `json:"s"`
	IPK string `json:"ip,omitempty"`
	ISK string `json:"is,omitempty"`
}

const macLen = 16

var errBadCursor = errors.New("is not a cursor this server issued for this query and tenant: pass back nextCursor verbatim, with the same filters, or omit it to start over")

func (s *Signer) mac(tenant, binding string, body []byte) []byte {
	h := hmac.New(sha256.New, s.key)
	h.Write([]byte(tenant))
	h.Write([]byte{0})
	h.Write([]byte(binding))
	h.Write([]byte{0})
	h.Write(body)
	return h.Sum(nil)[:macLen]
}

// Encode returns the opaque cursor for pos.
func (s *Signer) Encode(tenant, binding string, pos store.Position) string {
	body, _ := json.Marshal(cursorBody{PK: pos.Key.PK, SK: pos.Key.SK, IPK: pos.Index.PK, ISK: pos.Index.SK})
	return base64.RawURLEncoding.EncodeToString(append(body, s.mac(tenant, binding, body)...))
}

// Decode verifies and opens a cursor.
func (s *Signer) Decode(tenant, binding, cursor string) (store.Position, error) {
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil || len(raw) <= macLen {
		return store.Position{}, errBadCursor
	}
	body, sig := raw[:len(raw)-macLen], raw[len(raw)-macLen:]
	if !hmac.Equal(sig, s.mac(tenant, binding, body)) {
		return store.Position{}, errBadCursor
	}
	var c cursorBody
	if err := json.Unmarshal(body, &c); err != nil {
		return store.Position{}, errBadCursor
	}
	return store.Position{Key: store.Key{PK: c.PK, SK: c.SK}, Index: store.Key{PK: c.IPK, SK: c.ISK}}, nil
}
