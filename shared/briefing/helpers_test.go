package briefing_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// The helpers every aggregate's tests share.
var (
	as       = domaintest.As
	admin    = domaintest.Admin
	wantKind = domaintest.WantKind
	ctx      = domaintest.Ctx
)

// eachBackend runs fn once per store backend with a fresh service.
func eachBackend(t *testing.T, fn func(t *testing.T, svc *briefing.Service)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		signer := domaintest.Signer(t)
		fn(t, briefing.New(briefing.Options{Store: b.Open(t, nil), Cursors: signer}))
	})
}
