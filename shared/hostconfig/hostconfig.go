// Package hostconfig writes the configuration by which an MCP host
// (Claude Code, Claude Desktop, Cursor, Codex) reaches the server: the
// JSON mcpServers entry, or Codex's TOML table, and where each host reads
// it. The file holds a token: it is written 0600, whole.
package hostconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// DefaultTransport is the transport an MCP host this package configures
// uses by default: the one its configuration file is usually written for.
func DefaultTransport(host string) string {
	switch host {
	case "claude-code", "cursor":
		return "http"
	}
	return "stdio" // claude-desktop, codex
}

// Config is one MCP host's entry for the server: Host is claude-code,
// claude-desktop, cursor or codex; Transport http (URL) or stdio (Bin,
// DataDir); Token the agent's bearer token.
type Config struct {
	Host, Transport, Name, URL, Bin, DataDir, Token string
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

func (h Config) entry() any {
	if h.Transport == "stdio" {
		return stdioEntry{Command: h.Bin, Args: []string{"stdio", "--data-dir", h.DataDir}, Env: map[string]string{"VP_TOKEN": h.Token}}
	}
	e := httpEntry{URL: h.URL, Headers: map[string]string{"Authorization": "Bearer " + h.Token}}
	if h.Host == "claude-code" {
		e.Type = "http"
	}
	return e
}

// Render is the whole configuration file with only this server in it.
func (h Config) Render() []byte {
	if h.Host == "codex" {
		return []byte(h.toml())
	}
	b, _ := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{h.Name: h.entry()}}, "", "  ")
	return append(b, '\n')
}

// toml is Codex's [mcp_servers.<name>] table. Over HTTP Codex refuses an
// inline token and reads it from the variable bearer_token_env_var names.
func (h Config) toml() string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) } // a JSON string is a TOML basic string here
	var b strings.Builder
	fmt.Fprintf(&b, "[mcp_servers.%s]\n", h.Name)
	if h.Transport == "stdio" {
		fmt.Fprintf(&b, "command = %s\nargs = [%s, %s, %s]\nenv = { VP_TOKEN = %s }\n", q(h.Bin), q("stdio"), q("--data-dir"), q(h.DataDir), q(h.Token))
	} else {
		fmt.Fprintf(&b, "url = %s\nbearer_token_env_var = \"VP_TOKEN\"\n", q(h.URL))
	}
	return b.String()
}

// Path is where the host reads its configuration.
func (h Config) Path() string {
	home, _ := os.UserHomeDir()
	switch h.Host {
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

// Write adds the server to the file at path, keeping everything else in
// it; an entry of the same name is replaced only with force.
func (h Config) Write(path string, force bool) error {
	out, err := h.merged(path, force)
	if err != nil {
		return err
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

// Check is the refusal Write would give, without writing: connect asks
// before it mints a token, so that a refusal leaves none behind.
func (h Config) Check(path string, force bool) error {
	_, err := h.merged(path, force)
	return err
}

// merged is the file at path with the server added.
func (h Config) merged(path string, force bool) ([]byte, error) {
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	var out []byte
	if h.Host == "codex" {
		header := "[mcp_servers." + h.Name + "]"
		if bytes.Contains(old, []byte(header)) {
			return nil, fmt.Errorf("connect: %s already has %s; edit or remove it by hand (TOML is not rewritten)", path, header)
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
				return nil, fmt.Errorf("connect: %s is not JSON (%v); fix it or print the configuration without --write", path, err)
			}
		}
		servers, _ := doc["mcpServers"].(map[string]any)
		if servers == nil {
			servers = map[string]any{}
		}
		if _, taken := servers[h.Name]; taken && !force {
			return nil, fmt.Errorf("connect: %s already has a server named %q: --force replaces it, --name picks another name", path, h.Name)
		}
		servers[h.Name] = h.entry()
		doc["mcpServers"] = servers
		if out, err = json.MarshalIndent(doc, "", "  "); err != nil {
			return nil, err
		}
		out = append(out, '\n')
	}
	return out, nil
}

// CommandName is the binary as the user can run it again: its name when
// the shell found it in PATH (arg0 without a separator), "./rel" when it
// lies under the working directory wd, else its absolute path.
func CommandName(arg0, wd string) string {
	if !strings.ContainsRune(arg0, filepath.Separator) {
		return arg0
	}
	abs := arg0
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(wd, abs)
	}
	if rel, err := filepath.Rel(wd, abs); err == nil && wd != "" && !strings.HasPrefix(rel, "..") {
		return "." + string(filepath.Separator) + rel
	}
	return filepath.Clean(abs)
}
