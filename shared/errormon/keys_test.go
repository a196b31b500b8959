package errormon_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestOldKeyNamesNeedAKeyAndSendNothingAgainstFakeConvex: deployments
// stored by an older server with a key name that is not a deploy key's
// (written straight to the store: add_deployment refuses them now), and
// one whose valid key is not set, are never scanned with a key: the Keys
// port, which would answer the real key for those names, is not asked,
// the fake Convex receives no request, and list_errors shows "needs a
// key" with what to do.
func TestOldKeyNamesNeedAKeyAndSendNothingAgainstFakeConvex(t *testing.T) {
	keys := keyMap{"VP_MASTER_TOKEN": {Key: adapterKey}, "DEPLOY_KEY_APP": {Key: adapterKey}, "vp_deploy_key_app": {Key: adapterKey}}
	e := newRealEnv(t, realOpts{keys: keys, convex: convexfake.Options{Hold: 300 * time.Millisecond}})
	for name, keyVar := range map[string]string{"master": "VP_MASTER_TOKEN", "old": "DEPLOY_KEY_APP", "lower": "vp_deploy_key_app",
		"unset": "VP_DEPLOY_KEY_UNSET"} {
		d := errormon.Deployment{ID: "dep_" + name, Name: name, Source: errormon.SourceConvex, DeploymentURL: e.convex.URL(),
			DeployKeyEnvVar: keyVar, GitHubRepo: adapterRepo, Orchestrator: "sigma", Active: true}
		it, err := errormon.Deployments.Item("test", tenant, d)
		if err != nil {
			t.Fatal(err)
		}
		if err := e.st.Write(ctx(), store.Put(it, store.IfNotExists)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"master", "old", "lower"} {
		if st := e.status(t, name); st.Status != "needs a key" {
			t.Errorf("%s before any scan: %+v, want needs a key", name, st)
		}
	}
	_, _ = e.mon.ScanAll(ctx(), tenant)
	_, _ = e.mon.ScanAll(ctx(), tenant)
	if reqs := e.convex.Requests(); len(reqs) != 0 {
		t.Fatalf("the fake Convex received %d requests from deployments without a valid key", len(reqs))
	}
	for name, want := range map[string][]string{
		"master": {"VP_MASTER_TOKEN", "add_deployment", "VP_DEPLOY_KEY_"},
		"old":    {"add_deployment", "VP_DEPLOY_KEY_APP"},
		"lower":  {"add_deployment", "VP_DEPLOY_KEY_APP"},
		"unset":  {"VP_DEPLOY_KEY_UNSET", "not set", "keys[" + tenant + "/VP_DEPLOY_KEY_UNSET]"},
	} {
		st := e.status(t, name)
		if st.Status != "needs a key" {
			t.Errorf("%s: status %q, want needs a key", name, st.Status)
		}
		for _, w := range want {
			if !strings.Contains(st.LastError, w) {
				t.Errorf("%s: %q does not say %q", name, st.LastError, w)
			}
		}
		if strings.Contains(st.LastError, adapterKey) {
			t.Errorf("%s: the status shows a key", name)
		}
	}
	if strings.Contains(e.logs.String(), adapterKey) {
		t.Error("a key reached the logs")
	}
}

// TestDeployKeyNamesFollowTheRule: add_deployment takes a deploy key's
// name only, and its refusal states the rule on the field.
func TestDeployKeyNamesFollowTheRule(t *testing.T) {
	e := newEnv(t)
	long := "VP_DEPLOY_KEY_" + strings.Repeat("A", 64)
	for name, ok := range map[string]bool{
		"VP_DEPLOY_KEY_MYAPP": true, "VP_DEPLOY_KEY_1": true, "VP_DEPLOY_KEY__": true, long: true,
		long + "A": false, "VP_DEPLOY_KEY_": false, "VP_DEPLOY_KEY_myapp": false, "VP_DEPLOY_KEY_MY-APP": false,
		"VP_DEPLOY_KEY_É": false, "VP_MASTER_TOKEN": false, "VP_GITHUB_TOKEN": false, "AWS_SECRET_ACCESS_KEY": false,
		"DEPLOY_KEY_MYAPP": false, "XVP_DEPLOY_KEY_A": false, "VP_DEPLOY_KEY_A\n": false, "": false,
	} {
		if got := errormon.ValidDeployKeyName(name); got != ok {
			t.Errorf("ValidDeployKeyName(%q) = %v, want %v", name, got, ok)
		}
		_, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "app", DeploymentURL: "https://happy-otter-123.convex.cloud",
			DeployKeyEnvVar: name, GitHubRepo: "acme/app", Orchestrator: "sigma"})
		if ok {
			if err != nil {
				t.Errorf("add_deployment with %q: %v", name, err)
			}
			continue
		}
		wantKind(t, err, vp.KindInvalid, "deployKeyEnvVar")
		if !strings.Contains(err.Error(), `^VP_DEPLOY_KEY_[A-Z0-9_]{1,64}$`) {
			t.Errorf("the refusal of %q does not state the rule: %v", name, err)
		}
	}
}

