package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

// The stack's per-tenant settings of the error monitor: which log groups
// each tenant may read, and which functions fetch URLs a tenant names.

// EgressFunctions fetch URLs that a tenant, an agent or an OAuth client
// names, through the egress policy: mcp checks a deploymentUrl at
// add_deployment, the scheduler scans it (the error monitor), oauth
// fetches client metadata documents.
var EgressFunctions = []string{awsenv.FuncMCP, awsenv.FuncScheduler, awsenv.FuncOAuth}

// maxTenantLogGroupsJSON bounds the mapping as the functions receive it:
// a Lambda function's environment holds 4 KB in all.
const maxTenantLogGroupsJSON = 2048

// validLogGroups checks TenantLogGroups, folds MonitoredLogGroups into the
// default tenant's, and drops duplicates.
func (p *CustomerProps) validLogGroups() error {
	all := map[string][]string{}
	add := func(context, tenant string, groups []string) error {
		if !tenantRE.MatchString(tenant) {
			return fmt.Errorf("%s: %q is not a tenant id (1-63 lower-case letters, digits, '-' and '_')", context, tenant)
		}
		for _, g := range groups {
			if !logGroupRE.MatchString(g) {
				return fmt.Errorf("%s: tenant %s: %q is not a CloudWatch Logs log group name (1-512 letters, digits and _/.#-) or such a prefix followed by '*'", context, tenant, g)
			}
			if !slices.Contains(all[tenant], g) {
				all[tenant] = append(all[tenant], g)
			}
		}
		return nil
	}
	for _, t := range slices.Sorted(maps.Keys(p.TenantLogGroups)) {
		if err := add("tenantLogGroups", t, p.TenantLogGroups[t]); err != nil {
			return err
		}
	}
	if err := add("monitoredLogGroups (the default tenant's)", awsenv.DefaultTenant, p.MonitoredLogGroups); err != nil {
		return err
	}
	for t, gs := range all {
		if len(gs) == 0 {
			delete(all, t)
		}
	}
	p.TenantLogGroups, p.MonitoredLogGroups = nil, nil
	if len(all) > 0 {
		p.TenantLogGroups = all
	}
	if b, _ := json.Marshal(p.TenantLogGroups); len(b) > maxTenantLogGroupsJSON {
		return fmt.Errorf("tenantLogGroups is %d bytes as JSON; the limit is %d (a function's environment holds 4 KB): use prefixes (/aws/lambda/acme-*)", len(b), maxTenantLogGroupsJSON)
	}
	return nil
}
