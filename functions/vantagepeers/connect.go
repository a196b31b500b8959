package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/auth"
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
  --data-dir, --log-level as everywhere

The token is printed once, inside the configuration; only its hash is stored.
`

// hosts are the MCP hosts connect knows, and the transport each uses by
// default: the one its configuration file is usually written for.
var hosts = map[string]string{"claude-code": "http", "claude-desktop": "stdio", "cursor": "http", "codex": "stdio"}

// defaultGrants are the namespaces an agent's token reads and writes
// unless told otherwise: the tenant's shared namespaces and the agent's
// own. "global" is read-only: an admin curates it.
func defaultGrants(agent string) (read, write []string) {
	own := "orchestrator/" + vp.NormalizeOrchestrator(agent)
	return []string{"global", "workspace", "project", own}, []string{"workspace", "project", own}
}

// connectFlags are the flags of connect.
type connectFlags struct {
	as, url, tenant, read, writeNS, name string
	useHTTP, useStdio, write, force      bool
	ttl                                  ttlFlag
}

func connectCommand() *command {
	var f connectFlags
	return &command{Name: "connect", Page: connectUsage,
		Synopsis: []string{"connect claude-code|claude-desktop|cursor|codex --as alice [--http|--stdio] [--write]"},
		Summary:  "an agent's token + its host's config",
		Subs:     []string{"claude-code", "claude-desktop", "cursor", "codex"}, // the keys of hosts
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
		},
		Run: func(ctx context.Context, e *env) error { return connect(ctx, e, f) },
	}
}

func connect(ctx context.Context, e *env, f connectFlags) error {
	host, transport := e.sub, hosts[e.sub]
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
	if host == "claude-desktop" && transport == "http" {
		return errors.New("connect claude-desktop: its configuration file starts local (stdio) servers only; " +
			"add a remote server in Claude Desktop under Settings → Connectors, or drop --http")
	}
	dataDir, err := filepath.Abs(e.dataDir)
	if err != nil {
		return err
	}
	rd, wr := defaultGrants(f.as)
	if f.read != "" {
		rd = split(f.read)
	}
	if f.writeNS != "" {
		wr = split(f.writeNS)
	}
	e.dataDir = dataDir
	a, err := e.app(ctx)
	if err != nil {
		return err
	}
	secret, tok, err := a.Tokens.Create(ctx, auth.Spec{Tenant: f.tenant, ActsAs: []string{f.as}, ReadPrefixes: rd, WritePrefixes: wr,
		Label: "connect " + host, TTL: f.ttl.d})
	if err != nil {
		return err
	}
	bin, err := os.Executable()
	if err != nil {
		return err
	}
	cfg := hostConfig{host: host, transport: transport, name: f.name, url: f.url, bin: bin, dataDir: dataDir, token: secret}
	fmt.Fprintf(e.stderr, "created %s: tenant %s, acts as %s, reads %s, writes %s (shown once; only its hash is stored)\n",
		tok.ID, tok.Tenant, f.as, strings.Join(rd, ","), strings.Join(wr, ","))
	if !f.write {
		fmt.Fprintf(e.stderr, "%s, %s — put this in %s:\n", host, transport, cfg.path())
		_, err := e.stdout.Write(cfg.render())
		return err
	}
	path := cfg.path()
	if err := writeConfig(path, cfg, f.force); err != nil {
		_, _ = a.Tokens.Revoke(ctx, tok.ID) // the token is useless without its configuration
		return err
	}
	fmt.Fprintf(e.stdout, "wrote %s (%s over %s, as %s); restart %s to load it\n", path, f.name, transport, f.as, host)
	if host == "codex" && transport == "http" {
		fmt.Fprintf(e.stdout, "Codex reads the token from the environment: export VP_TOKEN=%s\n", secret)
	}
	return nil
}

// hostConfig is one MCP host's entry for the server.
type hostConfig struct {
	host, transport, name, url, bin, dataDir, token string
}

// The JSON object of the server in mcpServers, its fields in the order
// the hosts' documentation shows them.
type (
	httpEntry struct {
		Type    string            `json:"type,omitempty"` // Claude Code only
		URL     string            `json:"url"`
		Headers map[string]string `json:"headers"`
	}
	stdioEntry struct {
		Command string            `json:"command"`
		Args    []string          `json:"args"`
		Env     map[string]string `json:"env"`
	}
)

func (h hostConfig) entry() any {
	if h.transport == "stdio" {
		return stdioEntry{Command: h.bin, Args: []string{"stdio", "--data-dir", h.dataDir}, Env: map[string]string{"VP_TOKEN": h.token}}
	}
	e := httpEntry{URL: h.url, Headers: map[string]string{"Authorization": "Bearer " + h.token}}
	if h.host == "claude-code" {
		e.Type = "http"
	}
	return e
}

// render is the whole configuration file with only this server in it.
func (h hostConfig) render() []byte {
	if h.host == "codex" {
		return []byte(h.toml())
	}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{h.name: h.entry()}}, "", "  ")
	return append(b, '\n')
}

// toml is Codex's [mcp_servers.<name>] table. Over HTTP Codex refuses an
// inline token and reads it from the variable bearer_token_env_var names.
func (h hostConfig) toml() string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a JSON string is a TOML basic string here
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", h.name)
	if h.transport == "stdio" {
		fmt.Fprintf(&b, "command = %s\nargs = [%s, %s, %s]\nenv = { VP_TOKEN = %s }\n", q(h.bin), q("stdio"), q("--data-dir"), q(h.dataDir), q(h.token))
	} else {
		fmt.Fprintf(&b, "url = %s\nbearer_token_env_var = \"VP_TOKEN\"\n", q(h.url))
	}
	return b.String()
}

// path is where the host reads its configuration.
func (h hostConfig) path() string {
	home, _ := os.UserHomeDir()
	switch h.host {
	case "claude-code":
		return ".mcp.json"
	case "cursor":
		return filepath.Join(".cursor", "mcp.json")
	case "codex":
		if d := os.Getenv("CODEX_HOME"); d != "" {
			return filepath.Join(d, "config.toml")
		}
		return filepath.Join(home, ".codex", "config.toml")
	}
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "Claude", "claude_desktop_config.json")
	case "windows":
		return filepath.Join(os.Getenv("APPDATA"), "Claude", "claude_desktop_config.json")
	}
	return filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
}

// writeConfig adds the server to the file at path, keeping everything
// else in it; an entry of the same name is replaced only with force.
func writeConfig(path string, h hostConfig, force bool) error {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var out []byte
	if h.host == "codex" {
		header := "[mcp_servers." + h.name + "]"
		if bytes.Contains(old, []byte(header)) {
			return fmt.Errorf("connect: %s already has %s; edit or remove it by hand (TOML is not rewritten)", path, header)
		}
		out = old
		if len(out) > 0 && !bytes.HasSuffix(out, []byte("\n\n")) {
			out = append(out, '\n')
		}
		out = append(out, h.toml()...)
	} else {
		doc := map[string]any{}
		if len(bytes.TrimSpace(old)) > 0 {
			if err := json.Unmarshal(old, &doc); err != nil {
				return fmt.Errorf("connect: %s is not JSON (%v); fix it or print the configuration without --write", path, err)
			}
		}
		servers, _ := doc["mcpServers"].(map[string]any)
		if servers == nil {
			servers = map[string]any{}
		}
		if _, taken := servers[h.name]; taken && !force {
			return fmt.Errorf("connect: %s already has a server named %q: --force replaces it, --name picks another name", path, h.name)
		}
		servers[h.name] = h.entry()
		doc["mcpServers"] = servers
		if out, err = json.MarshalIndent(doc, "", "  "); err != nil {
			return err
		}
		out = append(out, '\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	// The file holds a secret: written 0600, through a rename so that a
	// crash never leaves half a configuration.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, out, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
