package awsapp

import (
	"time"

	"github.com/vantagepeers/vantagepeers/shared/tenants"
)

// CredentialTenants is the tenant discovery of the scheduler over any store.
var CredentialTenants = tenants.WithCredentials

// BuildRelay is Load's relay wiring, for an App assembled by a test.
func (a *App) BuildRelay(now func() time.Time) error { return a.buildRelay(now) }
