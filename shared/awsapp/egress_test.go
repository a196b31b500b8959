package awsapp_test

import (
	"context"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/awsapp"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The functions' egress policy: its allow-list from the environment
// (a bad entry fails the configuration, naming the variable), the error
// monitor's add_deployment refusing what the policy refuses.
func TestEgressPolicyFromTheEnvironment(t *testing.T) {
	if awsenv.EnvEgressAllowHosts != egress.EnvAllowHosts {
		t.Fatalf("awsenv says %s, egress %s", awsenv.EnvEgressAllowHosts, egress.EnvAllowHosts)
	}
	_, err := awsapp.ConfigFromEnv(env(map[string]string{awsenv.EnvTable: "t", awsenv.EnvEgressAllowHosts: "10.0.0.0/8, exa mple"}))
	if err == nil || !strings.Contains(err.Error(), awsenv.EnvEgressAllowHosts+`: entry 2 "exa mple"`) {
		t.Fatalf("a bad allow-list: %v", err)
	}
	admin := vp.Principal{Tenant: "acme", Admin: true}
	for allow, local := range map[string]bool{"": false, "convex.internal,10.0.0.0/8": true} {
		a, _, err := load(t, awsenv.FuncWebhooks, map[string]string{awsenv.EnvEgressAllowHosts: allow}, awsapp.StaticSecrets{})
		if err != nil {
			t.Fatal(err)
		}
		if a.Config.EgressAllow.String() != allow {
			t.Fatalf("allow-list %q, want %q", a.Config.EgressAllow, allow)
		}
		for _, u := range []string{"http://convex.internal:3210", "https://10.1.2.3"} {
			if _, err := a.Egress().CheckURL(u); (err == nil) != local {
				t.Errorf("allow %q: CheckURL(%s) = %v", allow, u, err)
			}
		}
		_, err = a.Errors.AddDeployment(context.Background(), admin, errormon.DeploymentInput{Name: "app", DeploymentURL: "https://169.254.169.254",
			DeployKeyEnvVar: "DEPLOY_KEY_APP", GitHubRepo: "acme/app", Orchestrator: "sigma"})
		if !vp.IsKind(err, vp.KindInvalid) || !strings.Contains(err.Error(), "deploymentUrl") || !strings.Contains(err.Error(), "link-local") {
			t.Errorf("allow %q: add_deployment of the metadata service: %v", allow, err)
		}
	}
}
