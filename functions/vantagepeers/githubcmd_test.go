package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/github"
)

func TestGitHubCommands(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	t.Setenv(github.EnvWebhookSecret, "env-hook-secret")
	t.Setenv(github.EnvToken, "")
	const tok, hook = "ghp_cliSECRETtoken", "cli hook secret"

	runIn := func(stdin string, args ...string) (string, string, error) {
		var out, errb bytes.Buffer
		err := run(ctx, append(args, "--data-dir", dir), strings.NewReader(stdin), &out, &errb)
		return out.String(), errb.String(), err
	}
	runOK := func(stdin string, args ...string) string {
		t.Helper()
		out, errs, err := runIn(stdin, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, errs)
		}
		return out
	}
	noSecret := func(what, s string) {
		t.Helper()
		for _, secret := range []string{tok, hook, "env-hook-secret"} {
			if strings.Contains(s, secret) {
				t.Fatalf("%s shows a secret:\n%s", what, s)
			}
		}
	}

	out := runOK(tok+"\n", "github", "set", "--tenant", "acme", "--token-stdin")
	noSecret("set", out)
	if !strings.Contains(out, github.Fingerprint(tok)) || !strings.Contains(out, "tenant acme") {
		t.Fatalf("set: %s", out)
	}
	out = runOK(hook+"\r\n", "github", "set", "--tenant", "acme", "--webhook-secret-stdin")
	noSecret("set", out)

	path := filepath.Join(dir, github.CredentialsFile)
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v, %v", fi, err)
	}
	got, err := (&github.FileCredentials{Path: path}).Credentials(ctx, "acme")
	if err != nil || got.Token != tok || got.WebhookSecret != hook {
		t.Fatalf("stored %q/%q, %v", got.WebhookSecret, got.Token, err)
	}

	out = runOK("", "github", "show", "--tenant", "acme")
	noSecret("show", out)
	for _, want := range []string{"tenant acme", github.Fingerprint(tok), github.Fingerprint(hook), "from the file"} {
		if !strings.Contains(out, want) {
			t.Fatalf("show --tenant acme lacks %q:\n%s", want, out)
		}
	}
	// Every tenant, the default one with its secret from the environment.
	out = runOK("", "github", "show")
	noSecret("show", out)
	for _, want := range []string{"tenant acme", "tenant default", "from " + github.EnvWebhookSecret, "not set"} {
		if !strings.Contains(out, want) {
			t.Fatalf("show lacks %q:\n%s", want, out)
		}
	}
	// The login of an App installation token, which GitHub does not tell.
	if out := runOK("", "github", "set", "--tenant", "acme", "--login", "acme-ci[bot]"); !strings.Contains(out, "acme-ci[bot]") {
		t.Fatalf("set --login: %s", out)
	}
	if got, err := (&github.FileCredentials{Path: path}).Credentials(ctx, "acme"); err != nil || got.Login != "acme-ci[bot]" || got.Token != tok {
		t.Fatalf("after set --login: login %q, token kept %v, %v", got.Login, got.Token == tok, err)
	}
	if out := runOK("", "github", "show", "--tenant", "acme"); !strings.Contains(out, "login:          acme-ci[bot]") {
		t.Fatalf("show after set --login:\n%s", out)
	}
	// set without --tenant writes the default tenant.
	runOK("ghp_default\n", "github", "set", "--token-stdin")
	if out := runOK("", "github", "show", "--tenant", "default"); !strings.Contains(out, github.Fingerprint("ghp_default")) {
		t.Fatalf("default tenant after set:\n%s", out)
	}

	if out := runOK("", "github", "remove", "--tenant", "acme"); !strings.Contains(out, "removed") {
		t.Fatalf("remove: %s", out)
	}
	if out := runOK("", "github", "show", "--tenant", "acme"); strings.Contains(out, github.Fingerprint(tok)) {
		t.Fatalf("acme after remove:\n%s", out)
	}

	for _, tc := range []struct {
		name, stdin string
		args        []string
	}{
		{"both flags", tok, []string{"set", "--token-stdin", "--webhook-secret-stdin"}},
		{"neither flag", tok, []string{"set"}},
		{"empty stdin", "\n", []string{"set", "--token-stdin"}},
		{"two lines", "a\nb\n", []string{"set", "--token-stdin"}},
		{"padded secret", " " + tok + "\n", []string{"set", "--token-stdin"}},
		{"too long", strings.Repeat("x", maxSecretBytes+1), []string{"set", "--token-stdin"}},
		{"a secret in argv", "", []string{"set", "--token", tok}},
		{"a positional secret", "", []string{"set", "--token-stdin", tok}},
		{"bad tenant", tok, []string{"set", "--tenant", "Not A Tenant", "--token-stdin"}},
		{"remove without tenant", "", []string{"remove"}},
		{"a login that is not one", "", []string{"set", "--login", "@octocat [x](https://evil.example)"}},
		{"a login with a secret", tok, []string{"set", "--login", "acme-ci[bot]", "--token-stdin"}},
		{"unknown subcommand", "", []string{"rotate"}},
	} {
		out, errs, err := runIn(tc.stdin, append([]string{"github"}, tc.args...)...)
		if err == nil {
			t.Errorf("%s: succeeded", tc.name)
		}
		msg := out + errs
		if err != nil {
			msg += err.Error()
		}
		noSecret(tc.name, msg)
	}
}
