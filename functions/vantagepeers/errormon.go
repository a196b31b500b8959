package main

// The error monitor's side of the embedded binary: its ports (log sources,
// the tenants' deploy keys and allowed log groups, in the data dir) and its
// commands (deploykey, loggroups, errors group --deployment).

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/errormon/templates"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/tenantfile"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// deployKeys are the tenants' deploy keys in the data dir, each bound to
// a URL; the default tenant's also from the environment variable of a
// deploy key's name (VP_DEPLOY_KEY_*, bound by its own prefix only), read
// at each scan (never stored). No other tenant reads the environment.
func deployKeys(dataDir string) *errormon.FileKeys {
	return &errormon.FileKeys{File: &tenantfile.File[map[string]errormon.DeployKey]{Path: filepath.Join(dataDir, errormon.DeployKeysFile)}, Getenv: os.Getenv}
}

// logGroups are the CloudWatch Logs log groups the operator allowed each
// tenant (`vantagepeers loggroups`); none by default.
func logGroups(dataDir string) *errormon.FileLogGroups {
	return &errormon.FileLogGroups{File: &tenantfile.File[[]string]{Path: filepath.Join(dataDir, errormon.LogGroupsFile)}}
}

// errorSources are the error monitor's log sources: Convex over HTTP,
// CloudWatch Logs with the machine's AWS credentials (environment or
// shared config; nothing is read until a cloudwatch deployment is scanned).
func errorSources(ctx context.Context, eg *egress.Policy, log *slog.Logger) map[string]source.Source {
	sources := map[string]source.Source{errormon.SourceConvex: convex.New(convex.Options{Egress: eg})}
	if cfg, err := config.LoadDefaultConfig(ctx); err == nil {
		sources[errormon.SourceCloudWatch] = cloudwatch.New(cloudwatch.Options{Client: cloudwatchlogs.NewFromConfig(cfg)})
	} else {
		log.Warn("no AWS configuration: cloudwatch deployments cannot be scanned", "err", err)
	}
	return sources
}

const deploykeyUsage = `vantagepeers deploykey — each tenant's deploy keys (the keys its monitored Convex deployments are read with)

  vantagepeers deploykey set    [--tenant T] [--url URL] NAME   read the key from stdin and store it as tenant T's NAME, bound to URL
  vantagepeers deploykey show   [--tenant T] [NAME]             the tenant's names (or NAME) with fingerprints and URLs, never the keys
  vantagepeers deploykey remove [--tenant T] NAME               forget it

NAME must match ^VP_DEPLOY_KEY_[A-Z0-9_]{1,64}$; a deployment names it as its deployKeyEnvVar
(add_deployment), and reads it from its own tenant only. A key is sent only to a deploymentUrl
of the origin (scheme, host, port) it is bound to: the origin of --url (e.g.
https://happy-otter-123.convex.cloud), or without --url the deployment a Convex deploy key names
(prod:<name>|… or dev:<name>|… is bound to https://<name>.convex.cloud); any other key needs --url.
The keys are kept in <data dir>/` + errormon.DeployKeysFile + ` (mode 0600), read from stdin, never
from the command line. --tenant defaults to "default", whose deployments also read the server's
environment variable NAME when no key is stored (bound by its own prefix only). Every command also
takes --data-dir.
`

const loggroupsUsage = `vantagepeers loggroups — the CloudWatch Logs log groups each tenant's deployments may read

  vantagepeers loggroups allow  [--tenant T] NAME-or-PREFIX*   let tenant T name that log group (or every one starting with PREFIX)
  vantagepeers loggroups show   [--tenant T]                   what a tenant (without --tenant: every tenant) may name
  vantagepeers loggroups remove [--tenant T] NAME-or-PREFIX*   withdraw it (the next scan of a deployment naming it reads nothing)

A tenant may name no log group until one is allowed here. Kept in <data dir>/` + errormon.LogGroupsFile + `.
--tenant defaults to "default". Every command also takes --data-dir.
`

// deploykeyCommand administers the tenants' deploy keys of the data dir.
// Like github it touches only their file, so it works while the server
// runs.
func deploykeyCommand() *command {
	var tenantFlag, bindURL string
	return &command{Name: "deploykey", Page: deploykeyUsage,
		Synopsis: []string{"deploykey set|show|remove [--tenant T] NAME"},
		Summary:  "a tenant's deploy keys, key on stdin; vantagepeers deploykey help",
		Subs:     []string{"set", "show", "remove"},
		Flags: func(fs *flag.FlagSet, _ string) {
			tenantFlags(fs, &tenantFlag)
			fs.StringVar(&bindURL, "url", "", "set: the deployment URL the key may be sent to (its origin is stored)")
		},
		Run: func(_ context.Context, e *env) error { return deploykey(e, tenantFlag, bindURL) },
	}
}

