package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestDeployKeyCommands: set reads the key from stdin and shows its
// fingerprint, show lists a tenant's names (the default tenant's from the
// environment too) with fingerprints, remove forgets one; no output ever
// holds a key.
func TestDeployKeyCommands(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	const key, key2, envKey = "prod:happy-otter-123|eyJ2MiI6ImNsaSJ9", "prod:other|second-key", "from-the-environment-key"
	t.Setenv("VP_DEPLOY_KEY_ENV", envKey)
	runIn := func(stdin string, args ...string) (string, error) {
		var out, errb bytes.Buffer
		err := run(ctx, append(args, "--data-dir", dir), strings.NewReader(stdin), &out, &errb)
		s := out.String() + errb.String()
		if err != nil {
			s += err.Error()
		}
		for _, secret := range []string{key, key2, envKey} {
			if strings.Contains(s, secret) {
				t.Fatalf("%v shows a key:\n%s", args, s)
			}
		}
		return s, err
	}
	runOK := func(stdin string, args ...string) string {
		t.Helper()
		out, err := runIn(stdin, args...)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out
	}

	out := runOK(key+"\n", "deploykey", "set", "--tenant", "acme", "VP_DEPLOY_KEY_APP")
	if !strings.Contains(out, github.Fingerprint(key)) || !strings.Contains(out, "tenant acme") {
		t.Fatalf("set: %s", out)
	}
	runOK(key2+"\n", "deploykey", "set", "VP_DEPLOY_KEY_WEB", "--tenant", "acme")
	if fi, err := os.Stat(filepath.Join(dir, errormon.DeployKeysFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("keys file: %v, %v", fi, err)
	}
	out = runOK("", "deploykey", "show", "--tenant", "acme")
	for _, want := range []string{"VP_DEPLOY_KEY_APP", github.Fingerprint(key), "VP_DEPLOY_KEY_WEB", github.Fingerprint(key2)} {
		if !strings.Contains(out, want) {
			t.Errorf("show --tenant acme lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "VP_DEPLOY_KEY_ENV") {
		t.Errorf("acme's keys list the environment's:\n%s", out)
	}
	out = runOK("", "deploykey", "show", "--tenant", "acme", "VP_DEPLOY_KEY_APP")
	if !strings.Contains(out, github.Fingerprint(key)) || strings.Contains(out, "VP_DEPLOY_KEY_WEB") {
		t.Errorf("show NAME:\n%s", out)
	}
	out = runOK("", "deploykey", "show")
	if !strings.Contains(out, "tenant default") || !strings.Contains(out, "VP_DEPLOY_KEY_ENV") || !strings.Contains(out, github.Fingerprint(envKey)) ||
		!strings.Contains(out, "environment") || strings.Contains(out, "VP_DEPLOY_KEY_APP") {
		t.Errorf("show (default):\n%s", out)
	}
	if out := runOK("", "deploykey", "remove", "--tenant", "acme", "VP_DEPLOY_KEY_APP"); !strings.Contains(out, "removed") {
		t.Fatalf("remove: %s", out)
	}
	if out := runOK("", "deploykey", "show", "--tenant", "acme"); strings.Contains(out, "VP_DEPLOY_KEY_APP") {
		t.Fatalf("after remove:\n%s", out)
	}
	stored, err := deployKeys(dir).Stored("acme")
	if err != nil || len(stored) != 1 || stored["VP_DEPLOY_KEY_WEB"].Key != key2 {
		t.Fatalf("stored after remove: %d keys, %v", len(stored), err)
	}

	for _, tc := range []struct {
		name, stdin, want string
		args              []string
	}{
		{"not a deploy key's name", key, `^VP_DEPLOY_KEY_[A-Z0-9_]{1,64}$`, []string{"set", "VP_MASTER_TOKEN"}},
		{"no name", key, "one NAME", []string{"set"}},
		{"a key in argv", "", "never from arguments", []string{"set", "VP_DEPLOY_KEY_APP", key}},
		{"empty stdin", "\n", "empty", []string{"set", "VP_DEPLOY_KEY_APP"}},
		{"two lines", "a\nb\n", "lines", []string{"set", "VP_DEPLOY_KEY_APP"}},
		{"bad tenant", key, "tenant", []string{"set", "--tenant", "Not A Tenant", "VP_DEPLOY_KEY_APP"}},
		{"remove an absent key", "", "no stored key", []string{"remove", "--tenant", "acme", "VP_DEPLOY_KEY_APP"}},
		{"unknown subcommand", "", "unknown subcommand", []string{"rotate"}},
	} {
		out, err := runIn(tc.stdin, append([]string{"deploykey"}, tc.args...)...)
		if err == nil || !strings.Contains(out, tc.want) {
			t.Errorf("%s: %v, %q; want a failure saying %q", tc.name, err, out, tc.want)
		}
	}
}

// TestLogGroupsOfATenant: an agent of tenant acme may name only the log
// groups the operator allowed for acme (`vantagepeers loggroups allow`):
// none by default, another tenant's never; the refusal names the field
// and the rule.
func TestLogGroupsOfATenant(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	cli := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := run(ctx, append(args, "--data-dir", dir), nil, &out, &errb); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errb.String())
		}
		return out.String()
	}
	a, err := openApp(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	acme := agentOf(t, a, "acme")
	add := func(groups ...string) error {
		_, err := callAs(t, a, acme, "add_deployment", map[string]any{"name": "api", "source": "cloudwatch", "logGroups": groups,
			"githubRepo": "acme/app", "orchestrator": "alice"})
		return err
	}
	refused := func(when string, groups ...string) {
		t.Helper()
		err := add(groups...)
		if err == nil {
			t.Errorf("%s: %v accepted", when, groups)
			return
		}
		for _, want := range []string{"logGroups", "only the log groups the operator allowed", "vantagepeers loggroups allow --tenant acme"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%s: the refusal of %v does not say %q: %v", when, groups, want, err)
			}
		}
	}
	refused("nothing allowed", "/aws/lambda/acme-api")
	cli("loggroups", "allow", "--tenant", "acme", "/aws/lambda/acme-*")
	cli("loggroups", "allow", "--tenant", vp.DefaultTenant, "/aws/lambda/billing")
	refused("another tenant's group", "/aws/lambda/billing")
	refused("outside the prefix", "/aws/lambda/acme")
	if err := add("/aws/lambda/acme-api", "/aws/lambda/acme-worker"); err != nil {
		t.Fatalf("allowed groups refused: %v", err)
	}
	out := cli("loggroups", "show")
	if !strings.Contains(out, "tenant acme: /aws/lambda/acme-*") || !strings.Contains(out, "tenant default: /aws/lambda/billing") {
		t.Errorf("show:\n%s", out)
	}
	cli("loggroups", "remove", "--tenant", "acme", "/aws/lambda/acme-*")
	refused("after remove", "/aws/lambda/acme-api")
	var errb bytes.Buffer
	if err := run(ctx, []string{"loggroups", "allow", "--tenant", "acme", "*", "--data-dir", dir}, nil, &bytes.Buffer{}, &errb); err == nil {
		t.Error("allow * (every group) succeeded")
	}
}
