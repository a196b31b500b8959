package awsapp

import (
	"context"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/store"
)

// CredentialTenants is the tenant discovery of the scheduler over any store.
func CredentialTenants(ctx context.Context, st store.Store) ([]string, error) {
	return (&vpapp.Services{Store: st}).Tenants(ctx)
}
