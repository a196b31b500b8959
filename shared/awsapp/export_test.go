package awsapp

// CredentialTenants is the tenant discovery of the scheduler over any store.
var CredentialTenants = credentialTenants
