package keyword_test

import (
	"crypto/rand"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"

	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// The helpers every aggregate's tests share.
var (
	as       = domaintest.As
	wantKind = domaintest.WantKind
	ctx      = domaintest.Ctx
)

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
