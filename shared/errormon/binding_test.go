package errormon_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
)

// TestConvexKeyOrigin: a Convex deploy key of one deployment (prod: or
// dev: and the deployment's name) is bound to that deployment's URL;
// preview and project keys, and anything else, to none.
func TestConvexKeyOrigin(t *testing.T) {
	for key, want := range map[string]string{
		"prod:happy-otter-123|eyJ2MiI6Ij":        "https://happy-otter-123.convex.cloud",
		"dev:quiet-fox-7|eyJ2MiI6Ij":             "https://quiet-fox-7.convex.cloud",
		"prod:evil.example/x|eyJ":                "",
		"prod:evil.example|eyJ":                  "",
		"prod:127.0.0.1:8080|eyJ":                "",
		"prod:a@evil|eyJ":                        "",
		"prod:-bad|eyJ":                          "",
		"prod:|eyJ":                              "",
		"prod:happy-otter-123":                   "",
		"preview:team:project|eyJ":               "",
		"project:team:project|eyJ":               "",
		"happy-otter-123|eyJ":                    "",
		"a-plain-secret":                         "",
		"prod:" + strings.Repeat("a", 64) + "|x": "",
	} {
		got, ok := errormon.ConvexKeyOrigin(key)
		if got != want || ok != (want != "") {
			t.Errorf("ConvexKeyOrigin(%q) = %q, %v; want %q", key, got, ok, want)
		}
	}
}

// TestKeyIsSentOnlyToItsOrigin: an agent names its tenant's deploy key
// with a URL of its own: the source is never read with the key, the scan
// is no job error, and list_errors says the key is bound to another URL
// and how to bind it; a deployment at the key's origin (stored, or
// derived from a Convex key's own prefix) is read with it; a key bound
// to nothing is never sent ("needs a key", bind it with its URL).
func TestKeyIsSentOnlyToItsOrigin(t *testing.T) {
	const (
		bound   = "an-opaque-key-bound-by-url"
		derived = "dev:quiet-fox-7|eyJ2MiI6ImRlcml2ZWQifQ=="
		unbound = "an-opaque-key-bound-to-nothing"
	)
	keys := keyMap{
		"VP_DEPLOY_KEY_BOUND":   {Key: bound, URL: "https://app.example.com"},
		"VP_DEPLOY_KEY_DERIVED": {Key: derived},
		"VP_DEPLOY_KEY_UNBOUND": {Key: unbound},
	}
	allow, err := egress.ParseAllow("app.example.com")
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, func(o *errormon.Options) { o.Keys, o.Egress = keys, egress.New(egress.Options{Allow: allow}) })
	add := func(name, url, key string) {
		t.Helper()
		if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: name, DeploymentURL: url,
			DeployKeyEnvVar: key, GitHubRepo: "acme/app", Orchestrator: "sigma"}); err != nil {
			t.Fatal(err)
		}
	}
	add("steal-bound", "https://attacker.example", "VP_DEPLOY_KEY_BOUND")
	add("steal-bound-port", "https://app.example.com:8443", "VP_DEPLOY_KEY_BOUND")
	add("steal-bound-http", "http://app.example.com", "VP_DEPLOY_KEY_BOUND")
	add("steal-derived", "https://quiet-fox-7.convex.cloud.attacker.example", "VP_DEPLOY_KEY_DERIVED")
	add("unbound", "https://attacker.example", "VP_DEPLOY_KEY_UNBOUND")
	if _, err := e.mon.ScanAll(ctx(), tenant); err != nil {
		t.Fatalf("a pass over deployments whose key may not be sent is a job error: %v", err)
	}
	e.src.mu.Lock()
	sent := strings.Join(e.src.keys, "\n")
	e.src.mu.Unlock()
	for _, k := range []string{bound, derived, unbound} {
		if strings.Contains(sent, k) {
			t.Errorf("the source was read with %q at a URL it is not bound to", k)
		}
	}
	list, err := e.mon.ListErrors(ctx(), admin(tenant), errormon.ListInput{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]errormon.DeploymentStatus{}
	for _, d := range list.Deployments {
		got[d.Name] = d
	}
	for name, want := range map[string][]string{
		"steal-bound":      {errormon.StatusKeyElsewhere, "https://app.example.com", "https://attacker.example", "set keys[acme/VP_DEPLOY_KEY_BOUND] for https://attacker.example"},
		"steal-bound-port": {errormon.StatusKeyElsewhere, "https://app.example.com:8443"},
		"steal-bound-http": {errormon.StatusKeyElsewhere, "http://app.example.com"},
		"steal-derived":    {errormon.StatusKeyElsewhere, "https://quiet-fox-7.convex.cloud", "prefix"},
		"unbound":          {errormon.StatusNeedsKey, "bound to no URL", "set keys[acme/VP_DEPLOY_KEY_UNBOUND] for https://attacker.example"},
	} {
		st := got[name]
		if st.Status != want[0] {
			t.Errorf("%s: status %q, want %q (%s)", name, st.Status, want[0], st.LastError)
		}
		for _, w := range want[1:] {
			if !strings.Contains(st.LastError, w) {
				t.Errorf("%s: %q does not say %q", name, st.LastError, w)
			}
		}
		b, _ := json.Marshal(st)
		for _, k := range []string{bound, derived, unbound} {
			if strings.Contains(string(b), k) {
				t.Errorf("%s: the status shows a key", name)
			}
		}
	}

	// At the key's own origin, however spelled, the key is sent.
	add("ok-bound", "HTTPS://App.Example.com:443/", "VP_DEPLOY_KEY_BOUND")
	add("ok-derived", "https://quiet-fox-7.convex.cloud", "VP_DEPLOY_KEY_DERIVED")
	e.scan(t, "ok-bound")
	e.scan(t, "ok-derived")
	e.src.mu.Lock()
	sent = strings.Join(e.src.keys, "\n")
	e.src.mu.Unlock()
	if !strings.Contains(sent, bound) || !strings.Contains(sent, derived) {
		t.Fatalf("deployments at their key's origin were not read with it (keys sent: %q)", e.src.keys)
	}
	for _, name := range []string{"ok-bound", "ok-derived"} {
		if st := e.status(t, name); st.Status != "ok" {
			t.Errorf("%s: %+v, want ok", name, st)
		}
	}
}