func deploykey(e *env, tenantFlag, bindURL string) error {
	cmd, rest, stdin, stdout := e.sub, e.args, e.stdin, e.stdout
	tenant, dataDir, err := tenantOf(e, tenantFlag)
	if err != nil {
		return err
	}
	keys := deployKeys(dataDir)
	need := func() (string, error) {
		if len(rest) != 1 {
			// Not quoted: a stray argument may well be the key itself.
			return "", fmt.Errorf("deploykey %s: give one NAME (%d arguments); keys are read from stdin, never from arguments", cmd, len(rest))
		}
		if !errormon.ValidDeployKeyName(rest[0]) {
			return "", fmt.Errorf("deploykey %s: NAME %s", cmd, errormon.DeployKeyRule)
		}
		return rest[0], nil
	}
	switch cmd {
	case "set":
		name, err := need()
		if err != nil {
			return err
		}
		key, err := readSecret(stdin)
		if err != nil {
			return fmt.Errorf("deploykey set: the key on stdin: %w", err)
		}
		if _, ok := errormon.ConvexKeyOrigin(key); !ok && strings.TrimSpace(bindURL) == "" {
			// Stored so, it would never be sent: say it now, not at a scan.
			return fmt.Errorf("deploykey set: this key is not a Convex deploy key naming its deployment (prod:<name>|… or dev:<name>|…), " +
				"so it is sent only where it is bound: give --url <deployment URL>, e.g. --url https://happy-otter-123.convex.cloud")
		}
		if err := keys.Set(tenant, name, key, bindURL); err != nil {
			return err
		}
		stored, err := keys.Stored(tenant)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "tenant %s: deploy key %s set (fingerprint %s), %s, in %s\n", tenant, name, github.Fingerprint(key),
			sentTo(stored[name]), keys.File.Path)
		return nil
	case "show":
		if len(rest) > 1 {
			return fmt.Errorf("deploykey show: at most one NAME (%d arguments)", len(rest))
		}
		return deploykeyShow(keys, tenant, rest, stdout)
	case "remove":
		name, err := need()
		if err != nil {
			return err
		}
		removed, err := keys.Remove(tenant, name)
		if err != nil {
			return err
		}
		if !removed {
			return fmt.Errorf("deploykey remove: tenant %s has no stored key %s", tenant, name)
		}
		fmt.Fprintf(stdout, "tenant %s: deploy key %s removed from %s\n", tenant, name, keys.File.Path)
		return nil
	}
	return fmt.Errorf("deploykey: unknown subcommand %q; use set, show or remove", cmd)
}

// deploykeyShow prints names and fingerprints: the tenant's stored keys
// and, for the default tenant, the environment's VP_DEPLOY_KEY_* that no
// stored key hides.
func deploykeyShow(keys *errormon.FileKeys, tenant string, only []string, stdout io.Writer) error {
	stored, err := keys.Stored(tenant)
	if err != nil {
		return err
	}
	lines := map[string]string{}
	for name, v := range stored {
		lines[name] = "set (fingerprint " + github.Fingerprint(v.Key) + ", from the file), " + sentTo(v)
	}
	if tenant == vp.DefaultTenant {
		for _, kv := range os.Environ() {
			name, v, _ := strings.Cut(kv, "=")
			if _, ok := lines[name]; !ok && errormon.ValidDeployKeyName(name) && strings.TrimSpace(v) != "" {
				k := errormon.DeployKey{Key: strings.TrimSpace(v)}
				lines[name] = "set (fingerprint " + github.Fingerprint(k.Key) + ", from the environment variable), " + sentTo(k)
			}
		}
	}
	names := slices.Sorted(maps.Keys(lines))
	if len(only) == 1 {
		names = only
	}
	if len(names) == 0 {
		fmt.Fprintf(stdout, "tenant %s: no deploy key (set one with: vantagepeers deploykey set --tenant %s VP_DEPLOY_KEY_MYAPP)\n", tenant, tenant)
		return nil
	}
	fmt.Fprintf(stdout, "tenant %s:\n", tenant)
	for _, name := range names {
		fmt.Fprintf(stdout, "  %s: %s\n", name, cmp.Or(lines[name], "not set"))
	}
	return nil
}

// sentTo says where a key may be sent.
func sentTo(k errormon.DeployKey) string {
	origin, _ := k.Origin()
	switch {
	case origin == "":
		return "bound to no URL: never sent (store it with --url <deployment URL>)"
	case k.URL == "":
		return "sent only to " + origin + " (from the key's own prefix)"
	}
	return "sent only to " + origin
}

