package awsapp_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/vp"
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
		if err != nil || got.Key != c.want || got.URL != "" || !slices.Equal(reads, c.reads) {
			t.Errorf("tenant %s, key %s: %q, %v, read %q; want %q, read %q", c.tenant, c.name, got, err, reads, c.want, c.reads)
		}
	}
}

// TestDeployKeySecretsCarryTheirBindingAgainstFakeSecrets: a secret may be
// JSON {"key","url"}: the key bound to the URL's origin; a plain secret
// is the key alone (bound by its own prefix, if any); a secret that is
// JSON but not that form, or whose url has no origin, is an error naming
// the secret, never its value.
func TestDeployKeySecretsCarryTheirBindingAgainstFakeSecrets(t *testing.T) {
	const prefix = "vp/dk/"
	ctx := context.Background()
	k := &awsapp.DeployKeys{Prefix: prefix, Secrets: awsapp.StaticSecrets{
		prefix + "acme/VP_DEPLOY_KEY_BOUND":  ` {"key":"opaque-bound-key","url":"https://App.example.com/x"} `,
		prefix + "acme/VP_DEPLOY_KEY_PLAIN":  "prod:happy-otter-123|plain\n",
		prefix + "acme/VP_DEPLOY_KEY_BADURL": `{"key":"opaque-badurl-key","url":"app.example.com"}`,
		prefix + "acme/VP_DEPLOY_KEY_NOKEY":  `{"url":"https://app.example.com"}`,
		prefix + "acme/VP_DEPLOY_KEY_BROKEN": `{"key":"opaque-broken-key"`,
	}}
	key := func(name string) (errormon.DeployKey, error) {
		return k.Key(ctx, "acme", errormon.Deployment{Name: "app", Source: errormon.SourceConvex, DeployKeyEnvVar: name})
	}
	if got, err := key("VP_DEPLOY_KEY_BOUND"); err != nil || got.Key != "opaque-bound-key" || got.URL != "https://app.example.com" {
		t.Errorf("a JSON secret: %+v, %v", got, err)
	}
	if got, err := key("VP_DEPLOY_KEY_PLAIN"); err != nil || got.Key != "prod:happy-otter-123|plain" || got.URL != "" {
		t.Errorf("a plain secret: %+v, %v", got, err)
	}
	for _, name := range []string{"VP_DEPLOY_KEY_BADURL", "VP_DEPLOY_KEY_NOKEY", "VP_DEPLOY_KEY_BROKEN"} {
		got, err := key(name)
		if err == nil || got.Key != "" || !strings.Contains(err.Error(), prefix+"acme/"+name) || strings.Contains(err.Error(), "opaque-") {
			t.Errorf("%s: %+v, %v; want an error naming the secret, not its value", name, got, err)
		}
	}
	if how := k.HowToSet("acme", "VP_DEPLOY_KEY_X", "https://happy-otter-123.convex.cloud"); !strings.Contains(how, `"url":"https://happy-otter-123.convex.cloud"`) ||
		!strings.Contains(how, prefix+"acme/VP_DEPLOY_KEY_X") {
		t.Errorf("HowToSet: %s", how)
	}
}

// TestTenantLogGroupsFromTheEnvironment: VP_TENANT_LOG_GROUPS (the stack's
// tenantLogGroups) is what add_deployment checks on the mcp function: a
// tenant naming a group allowed for another tenant only is refused before
// anything is stored. A malformed mapping stops the function at start.
func TestTenantLogGroupsFromTheEnvironment(t *testing.T) {
	groups := `{"acme":["/aws/lambda/acme-*"],"beta":["/ecs/beta-api"]}`
	c, err := awsapp.ConfigFromEnv(env(map[string]string{awsenv.EnvTable: "t", awsenv.EnvTenantLogGroups: groups}))
	if err != nil || len(c.TenantLogGroups) != 2 || c.TenantLogGroups["beta"][0] != "/ecs/beta-api" {
		t.Fatalf("config: %+v, %v", c.TenantLogGroups, err)
	}
	for _, bad := range []string{`["/ecs/api"]`, `{"Acme!":["/ecs/api"]}`, `{"acme":["*"]}`, `{"acme":["/ecs/a*b"]}`, `{"acme":"/ecs/api"}`} {
		if _, err := awsapp.ConfigFromEnv(env(map[string]string{awsenv.EnvTable: "t", awsenv.EnvTenantLogGroups: bad})); err == nil ||
			!strings.Contains(err.Error(), awsenv.EnvTenantLogGroups) {
			t.Errorf("%s: %v, want an error naming %s", bad, err, awsenv.EnvTenantLogGroups)
		}
	}
	s := &countingSecrets{StaticSecrets: awsapp.StaticSecrets{"master": master, "keys": `{"cursor":"` + strings.Repeat("11", 32) + `"}`}}
	a, _, err := load(t, awsenv.FuncMCP, map[string]string{awsenv.EnvMasterSecret: "master", awsenv.EnvKeysSecret: "keys",
		awsenv.EnvTenantLogGroups: groups}, s)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"/ecs/beta-api", "/aws/lambda/acme", "/aws/lambda/other"} {
		_, err = a.Errors.AddDeployment(context.Background(), vp.Principal{Tenant: "acme", Orchestrators: []string{"*"}},
			errormon.DeploymentInput{Name: "api", Source: errormon.SourceCloudWatch, LogGroups: []string{g}, GitHubRepo: "acme/app", Orchestrator: "alice"})
		if vp.KindOf(err) != vp.KindForbidden || !strings.Contains(err.Error(), "logGroups") || !strings.Contains(err.Error(), "tenantLogGroups") {
			t.Errorf("acme naming %s: %v; want forbidden on logGroups, saying how to allow it", g, err)
		}
	}
}