// TestNeedsKeyIsAStatusNotAJobError: a deployment without a key, or whose
// key is bound elsewhere, is something only its tenant can fix: passes
// of the job over it return no error (no alarm for the operator), and
// the operator's log says it once per deployment, at info, not at each
// pass.
func TestNeedsKeyIsAStatusNotAJobError(t *testing.T) {
	clk := &clock{}
	e := newEnv(t, func(o *errormon.Options) {
		o.Keys = keyMap{"VP_DEPLOY_KEY_ELSEWHERE": {Key: "prod:happy-otter-123|x"}}
		o.Now = clk.Now
	})
	for name, key := range map[string]string{"nokey": "VP_DEPLOY_KEY_UNSET", "elsewhere": "VP_DEPLOY_KEY_ELSEWHERE"} {
		if _, err := e.mon.AddDeployment(ctx(), admin(tenant), errormon.DeploymentInput{Name: name, DeploymentURL: "https://other-app-9.convex.cloud",
			DeployKeyEnvVar: key, GitHubRepo: "acme/app", Orchestrator: "sigma"}); err != nil {
			t.Fatal(err)
		}
	}
	for pass := range 3 {
		if _, err := e.mon.ScanAll(ctx(), tenant); err != nil {
			t.Fatalf("pass %d: %v", pass, err)
		}
		clk.Add(6 * time.Minute) // past the recheck delay: due again

	}
	for name, want := range map[string]string{"nokey": errormon.StatusNeedsKey, "elsewhere": errormon.StatusKeyElsewhere} {
		if st := e.status(t, name); st.Status != want {
			t.Errorf("%s: %+v, want %s", name, st, want)
		}
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(e.logs.String()), "\n") {
			if strings.Contains(l, `"deployment":"`+name+`"`) {
				lines = append(lines, l)
			}
		}
		if len(lines) != 1 {
			t.Errorf("%s: %d log lines over 3 passes, want 1:\n%s", name, len(lines), strings.Join(lines, "\n"))
			continue
		}
		if name == "nokey" && !strings.Contains(lines[0], `"level":"INFO"`) {
			t.Errorf("%s is logged above info: %s", name, lines[0])
		}
	}
	if e.src.reads != 0 {
		t.Errorf("the source was read %d times", e.src.reads)
	}
}
