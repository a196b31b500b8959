package errormon_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/store"
)

// TestOldKeyNamesNeedAKeyAndSendNothingAgainstFakeConvex: deployments
// stored by an older server with a key name that is not a deploy key's
// (written straight to the store: add_deployment refuses them now), and
// one whose valid key is not set, are never scanned with a key: the Keys
// port, which would answer the real key for those names, is not asked,
// the fake Convex receives no request, and list_errors shows "needs a
// key" with what to do.
func TestOldKeyNamesNeedAKeyAndSendNothingAgainstFakeConvex(t *testing.T) {
	keys := keyMap{"VP_MASTER_TOKEN": adapterKey, "DEPLOY_KEY_APP": adapterKey, "vp_deploy_key_app": adapterKey}
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
