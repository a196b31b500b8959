package main

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const githubUsage = `vantagepeers github — each tenant's GitHub webhook secret and token

  vantagepeers github set [--tenant T] --webhook-secret-stdin | --token-stdin   read one secret from stdin
  vantagepeers github set [--tenant T] --login LOGIN                            the account the token acts as
  vantagepeers github show [--tenant T]                                         whether each is set, and its fingerprint
  vantagepeers github remove --tenant T                                         forget a tenant's secrets

The secrets are kept in <data dir>/` + github.CredentialsFile + ` (mode 0600). They are read from
stdin, never from the command line (which other users of the machine can see). --tenant
defaults to "default", whose secrets VP_GITHUB_WEBHOOK_SECRET and VP_GITHUB_TOKEN (and login,
VP_GITHUB_LOGIN) supply when the file does not. Every command also takes --data-dir.

The login is needed for a GitHub App installation token only ("<app-slug>[bot]"): GitHub does
not tell such a token who it is, and the bot honours its "exactly once" markers only in comments
and issues of its own account. A user token's login is asked of GitHub once.
`

// maxSecretBytes bounds what set reads from stdin: GitHub's tokens are
// under 300 characters; a megabyte on stdin is a mistake.
const maxSecretBytes = 4096

// githubCommand administers the GitHub credentials of the data dir. It
// touches only their file, not the store, so it works while the server
// runs (the server rereads the file when it changes).
func githubCommand() *command {
	var gf githubFlags
	return &command{Name: "github", Page: githubUsage,
		Synopsis: []string{"github set [--tenant T] --webhook-secret-stdin | --token-stdin | show [--tenant T] | remove --tenant T"},
		Summary:  "vantagepeers github help",
		Subs:     []string{"set", "show", "remove"},
		Flags: func(fs *flag.FlagSet, sub string) {
			fs.StringVar(&gf.tenant, "tenant", "", `tenant id (set: "default" when omitted; show: every tenant when omitted)`)
			if sub == "set" {
				fs.BoolVar(&gf.hookStdin, "webhook-secret-stdin", false, "read the webhook secret from stdin")
				fs.BoolVar(&gf.tokenStdin, "token-stdin", false, "read the GitHub token from stdin")
				fs.StringVar(&gf.login, "login", "", `the GitHub account the token acts as ("<app-slug>[bot]" for a GitHub App installation token)`)
			}
		},
		Run: func(_ context.Context, e *env) error { return githubCmd(e, gf) },
	}
}

// githubFlags are the flags of the github subcommands.
type githubFlags struct {
	tenant, login         string
	hookStdin, tokenStdin bool
}

func githubCmd(e *env, gf githubFlags) error {
	cmd, tenant := e.sub, gf.tenant
	if len(e.args) > 0 {
		// Not quoted: a stray argument may well be the secret itself.
		return fmt.Errorf("github %s: %d unexpected argument(s); secrets are read from stdin, never from arguments", cmd, len(e.args))
	}
	if tenant != "" && !vp.ValidTenant(tenant) {
		return fmt.Errorf("github %s: --tenant: %q is not a valid tenant id", cmd, tenant)
	}
	f := &github.FileCredentials{
		Path:     filepath.Join(e.dataDir, github.CredentialsFile),
		Defaults: github.CredentialsFromEnv(os.Getenv),
	}
	switch cmd {
	case "set":
		if gf.login != "" {
			if gf.hookStdin || gf.tokenStdin {
				return errors.New("github set: --login is set on its own, without --webhook-secret-stdin or --token-stdin")
			}
			return githubSetLogin(f, cmp.Or(tenant, github.DefaultTenant), gf.login, e.stdout)
		}
		return githubSet(f, cmp.Or(tenant, github.DefaultTenant), gf.hookStdin, gf.tokenStdin, e.stdin, e.stdout)
	case "show":
		return githubShow(f, tenant, e.stdout)
	case "remove":
		if tenant == "" {
			return errors.New("github remove: --tenant is required")
		}
		if err := f.Remove(tenant); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "tenant %s: GitHub credentials removed from %s\n", tenant, f.Path)
		return nil
	}
	return fmt.Errorf("github: unknown subcommand %q; use set, show or remove", cmd)
}

