// Package clerk verifies the Clerk session JWTs that the OAuth server's
// POST /issueBearerFromClerk exchanges for a bearer, and keeps the
// per-user window that rate-limits the exchange (platform.md §6.1). It
// knows nothing of bearers, tenants or the audit log: shared/oauth does the
// exchange and hands this package a token, or a user and the store.
package clerk

import (
	"context"
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultAudience is the aud of the Clerk JWT template named convex.
const DefaultAudience = "convex"

const (
	leeway         = 5 * time.Second
	jwksMaxAge     = time.Hour
	jwksMinRefetch = 10 * time.Second // on an unknown kid
)

// Options configures a Verifier.
type Options struct {
	// Issuer is CLERK_JWT_ISSUER_DOMAIN (https://clerk.example.com, or the
	// host alone). Empty: every token is refused.
	Issuer string
	// Audience is the JWT's expected aud (default DefaultAudience).
	Audience string
	// JWKSURL defaults to Issuer + "/.well-known/jwks.json".
	JWKSURL    string
	HTTPClient *http.Client
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Verifier checks Clerk session JWTs (RS256) against the issuer's JWKS,
// cached for an hour and fetched again when a token names an unknown key
// (key rotation), at most every ten seconds.
type Verifier struct {
	opts Options

	mu        sync.Mutex
	keys      map[string]*rsa.PublicKey
	fetchedAt time.Time
}

func NewVerifier(o Options) *Verifier {
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Issuer = normalizeIssuer(o.Issuer)
	if o.Audience == "" {
		o.Audience = DefaultAudience
	}
	if o.JWKSURL == "" && o.Issuer != "" {
		o.JWKSURL = o.Issuer + "/.well-known/jwks.json"
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	return &Verifier{opts: o}
}

// Issuer is the issuer tokens must name, normalised ("": none set, and
// every token is refused).
func (c *Verifier) Issuer() string { return c.opts.Issuer }

func normalizeIssuer(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), "/")
	if s != "" && !strings.Contains(s, "://") {
		s = "https://" + s
	}
	return s
}

// Claims are the claims the exchange reads.
type Claims struct {
	Sub      string          `json:"sub"`
	Iss      string          `json:"iss"`
	Aud      json.RawMessage `json:"aud"`
	Exp      *float64        `json:"exp"`
	Nbf      *float64        `json:"nbf"`
	Name     string          `json:"name"`
	Username string          `json:"username"`
	Email    string          `json:"email"`
}

// ErrInvalidJWT is the cause of every refused token; another error of
// Verify means the issuer's keys could not be fetched.
var ErrInvalidJWT = errors.New("invalid Clerk JWT")

// Verify checks signature, issuer, audience and times of a compact JWS.
func (c *Verifier) Verify(ctx context.Context, token string) (Claims, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return Claims{}, fmt.Errorf("%w: not a compact JWS", ErrInvalidJWT)
	}
	var hdr struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
		Typ string `json:"typ"`
	}
	if err := decodeSegment(parts[0], &hdr); err != nil {
		return Claims{}, fmt.Errorf("%w: header: %v", ErrInvalidJWT, err)
	}
	if hdr.Alg != "RS256" {
		return Claims{}, fmt.Errorf("%w: alg %q (want RS256)", ErrInvalidJWT, hdr.Alg)
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return Claims{}, fmt.Errorf("%w: signature encoding", ErrInvalidJWT)
	}
	key, err := c.key(ctx, hdr.Kid)
	if err != nil {
		return Claims{}, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig); err != nil {
		return Claims{}, fmt.Errorf("%w: bad signature", ErrInvalidJWT)
	}
	var cl Claims
	if err := decodeSegment(parts[1], &cl); err != nil {
		return Claims{}, fmt.Errorf("%w: claims: %v", ErrInvalidJWT, err)
	}
	now := c.opts.Now()
	switch {
	case cl.Exp == nil || !now.Before(time.Unix(int64(*cl.Exp), 0).Add(leeway)):
		return Claims{}, fmt.Errorf("%w: expired", ErrInvalidJWT)
	case cl.Nbf != nil && now.Add(leeway).Before(time.Unix(int64(*cl.Nbf), 0)):
		return Claims{}, fmt.Errorf("%w: not valid yet", ErrInvalidJWT)
	case normalizeIssuer(cl.Iss) != c.opts.Issuer:
		return Claims{}, fmt.Errorf("%w: issuer mismatch", ErrInvalidJWT)
	case !audienceHas(cl.Aud, c.opts.Audience):
		return Claims{}, fmt.Errorf("%w: audience mismatch", ErrInvalidJWT)
	case cl.Sub == "" || len(cl.Sub) > 200:
		return Claims{}, fmt.Errorf("%w: no subject", ErrInvalidJWT)
	}
	return cl, nil
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func audienceHas(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && slices.Contains(many, want)
}

// key returns the verification key kid, fetching the JWKS when the cache
// is old or does not know kid (rotation).
func (c *Verifier) key(ctx context.Context, kid string) (*rsa.PublicKey, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.opts.Now()
	k, ok := c.keys[kid]
	stale := now.Sub(c.fetchedAt) > jwksMaxAge
	if ok && !stale {
		return k, nil
	}
	if c.keys == nil || stale || now.Sub(c.fetchedAt) >= jwksMinRefetch {
		keys, err := c.fetchJWKS(ctx)
		if err != nil {
			if ok { // keep using a known key while the issuer is unreachable
				return k, nil
			}
			return nil, fmt.Errorf("fetching the JWKS: %w", err)
		}
		c.keys, c.fetchedAt = keys, now
		k, ok = keys[kid]
	}
	if !ok {
		return nil, fmt.Errorf("%w: unknown key id %q", ErrInvalidJWT, kid)
	}
	return k, nil
}

func (c *Verifier) fetchJWKS(ctx context.Context) (map[string]*rsa.PublicKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.opts.JWKSURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d from %s", resp.StatusCode, c.opts.JWKSURL)
	}
	var set struct {
		Keys []struct {
			Kty, Kid, Use, Alg, N, E string
		} `json:"keys"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&set); err != nil {
		return nil, err
	}
	keys := map[string]*rsa.PublicKey{}
	for _, k := range set.Keys {
		if k.Kty != "RSA" || (k.Use != "" && k.Use != "sig") || (k.Alg != "" && k.Alg != "RS256") {
			continue
		}
		n, err1 := base64.RawURLEncoding.DecodeString(k.N)
		e, err2 := base64.RawURLEncoding.DecodeString(k.E)
		if err1 != nil || err2 != nil || len(e) > 4 || len(n) < 256 {
			continue // refuse keys under 2048 bits
		}
		exp := 0
		for _, b := range e {
			exp = exp<<8 | int(b)
		}
		keys[k.Kid] = &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: exp}
	}
	return keys, nil
}