// loggroupsCommand administers the log groups each tenant may name.
func loggroupsCommand() *command {
	var tenantFlag string
	return &command{Name: "loggroups", Page: loggroupsUsage,
		Synopsis: []string{"loggroups allow|show|remove [--tenant T] NAME-or-PREFIX*"},
		Summary:  "the log groups a tenant may read; vantagepeers loggroups help",
		Subs:     []string{"allow", "show", "remove"},
		Flags:    func(fs *flag.FlagSet, _ string) { tenantFlags(fs, &tenantFlag) },
		Run:      func(_ context.Context, e *env) error { return loggroups(e, tenantFlag) },
	}
}

func loggroups(e *env, tenantFlag string) error {
	cmd, rest, stdout := e.sub, e.args, e.stdout
	tenant, dataDir, err := tenantOf(e, tenantFlag)
	if err != nil {
		return err
	}
	groups := logGroups(dataDir)
	if cmd == "show" {
		if len(rest) > 0 {
			return fmt.Errorf("loggroups show: unexpected %q", rest[0])
		}
		return loggroupsShow(groups, tenant, stdout)
	}
	if len(rest) != 1 {
		return fmt.Errorf("loggroups %s: give one NAME-or-PREFIX* (%d arguments)", cmd, len(rest))
	}
	if cmd == "allow" {
		added, err := groups.Allow(tenant, rest[0])
		if err != nil {
			return err
		}
		note := ""
		if !added {
			note = " (already allowed)"
		}
		fmt.Fprintf(stdout, "tenant %s may name %s%s\n", tenant, rest[0], note)
		return nil
	}
	removed, err := groups.Remove(tenant, rest[0])
	if err != nil {
		return err
	}
	if !removed {
		return fmt.Errorf("loggroups remove: %s is not allowed for tenant %s", rest[0], tenant)
	}
	fmt.Fprintf(stdout, "tenant %s may no longer name %s\n", tenant, rest[0])
	return nil
}

func loggroupsShow(groups *errormon.FileLogGroups, tenant string, stdout io.Writer) error {
	all, err := groups.File.All("loggroups.show")
	if err != nil {
		return err
	}
	tenants := slices.Sorted(maps.Keys(all))
	if tenant != "" {
		tenants = []string{tenant}
	}
	if len(tenants) == 0 {
		fmt.Fprintln(stdout, "no tenant may name a log group (allow one with: vantagepeers loggroups allow --tenant T NAME-or-PREFIX*)")
	}
	for _, t := range tenants {
		if len(all[t]) == 0 {
			fmt.Fprintf(stdout, "tenant %s: no log group\n", t)
			continue
		}
		fmt.Fprintf(stdout, "tenant %s: %s\n", t, strings.Join(all[t], ", "))
	}
	return nil
}

// tenantFlags registers the --tenant of deploykey and loggroups.
func tenantFlags(fs *flag.FlagSet, tenant *string) {
	fs.StringVar(tenant, "tenant", "", `tenant id (default "default"; loggroups show: every tenant)`)
}

// tenantOf checks the --tenant of deploykey and loggroups: "" when omitted
// for loggroups show (every tenant), else "default".
func tenantOf(e *env, tenant string) (string, string, error) {
	if tenant != "" && !vp.ValidTenant(tenant) {
		return "", "", fmt.Errorf("%s %s: --tenant: %q is not a valid tenant id", e.cmd, e.sub, tenant)
	}
	if tenant == "" && (e.cmd == "deploykey" || e.sub != "show") {
		tenant = vp.DefaultTenant
	}
	if e.dataDir == "" {
		return "", "", errors.New("--data-dir is empty")
	}
	return tenant, e.dataDir, nil
}

// deploymentLearner starts from the templates the monitor stored for a
// deployment. Opening the database, even to read, may write its folder
// (SQLite's -wal and -shm files), so a copy of it is opened in a
// temporary folder: the data dir is never written. A copy taken while a
// server writes may miss its last transaction, not more.
func deploymentLearner(ctx context.Context, dataDir, tenant, name string) (*templates.Learner, error) {
	const op = "errors group"
	if err := vp.CheckKeyText(op, "deployment", name, vp.MaxNameBytes, true); err != nil {
		return nil, err
	}
	// A copy: the server may be running on this data dir.
	st, err := sqlite.OpenCopy(ctx, filepath.Join(dataDir, "vantagepeers.db"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("errors group: --deployment: no data at %s (--data-dir or VP_DATA_DIR): %w", dataDir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("errors group: %w", err)
	}
	defer st.Close()
	return errormon.StoredLearner(ctx, st, tenant, name)
}
