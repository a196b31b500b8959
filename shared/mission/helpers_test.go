package mission_test

import (
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

func tkStr(s string) *string { return &s }

func newTaskIn(title, assignee string) task.CreateTaskInput {
	return task.CreateTaskInput{Title: title, AssignedTo: assignee, Priority: "medium"}
}

func mustTask(t *testing.T, svc *services, p vp.Principal, in task.CreateTaskInput) vp.Task {
	t.Helper()
	tk, err := svc.CreateTask(ctx(), p, in)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}
