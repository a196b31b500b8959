package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// An ordinary agent names one of its own tenant's deploy keys with a
// listener of its own as the deploymentUrl: the key stored with
// `deploykey set --url` (acme's) and the default tenant's environment key
// (a Convex key of happy-otter-123) never reach that listener, though it
// is reachable (VP_EGRESS_ALLOW_HOSTS=127.0.0.1); the scan is no job
// error and list_errors says "key bound to another URL". The deployment
// at the URL the key is bound to receives it.
func TestAgentCannotSendItsTenantsKeyToItsListener(t *testing.T) {
	ctx := context.Background()
	const acmeKey, envKey = "acme-opaque-deploy-key-0123456789", "prod:happy-otter-123|eyJ2MiI6ImVudi1rZXkifQ=="
	t.Setenv("VP_DEPLOY_KEY_ENV", envKey)
	t.Setenv("VP_EGRESS_ALLOW_HOSTS", "127.0.0.1")
	t.Setenv("VP_GITHUB_API_URL", "")
	owner, thief := newListener(t), newListener(t)
	dir := filepath.Join(t.TempDir(), "data")
	cli := func(stdin string, args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(ctx, append(args, "--data-dir", dir), strings.NewReader(stdin), &out, &errb)
		return out.String() + errb.String(), err
	}
	if out, err := cli(acmeKey+"\n", "deploykey", "set", "--tenant", "acme", "--url", owner.URL, "VP_DEPLOY_KEY_APP"); err != nil {
		t.Fatalf("deploykey set --url: %v\n%s", err, out)
	}
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	acme, def := agentOf(t, a, "acme"), agentOf(t, a, vp.DefaultTenant)
	add := func(p vp.Principal, name, url, key string) {
		t.Helper()
		if _, err := callAs(t, a, p, "add_deployment", map[string]any{"name": name, "deploymentUrl": url,
			"deployKeyEnvVar": key, "githubRepo": "acme/app", "orchestrator": "alice"}); err != nil {
			t.Fatalf("add_deployment %s: %v", name, err)
		}
	}
	add(acme, "steal", thief.URL, "VP_DEPLOY_KEY_APP")
	add(acme, "steal-path", thief.URL+"/"+strings.TrimPrefix(owner.URL, "http://"), "VP_DEPLOY_KEY_APP")
	add(acme, "app", owner.URL, "VP_DEPLOY_KEY_APP")
	add(def, "steal-env", thief.URL, "VP_DEPLOY_KEY_ENV")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tenant := range []string{"acme", vp.DefaultTenant} {
		if out, err := cli("", "jobs", "run", "error-monitor", "--tenant", tenant); err != nil {
			t.Errorf("the error-monitor job of %s failed (a key bound elsewhere is the tenant's to fix: a status): %v\n%s", tenant, err, out)
		}
	}
	all, auths := thief.received()
	for name, k := range map[string]string{"acme's stored key": acmeKey, "the environment's key": envKey, "its secret part": "eyJ2MiI6ImVudi1rZXkifQ"} {
		if strings.Contains(all, k) {
			t.Errorf("the agent's listener received %s", name)
		}
	}
	if len(auths) != 0 {
		t.Errorf("the agent's listener received %d requests", len(auths))
	}
	if _, got := owner.received(); !strings.Contains(strings.Join(got, "\n"), "Convex "+acmeKey) {
		t.Fatalf("the deployment at the key's URL never received it (%d requests): the test proves nothing", len(got))
	}

	a, err = openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	for _, p := range []vp.Principal{acme, def} {
		raw, err := callAs(t, a, p, "list_errors", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		var l errormon.List
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatal(err)
		}
		for _, d := range l.Deployments {
			want := errormon.StatusKeyElsewhere
			if d.Name == "app" {
				want = "ok"
			}
			if d.Status != want {
				t.Errorf("%s: status %q (%s), want %q", d.Name, d.Status, d.LastError, want)
			}
			if strings.Contains(d.LastError, acmeKey) || strings.Contains(d.LastError, envKey) {
				t.Errorf("%s: the status shows a key", d.Name)
			}
		}
	}
}

// TestDeployKeySetBindsTheKey: `deploykey set --url` stores the URL's
// origin and `show` prints it; a key that is not a Convex key of one
// deployment is refused without --url (it would never be sent), saying
// so; show says where each key may be sent, the environment's included.
func TestDeployKeySetBindsTheKey(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	const opaque, convexKey = "opaque-key-0123456789", "dev:quiet-fox-7|eyJ2MiI6ImRldiJ9"
	t.Setenv("VP_DEPLOY_KEY_OPAQUEENV", "opaque-env-key-987")
	runIn := func(stdin string, args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(ctx, append(args, "--data-dir", dir), strings.NewReader(stdin), &out, &errb)
		s := out.String() + errb.String()
		if err != nil {
			s += err.Error()
		}
		for _, k := range []string{opaque, convexKey, "opaque-env-key-987"} {
			if strings.Contains(s, k) {
				t.Fatalf("%v shows a key:\n%s", args, s)
			}
		}
		return s, err
	}
	if out, err := runIn(opaque+"\n", "deploykey", "set", "VP_DEPLOY_KEY_OPAQUE"); err == nil || !strings.Contains(out, "--url") {
		t.Errorf("an opaque key without --url: %v\n%s", err, out)
	}
	if out, err := runIn(opaque+"\n", "deploykey", "set", "--url", "not a url", "VP_DEPLOY_KEY_OPAQUE"); err == nil || !strings.Contains(out, "url") {
		t.Errorf("--url 'not a url': %v\n%s", err, out)
	}
	if out, err := runIn(opaque+"\n", "deploykey", "set", "VP_DEPLOY_KEY_OPAQUE", "--url", "https://Logs.Example.com/any/path"); err != nil ||
		!strings.Contains(out, "https://logs.example.com") || !strings.Contains(out, github.Fingerprint(opaque)) {
		t.Fatalf("set --url: %v\n%s", err, out)
	}
	if out, err := runIn(convexKey+"\n", "deploykey", "set", "VP_DEPLOY_KEY_FOX"); err != nil || !strings.Contains(out, "https://quiet-fox-7.convex.cloud") {
		t.Fatalf("set of a Convex key without --url: %v\n%s", err, out)
	}
	out, err := runIn("", "deploykey", "show")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"VP_DEPLOY_KEY_OPAQUE: set", "sent only to https://logs.example.com", "sent only to https://quiet-fox-7.convex.cloud (from the key's own prefix)",
		"VP_DEPLOY_KEY_OPAQUEENV", "bound to no URL"} {
		if !strings.Contains(out, want) {
			t.Errorf("show lacks %q:\n%s", want, out)
		}
	}
	stored, err := deployKeys(dir).Stored(vp.DefaultTenant)
	if err != nil || stored["VP_DEPLOY_KEY_OPAQUE"].URL != "https://logs.example.com" || stored["VP_DEPLOY_KEY_FOX"].URL != "" {
		t.Fatalf("stored: %+v, %v", stored, err)
	}
}
