package component_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"

	"github.com/vantagepeers/vantagepeers/shared/component"
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
func eachBackend(t *testing.T, fn func(t *testing.T, svc *component.Service)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		signer := domaintest.Signer(t)
		fn(t, component.New(component.Options{Store: b.Open(t, nil), Cursors: signer}))
	})
}

func strp(s string) *string { return &s }
