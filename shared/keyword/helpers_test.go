package keyword_test

import (
	"sync"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/search"
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

func newService(t *testing.T, st store.Store) *keyword.Service { return appOn(t, st, nil).Keyword }

// apps are the products appOn built, by their keyword service, for
// messagesOf.
var apps sync.Map // *keyword.Service -> *app.Services

// appOn is the product built through the composition root on st, indexing
// into idx (none when nil), as the binaries build it: the keyword searches
// find what its services write.
func appOn(t *testing.T, st store.Store, idx search.Index) *app.Services {
	t.Helper()
	return appAt(t, st, idx, nil)
}

// appAt is appOn on the clock now (nil: time.Now).
func appAt(t *testing.T, st store.Store, idx search.Index, now func() time.Time) *app.Services {
	t.Helper()
	a := apptest.New(t, apptest.Options{Ports: app.Ports{Store: st, Index: idx, Now: now}, NoIndex: idx == nil})
	apps.Store(a.Keyword, a)
	t.Cleanup(func() { apps.Delete(a.Keyword) })
	return a
}

// messagesOf is messaging in the product of svc (built by appOn): what the
// keyword-search tests send is what svc searches.
func messagesOf(svc *keyword.Service) *message.Service {
	a, ok := apps.Load(svc)
	if !ok {
		panic("messagesOf: svc was not built by appOn")
	}
	return a.(*app.Services).Messages
}
