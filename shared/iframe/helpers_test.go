package iframe_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"

	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// The helpers every aggregate's tests share.
var (
	as       = domaintest.As
	wantKind = domaintest.WantKind
	ctx      = domaintest.Ctx
)
