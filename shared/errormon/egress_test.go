package errormon_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex/convexfake"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// loopbackPolicy allows 127.0.0.1, where the fakes listen, as an
// operator's VP_EGRESS_ALLOW_HOSTS=127.0.0.1 would.
func loopbackPolicy(t testing.TB) *egress.Policy {
	t.Helper()
	allow, err := egress.ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return egress.New(egress.Options{Allow: allow})
}

// add_deployment refuses at once a deploymentUrl the server must not
// reach, naming the field and the rule.
func TestAddDeploymentRefusesNonPublicURLs(t *testing.T) {
	e := newEnv(t)
	for url, rule := range map[string]string{
		"http://happy-otter-123.convex.cloud":          "http",
		"https://127.0.0.1":                            "loopback",
		"https://127.0.0.1:3210/":                      "loopback",
		"https://169.254.169.254/latest":               "link-local",
		"https://[::ffff:10.0.0.1]":                    "private",
		"https://[::1]:3210":                           "loopback",
		"https://0x7f.1":                               "numeric",
		"https://2130706433":                           "numeric",
		"https://localhost:3210":                       "loopback",
		"https://100.64.0.1":                           "CGNAT",
		"https://[fd00:ec2::254]":                      "unique local",
		"https://user:pw@happy-otter-123.convex.cloud": "user info",
		"ftp://happy-otter-123.convex.cloud":           "scheme",
		"":                                             "required",
	} {
		_, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "app", DeploymentURL: url,
			DeployKeyEnvVar: keyEnvVar, GitHubRepo: "acme/app", Orchestrator: "sigma"})
		var ve *vp.Error
		if !vp.IsKind(err, vp.KindInvalid) || !asVP(err, &ve) || ve.Field != "deploymentUrl" || !strings.Contains(err.Error(), rule) {
			t.Errorf("add_deployment %q: %v, want invalid deploymentUrl naming %q", url, err, rule)
		}
	}
	list, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{})
	if err != nil || len(list.Deployments) != 0 {
		t.Fatalf("deployments stored: %+v, %v", list.Deployments, err)
	}
}

func asVP(err error, e **vp.Error) bool {
	for err != nil {
		if v, ok := err.(*vp.Error); ok {
			*e = v
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// The operator's allow-list lets a local deployment be added, over http.
func TestAllowListAddsALocalDeployment(t *testing.T) {
	e := newEnv(t, func(o *errormon.Options) { o.Egress = loopbackPolicy(t) })
	if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "app", DeploymentURL: "http://127.0.0.1:3210",
		DeployKeyEnvVar: keyEnvVar, GitHubRepo: "acme/app", Orchestrator: "sigma"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "meta", DeploymentURL: "http://169.254.169.254",
		DeployKeyEnvVar: keyEnvVar, GitHubRepo: "acme/app", Orchestrator: "sigma"})
	if !vp.IsKind(err, vp.KindInvalid) || !strings.Contains(err.Error(), "VP_EGRESS_ALLOW_HOSTS") {
		t.Fatalf("an address outside the allow-list: %v", err)
	}
}

// A remote that answers a refusal with a body: list_errors shows the
// status and its class, never a byte of the body.
func TestListErrorsNeverShowsTheRemotesBodyAgainstFakeConvex(t *testing.T) {
	const canary = "CANARY-internal-admin-page-5e1d"
	for _, tc := range []struct {
		status int
		kind   vp.Kind
		want   string
	}{
		{401, vp.KindUnauthorized, "HTTP 401"},
		{500, vp.KindUnavailable, "HTTP 500"},
	} {
		e := newRealEnv(t, realOpts{})
		e.addConvex(t, "app", keyEnvVar)
		e.convex.Script(convexfake.Answer{Status: tc.status, Body: `{"message":"` + canary + `"}`})
		_, err := e.mon.Scan(ctx(), tenant, "app")
		if !vp.IsKind(err, tc.kind) {
			t.Fatalf("scan through a %d: %v, want %v", tc.status, err, tc.kind)
		}
		st := e.status(t, "app")
		if st.Status != "failing" || !strings.Contains(st.LastError, tc.want) {
			t.Fatalf("after a %d: %+v, want lastError naming %s", tc.status, st, tc.want)
		}
		list, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(list)
		for _, text := range []string{string(b), err2s(err), st.LastError, e.logs.String()} {
			if strings.Contains(text, "CANARY") {
				t.Fatalf("after a %d, the remote's body is shown: %s", tc.status, text)
			}
		}
	}
}

func err2s(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// resolver answers every name with its address.
type resolver netip.Addr

func (r resolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// A deployment added under a public name whose DNS now answers loopback
// (rebinding): the scan's dial refuses it; nothing reaches the listener,
// and list_errors says why without the address.
func TestScanRefusesANameThatResolvesToLoopbackAgainstFakeConvex(t *testing.T) {
	var rebound *egress.Policy
	keys := keyMap{}
	e := newRealEnv(t, realOpts{keys: keys, mon: func(o *errormon.Options) {
		o.Egress = egress.New(egress.Options{})
		rebound = egress.New(egress.Options{Resolver: resolver(netip.MustParseAddr("127.0.0.1"))})
		o.Sources[errormon.SourceConvex] = convex.New(convex.Options{Egress: rebound})
	}})
	u, _ := url.Parse(e.convex.URL())
	keys[keyEnvVar] = errormon.DeployKey{Key: adapterKey, URL: "https://happy-otter-123.convex.cloud:" + u.Port()}
	if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: "app", DeploymentURL: "https://happy-otter-123.convex.cloud:" + u.Port(),
		DeployKeyEnvVar: keyEnvVar, GitHubRepo: adapterRepo, Orchestrator: "sigma"}); err != nil {
		t.Fatal(err)
	}
	_, err := e.mon.Scan(ctx(), tenant, "app")
	if !vp.IsKind(err, vp.KindForbidden) {
		t.Fatalf("scan: %v, want forbidden", err)
	}
	st := e.status(t, "app")
	if st.Status != "failing" || !strings.Contains(st.LastError, "refused by egress policy: loopback") || strings.Contains(st.LastError, "127.0.0.1") {
		t.Fatalf("list_errors: %+v", st)
	}
	if n := len(e.convex.Requests()); n != 0 {
		t.Fatalf("the listener got %d requests", n)
	}
}

// A lastError stored before the egress policy quoted the remote's answer:
// list_errors shows its status only.
func TestListErrorsCutsALegacyQuotedAnswer(t *testing.T) {
	e := newEnv(t)
	e.addDeployment(t, "app")
	const op = "test"
	cur, it, err := errormon.Deployments.Get(ctx(), e.st, op, "name", "app", errormon.Deployments.KeyOf(tenant, table.Values{"name": "app"}))
	if err != nil {
		t.Fatal(err)
	}
	cur.LastError = `errormon.convex: deployKeyEnvVar: deployment "app" refused its deploy key (HTTP 401: {"message":"CANARY secret page"}): check the environment variable`
	cur.Failures = 1
	next, err := errormon.Deployments.Item(op, tenant, cur)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.Write(ctx(), store.Put(next, store.IfVersion(it.Version))); err != nil {
		t.Fatal(err)
	}
	list, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{})
	if err != nil || len(list.Deployments) != 1 {
		t.Fatalf("%+v %v", list, err)
	}
	if got := list.Deployments[0].LastError; strings.Contains(got, "CANARY") || !strings.Contains(got, "HTTP 401") {
		t.Fatalf("lastError %q", got)
	}
}
