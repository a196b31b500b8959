package keyword_test

import (
	"context"
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// eachBackend runs fn once per backend with a fresh service.
func eachBackend(t *testing.T, fn func(t *testing.T, svc *keyword.Service)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		fn(t, newService(t, b.Open(t, nil)))
	})
}

func newService(t *testing.T, st store.Store) *keyword.Service {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return keyword.New(keyword.Options{Store: st, Cursors: signer})
}

func as(tenant string, orchs ...string) vp.Principal {
	return vp.Principal{Tenant: tenant, Orchestrators: orchs, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}
}

func wantKind(t *testing.T, err error, kind vp.Kind, field string) {
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

func ctx() context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	_ = cancel // the test process ends first
	return c
}