func githubSet(f *github.FileCredentials, tenant string, hook, tok bool, stdin io.Reader, stdout io.Writer) error {
	if hook == tok {
		return errors.New("github set: give exactly one of --webhook-secret-stdin and --token-stdin")
	}
	what := "token"
	if hook {
		what = "webhook secret"
	}
	secret, err := readSecret(stdin)
	if err != nil {
		return fmt.Errorf("github set: the %s on stdin: %w", what, err)
	}
	c := github.Credentials{Token: secret}
	if hook {
		c = github.Credentials{WebhookSecret: secret}
	}
	if err := f.Set(tenant, c); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tenant %s: GitHub %s set (fingerprint %s) in %s\n", tenant, what, github.Fingerprint(secret), f.Path)
	return nil
}

// githubSetLogin records the login a tenant's token acts as: GitHub's
// login syntax (letters, digits and '-', at most 39), with an App's
// "[bot]" suffix.
func githubSetLogin(f *github.FileCredentials, tenant, login string, stdout io.Writer) error {
	if !github.ValidLogin(login) {
		return fmt.Errorf("github set: --login: %q is not a GitHub login (letters, digits and '-', at most 39, optionally ending in [bot])", login)
	}
	if err := f.Set(tenant, github.Credentials{Login: login}); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tenant %s: GitHub login set to %s in %s\n", tenant, login, f.Path)
	return nil
}

// readSecret reads one line from stdin: the secret without its line end
// (spaces inside are kept: a webhook secret may have them).
func readSecret(stdin io.Reader) (string, error) {
	if stdin == nil {
		return "", errors.New("no stdin")
	}
	b, err := io.ReadAll(io.LimitReader(stdin, maxSecretBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxSecretBytes {
		return "", fmt.Errorf("more than %d bytes", maxSecretBytes)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	var lines []string
	for sc.Scan() {
		if l := strings.TrimRight(sc.Text(), "\r"); l != "" {
			lines = append(lines, l)
		}
	}
	switch len(lines) {
	case 0:
		return "", errors.New("empty")
	case 1:
		if strings.TrimSpace(lines[0]) != lines[0] {
			return "", errors.New("it starts or ends with a space, which is most likely a copy mistake")
		}
		return lines[0], nil
	}
	return "", fmt.Errorf("%d lines, want one", len(lines))
}

// githubShow prints, for one tenant or every tenant the file has (and the
// default tenant), whether each secret is set, where it comes from and its
// fingerprint, never its value.
func githubShow(f *github.FileCredentials, tenant string, stdout io.Writer) error {
	tenants := []string{tenant}
	if tenant == "" {
		all, err := f.Tenants()
		if err != nil {
			return err
		}
		tenants = all
		if f.Defaults != (github.Credentials{}) && !slices.Contains(all, github.DefaultTenant) {
			tenants = append([]string{github.DefaultTenant}, all...)
		}
		if len(tenants) == 0 {
			fmt.Fprintf(stdout, "no GitHub credentials in %s (set them with: vantagepeers github set --tenant T --token-stdin)\n", f.Path)
			return nil
		}
	}
	for _, t := range tenants {
		stored, err := f.Stored(t)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "tenant %s:\n", t)
		fmt.Fprintf(stdout, "  webhook secret: %s\n", describeSecret(t, stored.WebhookSecret, f.Defaults.WebhookSecret, github.EnvWebhookSecret))
		fmt.Fprintf(stdout, "  token:          %s\n", describeSecret(t, stored.Token, f.Defaults.Token, github.EnvToken))
		switch {
		case stored.Login != "":
			fmt.Fprintf(stdout, "  login:          %s (from the file)\n", stored.Login)
		case t == github.DefaultTenant && f.Defaults.Login != "":
			fmt.Fprintf(stdout, "  login:          %s (from %s)\n", f.Defaults.Login, github.EnvLogin)
		default:
			fmt.Fprintf(stdout, "  login:          asked of GitHub (GET /user)\n")
		}
	}
	return nil
}

func describeSecret(tenant, stored, def, env string) string {
	switch {
	case stored != "":
		return "set (fingerprint " + github.Fingerprint(stored) + ", from the file)"
	case tenant == github.DefaultTenant && def != "":
		return "set (fingerprint " + github.Fingerprint(def) + ", from " + env + ")"
	}
	return "not set"
}
