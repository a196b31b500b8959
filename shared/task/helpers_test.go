package task_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
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
}

func newServices(t testing.TB, st store.Store, cursors *listing.Signer, now func() time.Time) *services {
	a := apptest.New(t, apptest.Options{Ports: app.Ports{Store: st, Cursors: cursors, Now: now}})
	return &services{a.Tasks, a.Missions}
}

// The embedded services need distinct field names.
type (
	tasks    = task.Service
	missions = mission.Service
)

// eachBackend runs fn once per backend with fresh services.
func eachBackend(t *testing.T, fn func(t *testing.T, svc *services)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		fn(t, newService(t, b.Open(t, nil)))
	})
}

func signer(t *testing.T) *listing.Signer { return domaintest.Signer(t) }

func newService(t *testing.T, st store.Store) *services { return newServices(t, st, signer(t), nil) }

// faultStore fails every Write whose operations match poison, before the
// backend sees it.
type faultStore struct {
	store.Store
	poison func(ops []store.Op) bool
}

var errInjected = errors.New("injected write failure")

func (f faultStore) Write(ctx context.Context, ops ...store.Op) error {
	if f.poison(ops) {
		return errInjected
	}
	return f.Store.Write(ctx, ops...)
}