// TestLogGroupsAreTheOperatorsChoiceForTheTenant: a CloudWatch deployment
// may name only log groups the policy allows for its tenant (a name, or
// a prefix*), at add_deployment and again at each scan, which reads
// nothing once the operator withdrew a group.
func TestLogGroupsAreTheOperatorsChoiceForTheTenant(t *testing.T) {
	policy := errormon.StaticLogGroups{Tenants: map[string][]string{tenant: {"/aws/lambda/acme-*", "/ecs/api"}, "other": {"/aws/lambda/other-app"}},
		How: "ask the operator"}
	e := newEnv(t, func(o *errormon.Options) { o.LogGroups = policy })
	add := func(groups ...string) error {
		_, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "cw", Source: errormon.SourceCloudWatch,
			LogGroups: groups, GitHubRepo: "acme/app", Orchestrator: "sigma"})
		return err
	}
	for _, groups := range [][]string{{"/aws/lambda/other-app"}, {"/ecs/api2"}, {"/ecs/ap"}, {"/aws/lambda/acme-web", "/aws/lambda/acmf"},
		{"/aws/lambda/acme"}} {
		err := add(groups...)
		wantKind(t, err, vp.KindForbidden, "logGroups")
		for _, want := range []string{"only the log groups the operator allowed", "/aws/lambda/acme-*, /ecs/api", "ask the operator"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the refusal of %v does not say %q: %v", groups, want, err)
			}
		}
	}
	if err := add("/aws/lambda/acme-web", "/aws/lambda/acme-", "/ecs/api"); err != nil {
		t.Fatalf("allowed groups refused: %v", err)
	}
	// No policy: no group at all.
	bare := newEnv(t)
	_, err := bare.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "cw", Source: errormon.SourceCloudWatch,
		LogGroups: []string{"/ecs/api"}, GitHubRepo: "acme/app", Orchestrator: "sigma"})
	wantKind(t, err, vp.KindForbidden, "logGroups")

	// The operator withdraws /ecs/api: the next scan reads nothing.
	e.src.add(cause(1, 1))
	policy.Tenants[tenant] = []string{"/aws/lambda/acme-*"}
	_, err = e.mon.Scan(ctx(), tenant, "cw")
	wantKind(t, err, vp.KindForbidden, "/ecs/api")
	if e.src.reads != 0 {
		t.Fatalf("a scan of a withdrawn log group read the source %d times", e.src.reads)
	}
	policy.Tenants[tenant] = []string{"/aws/lambda/acme-*", "/ecs/api"}
	if n, err := e.mon.Scan(ctx(), tenant, "cw"); err != nil || n != 1 {
		t.Fatalf("the scan once allowed again: %d, %v", n, err)
	}
}

func TestLogGroupPatterns(t *testing.T) {
	for p, ok := range map[string]bool{
		"/ecs/api": true, "/aws/lambda/acme-*": true, "a*": true, strings.Repeat("a", 512): true, strings.Repeat("a", 511) + "*": true,
		"*": false, "": false, "a*b": false, "a**": false, "/aws/lambda/?": false, strings.Repeat("a", 513): false,
		strings.Repeat("a", 512) + "*": false, "/ecs/api:log-stream:x": false, "/ecs/ api": false,
	} {
		if got := errormon.ValidLogGroupPattern(p); got != ok {
			t.Errorf("ValidLogGroupPattern(%q) = %v, want %v", p, got, ok)
		}
	}
	if errormon.LogGroupAllowed([]string{"*"}, "/anything") {
		t.Error("an empty prefix allowed a group")
	}
}
