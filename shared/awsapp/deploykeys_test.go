package awsapp_test

import (
	"context"
	"slices"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
)

// TestDeployKeysOfTheTenantAgainstFakeSecrets: tenant b's deployment reads
// the secret <prefix>b/NAME and nothing else — never <prefix>NAME (the
// old, tenant-less path) nor another tenant's <prefix>a/NAME; a name that
// is not a deploy key's reads no secret at all.
func TestDeployKeysOfTheTenantAgainstFakeSecrets(t *testing.T) {
	const prefix, name = "vp/dk/", "VP_DEPLOY_KEY_X"
	ctx := context.Background()
	secrets := &countingSecrets{StaticSecrets: awsapp.StaticSecrets{
		prefix + name:                "tenant-less",
		prefix + "a/" + name:         "of-a",
		prefix + "b/" + name:         "of-b",
		prefix + "VP_MASTER_TOKEN":   "master",
		prefix + "b/VP_MASTER_TOKEN": "master-b",
	}}
	k := &awsapp.DeployKeys{Secrets: secrets, Prefix: prefix}
	for _, c := range []struct {
		tenant, name, want string
		reads              []string
	}{
		{"b", name, "of-b", []string{prefix + "b/" + name}},
		{"a", name, "of-a", []string{prefix + "a/" + name}},
		{"c", name, "", []string{prefix + "c/" + name}},
		{"b", "VP_MASTER_TOKEN", "", nil},
		{"b", "DEPLOY_KEY_X", "", nil},
		{"b", "../a/" + name, "", nil},
		{"../a", name, "", nil},
	} {
		secrets.mu.Lock()
		secrets.read = nil
		secrets.mu.Unlock()
		got, err := k.Key(ctx, c.tenant, errormon.Deployment{Name: "app", Source: errormon.SourceConvex, DeployKeyEnvVar: c.name})
		secrets.mu.Lock()
		reads := slices.Clone(secrets.read)
		secrets.mu.Unlock()
		if err != nil || got != c.want || !slices.Equal(reads, c.reads) {
			t.Errorf("tenant %s, key %s: %q, %v, read %q; want %q, read %q", c.tenant, c.name, got, err, reads, c.want, c.reads)
		}
	}
}
