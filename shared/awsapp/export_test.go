package awsapp

import (
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/tenants"
)

// CredentialTenants is the tenant discovery of the scheduler over any store.
var CredentialTenants = tenants.WithCredentials

// BuildRelay is Load's relay wiring over st, for an App assembled by a
// test (on either backend).
func (a *App) BuildRelay(st store.Store, now func() time.Time) error { return a.buildRelay(st, now) }
