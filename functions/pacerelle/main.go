// Command pacerelle is the Pacerelle MCP server: a stdio MCP server that
// bridges one agent to Pacerelle's end-to-end-encrypted request inbox
// (shared/pacerelle). It is launched by an MCP host:
//
//	PACERELLE_AGENT_ID=bot PACERELLE_AGENT_TOKEN=... pacerelle [--base-url URL]
//
// Configuration: every option has a variable; a flag given on the command
// line wins over its variable. A missing required value exits with status
// 2 and names it. The token lives in memory only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var version = "0.1.0-dev"

// DefaultBaseURL is the hosted API.
const DefaultBaseURL = "https://api.pacerelle.com"

// Config is the bridge's configuration.
type Config struct {
	AgentID   string
	Token     string
	StoreRoot string
	BaseURL   string
	WSURL     string
	NoE2EE    bool
	LogLevel  string
}

// errUsage marks a configuration error (exit status 2).
type errUsage struct{ msg string }

func (e errUsage) Error() string { return e.msg }

func parseConfig(args []string, getenv func(string) string, stderr io.Writer) (Config, error) {
	fs := flag.NewFlagSet("pacerelle", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	home, _ := os.UserHomeDir()
	or := func(k, def string) string {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			return v
		}
		return def
	}
	fs.StringVar(&c.AgentID, "agent-id", or("PACERELLE_AGENT_ID", ""), "the agent identifier (required; env PACERELLE_AGENT_ID)")
	fs.StringVar(&c.Token, "token", or("PACERELLE_AGENT_TOKEN", ""), "the agent token, never written to disk (required; env PACERELLE_AGENT_TOKEN)")
	fs.StringVar(&c.StoreRoot, "store-root", or("PACERELLE_STORE_ROOT", filepath.Join(home, ".pacerelle", "mcp")), "folder of the local state (env PACERELLE_STORE_ROOT)")
	fs.StringVar(&c.BaseURL, "base-url", or("PACERELLE_BASE_URL", DefaultBaseURL), "API URL (env PACERELLE_BASE_URL)")
	fs.StringVar(&c.WSURL, "ws-url", or("PACERELLE_WS_URL", ""), "WebSocket URL; default: the base URL's /pacerelle/v1/doorbell (env PACERELLE_WS_URL)")
	fs.BoolVar(&c.NoE2EE, "no-e2ee", false, "disable end-to-end encryption: local transport debugging only")
	fs.StringVar(&c.LogLevel, "log-level", or("PACERELLE_LOG_LEVEL", "info"), "debug, info, warn or error (stderr)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, errUsage{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	if c.AgentID == "" {
		return c, errUsage{"the agent id is required: set PACERELLE_AGENT_ID or pass --agent-id"}
	}
	if c.Token == "" {
		return c, errUsage{"the agent token is required: set PACERELLE_AGENT_TOKEN or pass --token"}
	}
	if strings.HasPrefix(c.StoreRoot, "~/") {
		c.StoreRoot = filepath.Join(home, c.StoreRoot[2:])
	}
	return c, nil
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	var ue errUsage
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "pacerelle:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "pacerelle:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		return errUsage{fmt.Sprintf("--log-level: %q is not one of debug, info, warn, error", cfg.LogLevel)}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: lvl}))
	if cfg.NoE2EE {
		fmt.Fprintln(stderr, "pacerelle: WARNING: --no-e2ee: END-TO-END ENCRYPTION IS OFF. Requests and replies travel and are stored in clear. Local transport debugging only.")
		log.Warn("pacerelle: end-to-end encryption disabled (--no-e2ee)")
	}
	b, err := Open(cfg, log)
	if err != nil {
		return err
	}
	defer b.Close()
	log.Info("pacerelle: started", "agent", cfg.AgentID, "device", b.me.ID, "fingerprint", b.fingerprint(), "store", cfg.StoreRoot, "baseURL", cfg.BaseURL)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { b.Run(rctx); close(done) }()
	defer func() { cancel(); <-done }()
	server := newServer(b)
	err = server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
