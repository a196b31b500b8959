// Command vantagepeers is the all-in-one local binary: the MCP server over
// Streamable HTTP (serve) or stdio (stdio) on an embedded SQLite store, and
// the admin commands (token). All wiring of adapters happens here.
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
	"runtime/debug"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

const usage = `vantagepeers — coordination backend for teams of AI agents (MCP server)

Usage:
  vantagepeers serve  [--data-dir DIR] [--addr HOST:PORT] [--log-level LEVEL]
  vantagepeers stdio  [--data-dir DIR] [--log-level LEVEL]
  vantagepeers connect claude-code|claude-desktop|cursor|codex --as alice [--http|--stdio] [--write]   (an agent's token + its host's config)
  vantagepeers token create --tenant T --as alice,bob --read global,project/x --write project/x [--label L] [--ttl 30d] [--tool-profile core|full]
  vantagepeers token list   [--tenant T]
  vantagepeers token revoke ID
  vantagepeers admin clients | elevate CLIENT_ID --profile P [--tenant T] | delete-client CLIENT_ID
  vantagepeers admin profiles | profile-set ID [--from ..] [--read ..] [--write ..] | profile-delete ID | seed-profiles
  vantagepeers admin audit [--day YYYY-MM-DD] | clerk-map CLERK_USER_ID TENANT   (vantagepeers admin help)
  vantagepeers jobs list | run NAME [--tenant T] [--data-dir DIR]   (the background jobs; run one now)
  vantagepeers outbox dead [--tenant T] | retry ID | discard ID   (vantagepeers outbox help)
  vantagepeers github set [--tenant T] --webhook-secret-stdin | --token-stdin | show [--tenant T] | remove --tenant T   (vantagepeers github help)
  vantagepeers deploykey set|show|remove [--tenant T] NAME   (a tenant's deploy keys, key on stdin; vantagepeers deploykey help)
  vantagepeers loggroups allow|show|remove [--tenant T] NAME-or-PREFIX*   (the log groups a tenant may read; vantagepeers loggroups help)
  vantagepeers okf export --namespace NS --out F | validate --in F | import --namespace NS --in F [--mode M]   (vantagepeers okf help)
  vantagepeers pacerelle pair | send | wait   (a person's Pacerelle device; vantagepeers pacerelle help)
  vantagepeers errors group [--function F] [--jsonl] [--final]   (how the error monitor groups messages read on stdin)
  vantagepeers version
  vantagepeers COMMAND --help

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
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "vantagepeers:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return flag.ErrHelp
	}
	if wantsHelp(args) {
		fmt.Fprint(stdout, helpFor(args[0]))
		return nil
	}
	switch args[0] {
	case "connect":
		return connect(ctx, args[1:], stdout, stderr)
	case "serve":
		return serve(ctx, args[1:], stdout, stderr)
	case "stdio":
		return stdio(ctx, args[1:], stdin, stdout, stderr)
	case "token":
		return token(ctx, args[1:], stdout, stderr)
	case "admin":
		return admin(ctx, args[1:], stdout, stderr)
	case "jobs":
		return jobsCmd(ctx, args[1:], stdout, stderr)
	case "outbox":
		return outboxCmd(ctx, args[1:], stdout, stderr)
	case "github":
		return githubCmd(ctx, args[1:], stdin, stdout, stderr)
	case "deploykey":
		return deploykeyCmd(ctx, args[1:], stdin, stdout, stderr)
	case "loggroups":
		return loggroupsCmd(ctx, args[1:], stdout, stderr)
	case "okf":
		return okfCmd(ctx, args[1:], stdin, stdout, stderr)
	case "pacerelle":
		return pacerelleCmd(ctx, args[1:], stdin, stdout, stderr)
	case "errors":
		return errorsCmd(ctx, args[1:], stdin, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "vantagepeers", version)
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}

// wantsHelp reports a request for a command's help: -h, -help or --help
// anywhere before "--", or "help" right after the command. It is answered
// before any command runs, so that asking for help never initialises a
// data directory (and uses up its first-start message).
func wantsHelp(args []string) bool {
	if len(args) > 1 && args[1] == "help" {
		return true
	}
	for _, a := range args[1:] {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// helpFor is the help of one command: its lines of the usage, and its own
// page when it has one.
func helpFor(cmd string) string {
	pages := map[string]string{"connect": connectUsage, "admin": adminUsage, "outbox": outboxUsage, "github": githubUsage,
		"deploykey": deploykeyUsage, "loggroups": loggroupsUsage, "okf": okfUsage, "pacerelle": pacerelleUsage, "errors": errorsUsage}
	if p, ok := pages[cmd]; ok {
		return p
	}
	var b strings.Builder
	for line := range strings.SplitSeq(usage, "\n") {
		if strings.HasPrefix(line, "  vantagepeers "+cmd+" ") || line == "  vantagepeers "+cmd {
			b.WriteString(line + "\n")
		}
	}
	if b.Len() == 0 {
		return usage
	}
	b.WriteString(commandHelp[cmd])
	b.WriteString("\nEvery command but version takes --data-dir DIR (env VP_DATA_DIR, default ~/.vantagepeers) and --log-level LEVEL.\n")
	return b.String()
}

// commandHelp adds to the usage lines of the commands without a page.
var commandHelp = map[string]string{
	"serve": `
Starts the MCP server over Streamable HTTP (--addr, env VP_ADDR, default 127.0.0.1:8787). Stop it with
Ctrl-C or SIGTERM: it finishes the requests in flight and exits. The first start on an empty data dir
prints a ready configuration with an agent token, and the admin (master) token once.
`,
	"stdio": `
Serves MCP over stdin/stdout, for a host that starts the server itself. VP_TOKEN is the agent's token;
without it, the owner of the data dir acts as the local admin of the default tenant.
`,
	"token": `
  --tenant T        the tenant (create; list filters by it)
  --as a,b          orchestrators the token may act as, or '*'
  --read p,q        namespace prefixes it may read, or '*'
  --write p,q       namespace prefixes it may write, or '*'
  --ttl 30d         lifetime: days (30d) or a duration (12h); default: no expiry
  --label L         a note to recognise it by
  --tool-profile P  core or full: the tools advertised to it by default
The token is printed once on stdout; only its hash is stored.
`,
	"jobs": `
list: the background jobs with their schedules (UTC). run NAME [--tenant T]: run one now.
`,
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

func (c *common) logger(w io.Writer) (*slog.Logger, error) {
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(c.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level: %q is not one of debug, info, warn, error", c.logLevel)
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
