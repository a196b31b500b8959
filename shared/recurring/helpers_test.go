package recurring_test

import (
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/task"
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

// services are the capabilities these tests drive, on one store, wired as
// main wires them, so that a test calls any of them on one value.
type services struct {
	*tasks
	*missions
	*recurrings
}

func newServices(t testing.TB, st store.Store, cursors *listing.Signer, now func() time.Time) *services {
	a := apptest.New(t, apptest.Options{Ports: app.Ports{Store: st, Cursors: cursors, Now: now}})
	return &services{a.Tasks, a.Missions, a.Recurring}
}

// The embedded services need distinct field names.
type (
	tasks      = task.Service
	missions   = mission.Service
	recurrings = recurring.Service
)

// mandateLimit is a page size.
func mandateLimit(n int) *int { return &n }
