// Command vantagepeers is the all-in-one local binary: the MCP server over
// Streamable HTTP (serve) or stdio (stdio) on an embedded SQLite store, and
// the admin commands (token). All wiring of adapters happens here.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// usageHead and usageTail frame the commands' lines in the usage (usageOf).
const usageHead = `vantagepeers — coordination backend for teams of AI agents (MCP server)

Usage:
`

const usageTail = `  vantagepeers COMMAND --help

Every command but version takes --data-dir DIR and --log-level LEVEL.

Environment: VP_DATA_DIR (default ~/.vantagepeers), VP_ADDR (default 127.0.0.1:8787),
VP_LOG_LEVEL (debug|info|warn|error), VP_MASTER_TOKEN (64 hex; overrides the stored
master token), VP_TOKEN (stdio: act with this token instead of as the local owner),
VP_TOOL_PROFILE (core|full: the tools advertised by default; full unless set),
VP_PUBLIC_BASE_URL (the public URL: OAuth issuer and endpoints; default: the request's host),
CLERK_JWT_ISSUER_DOMAIN, VP_ALLOWED_EXT_IDS, VP_CLERK_AUDIENCE (the Clerk JWT exchange),
VP_EGRESS_ALLOW_HOSTS (comma-separated hosts, IPs or CIDRs that a deploymentUrl or a client
metadata URL may reach although not public, over http too; default: public https only).
`

func main() {
	// The live heap is small (tens of MB) and every tool call allocates its
	// JSON several times over: collecting less often halves the CPU of a
	// check_messages call (tests/bench). GOGC in the environment still wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	status := exitStatus(os.Stderr, run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	stop()
	os.Exit(status)
}

func versionCommand() *command {
	return &command{Name: "version", Args: argsNone, Synopsis: []string{"version"}, NoCommon: true,
		Run: func(_ context.Context, e *env) error {
			fmt.Fprintln(e.stdout, "vantagepeers", version)
			return nil
		}}
}

// common holds the flags every subcommand takes.
type common struct {
	dataDir  string
	logLevel string
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.dataDir, "data-dir", envOr("VP_DATA_DIR", defaultDataDir()), "data directory (env VP_DATA_DIR)")
	fs.StringVar(&c.logLevel, "log-level", envOr("VP_LOG_LEVEL", "info"), "debug, info, warn or error (env VP_LOG_LEVEL)")
}

func (c *common) level() (slog.Level, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return lvl, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", c.logLevel)
	}
	return lvl, nil
}

func (c *common) logger(w io.Writer) (*slog.Logger, error) {
	lvl, err := c.level()
	if err != nil {
		return nil, err
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: lvl})), nil
}

func envOr(key, def string) string {
	if v := strings.TrimSpace(os.Getenv(key)); v != "" {
		return v
	}
	return def
}

func defaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ".vantagepeers"
	}
	return filepath.Join(home, ".vantagepeers")
}
