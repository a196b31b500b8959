package mandate_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
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
func eachBackend(t *testing.T, fn func(t *testing.T, svc *mandate.Service)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		signer := domaintest.Signer(t)
		fn(t, mandate.New(mandate.Options{Store: b.Open(t, nil), Cursors: signer}))
	})
}

// wantRemedy checks the action an error tells the caller to take.
func wantRemedy(t *testing.T, err error, remedy string) {
	t.Helper()
	if got := vp.RemedyOf(err); got != remedy {
		t.Fatalf("error %q has remedy %q, want %q", err, got, remedy)
	}
}
