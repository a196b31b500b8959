package main

import (
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/vantagepeers/vantagepeers/shared/awsenv"
)

// envOf is a function's environment variables in the template.
func (m *tmpl) envOf(name string) map[string]any {
	m.t.Helper()
	_, fn := m.one("AWS::Lambda::Function", title(name)+"Function")
	env, _ := fn.Properties["Environment"].(map[string]any)
	vars, _ := env["Variables"].(map[string]any)
	return vars
}

// TestEgressAllowHosts: -c egressAllowHosts reaches, as
// VP_EGRESS_ALLOW_HOSTS, exactly the functions that fetch URLs a tenant or
// an OAuth client names (mcp checks a deploymentUrl, the scheduler scans
// it, oauth fetches client metadata documents); no other function gets
// it, and without the context none does (public https only). A bad entry
// stops the synth, naming the context key.
func TestEgressAllowHosts(t *testing.T) {
	const allow = "10.20.0.0/16,logs.internal.example"
	app := awscdk.NewApp(&awscdk.AppProps{Context: &map[string]any{"customer": "acme", "lambdaDir": "d", "egressAllowHosts": allow}})
	p, err := propsFromContext(app)
	if err != nil || p.EgressAllowHosts != allow {
		t.Fatalf("from the context: %+v, %v", p, err)
	}
	fetchers := map[string]bool{awsenv.FuncMCP: true, awsenv.FuncScheduler: true, awsenv.FuncOAuth: true}
	for _, given := range []string{allow, ""} {
		m := synth(t, CustomerProps{EgressAllowHosts: given})
		for _, fn := range Functions {
			got, ok := m.envOf(fn)[awsenv.EnvEgressAllowHosts]
			switch want := fetchers[fn] && given != ""; {
			case want && got != given:
				t.Errorf("allow %q: %s has %s=%v, want %q", given, fn, awsenv.EnvEgressAllowHosts, got, given)
			case !want && ok:
				t.Errorf("allow %q: %s has %s=%v, want none", given, fn, awsenv.EnvEgressAllowHosts, got)
			}
		}
	}
	for _, bad := range []string{"exa mple.com", "10.0.0.0/33", "http://host"} {
		p := CustomerProps{Customer: "acme", LambdaDir: "d", EgressAllowHosts: bad}
		if err := p.Validate(); err == nil || !strings.Contains(err.Error(), "egressAllowHosts") {
			t.Errorf("egressAllowHosts %q: %v, want an error naming egressAllowHosts", bad, err)
		}
	}
}
