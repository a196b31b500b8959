package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/hostconfig"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const connectUsage = `vantagepeers connect — mint a token for one agent and print its MCP host's configuration

  vantagepeers connect claude-code|claude-desktop|cursor|codex --as NAME [--http | --stdio] [--write [--force]]

  --as NAME        the agent (orchestrator) the token may act as; required
  --http           connect over Streamable HTTP to a running 'vantagepeers serve' (--url)
  --stdio          the host starts 'vantagepeers stdio' itself on this data dir (no server to keep running)
                   default: --http for claude-code and cursor, --stdio for claude-desktop and codex
  --url URL        the server's MCP URL (default http://VP_ADDR/mcp, http://127.0.0.1:8787/mcp)
  --tenant T       default "default"
  --read P,Q       namespaces it may read  (default global,workspace,project,orchestrator/NAME)
  --write-ns P,Q   namespaces it may write (default workspace,project,orchestrator/NAME)
  --ttl 30d        lifetime (default: no expiry)
  --name N         the server's name in the host's configuration (default vantagepeers)
  --write          write the configuration file instead of printing it: .mcp.json (claude-code) and
                   .cursor/mcp.json (cursor) in the current folder, the Claude Desktop configuration
                   of this OS, ~/.codex/config.toml (CODEX_HOME); other servers in the file are kept,
                   and an existing entry of the same name is refused unless --force
  --remote         mint the token through the admin API of the deployment at --url (AWS): the admin
                   (master) token is read from stdin, e.g. aws secretsmanager get-secret-value … | vantagepeers connect …
  --data-dir, --log-level as everywhere

The token is printed once, inside the configuration; only its hash is stored.
`

// connectFlags are the flags of connect.
type connectFlags struct {
	as, url, tenant, read, writeNS, name string
	useHTTP, useStdio, write, force      bool
	remote                               bool
	ttl                                  ttlFlag
}

func connectCommand() *command {
	var f connectFlags
	return &command{Name: "connect", Page: connectUsage,
		Synopsis: []string{"connect claude-code|claude-desktop|cursor|codex --as alice [--http|--stdio] [--write]"},
		Summary:  "an agent's token + its host's config",
		Subs:     []string{"claude-code", "claude-desktop", "cursor", "codex"}, // the keys of hosts
		Args:     argsNone,
		BadSub: func(e *env, host string) error {
			if host == "" || strings.HasPrefix(host, "-") {
				fmt.Fprint(e.stderr, connectUsage)
				return errors.New("connect: name the host: claude-code, claude-desktop, cursor or codex")
			}
			return fmt.Errorf("connect: unknown host %q: want claude-code, claude-desktop, cursor or codex", host)
		},
		Flags: func(fset *flag.FlagSet, _ string) {
			fset.StringVar(&f.as, "as", "", "the agent the token may act as")
			fset.BoolVar(&f.useHTTP, "http", false, "Streamable HTTP")
			fset.BoolVar(&f.useStdio, "stdio", false, "stdio")
			fset.StringVar(&f.url, "url", "http://"+envOr("VP_ADDR", "127.0.0.1:8787")+"/mcp", "the server's MCP URL")
			fset.StringVar(&f.tenant, "tenant", vp.DefaultTenant, "tenant id")
			fset.StringVar(&f.read, "read", "", "namespaces it may read")
			fset.StringVar(&f.writeNS, "write-ns", "", "namespaces it may write")
			fset.Var(&f.ttl, "ttl", "lifetime, e.g. 30d or 720h")
			fset.StringVar(&f.name, "name", "vantagepeers", "the server's name in the configuration")
			fset.BoolVar(&f.write, "write", false, "write the configuration file")
			fset.BoolVar(&f.force, "force", false, "with --write: replace an entry of the same name")
			fset.BoolVar(&f.remote, "remote", false, "mint the token through --url's admin API, the master token on stdin")
		},
		Run: func(ctx context.Context, e *env) error { return connect(ctx, e, f) },
	}
}

func connect(ctx context.Context, e *env, f connectFlags) error {
	host, transport := e.sub, hostconfig.DefaultTransport(e.sub)
	switch {
	case f.as == "" || strings.Contains(f.as, ","):
		return errors.New("connect: --as NAME is required: the one agent this token acts as")
	case f.useHTTP && f.useStdio:
		return errors.New("connect: --http or --stdio, not both")
	case f.useHTTP:
		transport = "http"
	case f.useStdio:
		transport = "stdio"
	}
	if f.remote { // a deployment's agents reach it over HTTP; stdio runs this machine's data dir
		if f.useStdio {
			return errors.New("connect --remote: the host reaches the deployment over HTTP; drop --stdio")
		}
		transport = "http"
	}
	if host == "claude-desktop" && transport == "http" {
		return errors.New("connect claude-desktop: its configuration file starts local (stdio) servers only; " +
			"add a remote server in Claude Desktop under Settings → Connectors, or drop --http")
	}
	dataDir, err := filepath.Abs(e.dataDir)
	if err != nil {
		return err
	}
	rd, wr := auth.DefaultGrants(f.as)
	if f.read != "" {
		rd = split(f.read)
	}
	if f.writeNS != "" {
		wr = split(f.writeNS)
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	spec := auth.Spec{Tenant: f.tenant, ActsAs: []string{f.as}, ReadPrefixes: rd, WritePrefixes: wr, Label: "connect " + host, TTL: f.ttl.d}
	// Every refusal the command line can get comes before the data dir is
	// opened: a mistake never initialises one.
	if err := auth.CheckSpec(spec); err != nil {
		return err
	}
	cfg := hostconfig.Config{Host: host, Transport: transport, Name: f.name, URL: f.url, Bin: bin, DataDir: dataDir}
	path := cfg.Path()
	if f.write {
		// Before minting: a refused file leaves no token behind.
		if err := cfg.Check(path, f.force); err != nil {
			return err
		}
	}
	e.dataDir = dataDir
	remoteURL := ""
	if f.remote {
		remoteURL = f.url
	}
	a, err := tokensFor(ctx, e, remoteURL, false)
	if err != nil {
		return err
	}
	secret, tok, err := a.Create(ctx, spec)
	if err != nil {
		return err
	}
	cfg.Token = secret
	fmt.Fprintf(e.stderr, "created %s: tenant %s, acts as %s, reads %s, writes %s (shown once; only its hash is stored)\n",
		tok.ID, tok.Tenant, f.as, strings.Join(rd, ","), strings.Join(wr, ","))
	if !f.write {
		fmt.Fprintf(e.stderr, "%s, %s — put this in %s:\n", host, transport, cfg.Path())
		if _, err := e.stdout.Write(cfg.Render()); err != nil {
			return err
		}
		return printCodexExport(e, cfg)
	}
	if err := cfg.Write(path, f.force); err != nil {
		// Checked above; a file changed since then still gets no token.
		_, _ = a.Revoke(ctx, tok.ID)
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s (%s over %s, as %s); restart %s to load it\n", path, f.name, transport, f.as, host)
	return printCodexExport(e, cfg)
}

// printCodexExport: Codex over HTTP reads its bearer token from VP_TOKEN,
// which its configuration names but cannot hold, so the shell line that
// sets it follows, printed and written alike ("#" comments both TOML and
// shell).
func printCodexExport(e *env, cfg hostconfig.Config) error {
	if cfg.Host != "codex" || cfg.Transport != "http" {
		return nil
	}
	_, err := fmt.Fprintf(e.stdout, "\n# Codex reads the token from the environment; run this where Codex starts:\nexport VP_TOKEN=%s\n", cfg.Token)
	return err
}
