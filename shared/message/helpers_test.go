package message_test

import (
	"context"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/domaintest"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/app/apptest"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/store"
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
	ctx      = domaintest.Ctx
)

// services is messaging wired to profiles as the binaries wire them; the
// tests call both through it (their method names do not overlap).
type services struct {
	*messages
	*profiles
}

// Aliases name the embedded fields (both types are called Service).
type (
	messages = message.Service
	profiles = profile.Service
)

// eachBackend runs fn once per backend with fresh services.
func eachBackend(t *testing.T, fn func(t *testing.T, svc *services)) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		fn(t, newServices(t, b.Open(t, nil), nil))
	})
}

func newServices(t *testing.T, st store.Store, now func() time.Time) *services {
	a := apptest.New(t, apptest.Options{Ports: app.Ports{Store: st, Now: now}})
	return &services{messages: a.Messages, profiles: a.Profiles}
}

func mustProfile(t *testing.T, svc *services, p vp.Principal, orch string) {
	t.Helper()
	if _, err := svc.UpdateProfile(context.Background(), p, profile.Update{Orchestrator: orch}); err != nil {
		t.Fatal(err)
	}
}
