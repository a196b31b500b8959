// Package domaintest holds what every aggregate package's tests need:
// principals, a cursor signer, the error-kind check and a pager over the
// list contract. Only tests import it.
package domaintest

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Tokens is a token resolver for tests: secret -> principal; any other
// secret is auth.ErrInvalidToken, as the real resolver says.
type Tokens map[string]vp.Principal

// Resolve returns the principal of secret.
func (t Tokens) Resolve(_ context.Context, secret string) (vp.Principal, error) {
	p, ok := t[secret]
	if !ok {
		return vp.Principal{}, auth.ErrInvalidToken
	}
	return p, nil
}

// As is a principal of tenant that may act as orchs and read and write
// every namespace.
func As(tenant string, orchs ...string) vp.Principal {
	return vp.Principal{Tenant: tenant, Orchestrators: orchs, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}
}

// Admin is an admin principal of tenant (the master token's shape).
func Admin(tenant string) vp.Principal {
	return vp.Principal{Tenant: tenant, Orchestrators: []string{"*"}, Admin: true}
}

// Signer is a cursor signer with a fresh random key.
func Signer(t testing.TB) *listing.Signer {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	s, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// WantKind fails t unless err is of kind and, when field is set, names it.
func WantKind(t testing.TB, err error, kind vp.Kind, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s on %q", kind, field)
	}
	if vp.KindOf(err) != kind {
		t.Fatalf("got %v (kind %s), want kind %s", err, vp.KindOf(err), kind)
	}
	if field != "" && !strings.Contains(err.Error(), field) {
		t.Fatalf("error %q does not name field %q", err, field)
	}
}

// PageAll follows nextCursor to the end and returns every item.
func PageAll(t testing.TB, page func(cursor string) (listing.Page[any], error)) []any {
	t.Helper()
	var all []any
	cursor := ""
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("pagination does not end")
		}
		p, err := page(cursor)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p.Items...)
		if p.NextCursor == "" {
			return all
		}
		cursor = p.NextCursor
	}
}

// Ctx is a context that bounds one test's calls to a minute.
func Ctx() context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	_ = cancel // the test process ends first
	return c
}

// Drainer is the outbox as Drain needs it.
type Drainer interface {
	Drain(ctx context.Context) (int, error)
}

// Drain runs the outbox's due jobs until none is left (the jobs of the
// jobs it ran included), failing t when it does not settle.
func Drain(t testing.TB, ob Drainer) {
	t.Helper()
	for range 20 {
		n, err := ob.Drain(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("the outbox does not drain")
}
