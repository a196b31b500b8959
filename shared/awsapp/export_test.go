package awsapp

import (
	"github.com/vantagepeers/vantagepeers/shared/tenants"
)

// CredentialTenants is the tenant discovery of the scheduler over any store.
var CredentialTenants = tenants.WithCredentials
