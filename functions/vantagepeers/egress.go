package main

import (
	"os"

	"github.com/vantagepeers/vantagepeers/shared/egress"
)

// egressFromEnv is the policy of every request to a URL that a tenant,
// an agent or an OAuth client names (Convex deploymentUrl, client ID
// metadata documents):
//
//	VP_EGRESS_ALLOW_HOSTS  comma-separated host names, IPs or CIDRs that may be reached
//	                       although not public, over http too (a local or in-VPC Convex);
//	                       unset: public https only
func egressFromEnv() (*egress.Policy, error) {
	allow, err := egress.ParseAllow(os.Getenv(egress.EnvAllowHosts))
	if err != nil {
		return nil, err
	}
	return egress.New(egress.Options{Allow: allow}), nil
}
