package profile_test

import (
	"crypto/rand"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// The helpers every aggregate's tests share.
var (
	as       = domaintest.As
	admin    = domaintest.Admin
	wantKind = domaintest.WantKind
	pageAll  = domaintest.PageAll
	ctx      = domaintest.Ctx
)

// eachBackend runs fn once per backend with a fresh service.
func eachBackend(t *testing.T, fn func(t *testing.T, svc *profile.Service)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		fn(t, newService(t, b.Open(t, nil)))
	})
}

func newService(t *testing.T, st store.Store) *profile.Service {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	signer, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return profile.New(profile.Options{Store: st, Cursors: signer})
}
