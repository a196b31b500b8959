package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/hostconfig"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func serveCommand() *command {
	var addr string
	return &command{Name: "serve", Args: argsNone, Synopsis: []string{"serve  [--data-dir DIR] [--addr HOST:PORT] [--log-level LEVEL]"},
		Details: `
Starts the MCP server over Streamable HTTP (--addr, env VP_ADDR, default 127.0.0.1:8787). Stop it with
Ctrl-C or SIGTERM: it finishes the requests in flight and exits. The first start on an empty data dir
prints a ready configuration with an agent token, and the admin (master) token once.
`,
		Flags: func(fs *flag.FlagSet, _ string) {
			fs.StringVar(&addr, "addr", envOr("VP_ADDR", "127.0.0.1:8787"), "listen address (env VP_ADDR)")
		},
		Run: func(ctx context.Context, e *env) error { return serve(ctx, e, addr) },
	}
}

func serve(ctx context.Context, e *env, addr string) error {
	log, err := e.logger()
	if err != nil {
		return err
	}
	if err := mcpserver.CheckToolProfile(os.Getenv("VP_TOOL_PROFILE")); err != nil {
		return fmt.Errorf("VP_TOOL_PROFILE: %w", err)
	}
	a, err := e.app(ctx)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		// The master token of a first start exists only now: show it even
		// though this start goes no further (connect makes agent tokens).
		announceMaster(e.stdout, a, e.dataDir)
		return fmt.Errorf("--addr: %w", err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	if a.fresh {
		wd, _ := os.Getwd()
		if err := printFirstStart(ctx, e.stdout, a, url, hostconfig.CommandName(os.Args[0], wd)); err != nil {
			_ = ln.Close()
			return err
		}
	} else {
		announceMaster(e.stdout, a, e.dataDir)
	}
	// Bundles too large for a tool result come as signed URLs, absolute:
	// under VP_PUBLIC_BASE_URL when set (a proxy in front), else the
	// listen address.
	base := publicBaseURL()
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	if a.OKFLinks, err = a.okfLinks(ctx, base); err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{
		Handler: httpapi.New(httpapi.Options{
			MCP:    a.mcpServer(nil),
			Tokens: a.Tokens, Version: version, Logger: log, Started: time.Now(), Storage: "sqlite",
			OAuth: a.OAuth, BasePath: publicBaseURL(), Limiter: a.limits.limiter,
			Routes: vpapp.ModuleRoutes(a.Services),
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	// Shutdown waits for the requests in flight: waits answer at once.
	srv.RegisterOnShutdown(a.Activity.Close)
	log.Info("serving", "url", url, "dataDir", e.dataDir, "version", version)
	stopJobs := a.startJobs(ctx, log)
	defer stopJobs()
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log.Info("shutting down")
	if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// printFirstStart greets a new data dir: an agent token with a ready
// Claude Code configuration (a token that may act as one agent and use the
// usual namespaces: with the master token an agent would have to name an
// orchestrator in every write, and the admin secret would sit in a project
// file), then the master token, once, labelled for admin commands only.
func printFirstStart(ctx context.Context, w io.Writer, a *app, url, self string) error {
	agent := firstAgentName()
	rd, wr := auth.DefaultGrants(agent)
	secret, tok, err := a.Tokens.Create(ctx, auth.Spec{Tenant: vp.DefaultTenant, ActsAs: []string{agent}, ReadPrefixes: rd, WritePrefixes: wr, Label: "first start"})
	if err != nil {
		return fmt.Errorf("first start: the agent token: %w", err)
	}
	cfg := hostconfig.Config{Host: "claude-code", Transport: "http", Name: "vantagepeers", URL: url, Token: secret}
	fmt.Fprintf(w, `
First start. Connect your first agent, %q (token %s: acts as %s in tenant %q, reads %s, writes %s).
Put this in .mcp.json in your project for Claude Code:

%s
More agents, other hosts (Claude Desktop, Cursor, Codex) or stdio — one token per agent:

  %s connect claude-code --as bob [--stdio] [--write]

`, agent, tok.ID, agent, vp.DefaultTenant, strings.Join(rd, ","), strings.Join(wr, ","), cfg.Render(), self)
	if a.newMaster != "" {
		fmt.Fprintf(w, `ADMIN token (master: every tenant's admin — for vantagepeers admin/token commands and the
/admin endpoints only; never put it in an agent's configuration). Shown once; only its hash is stored:

  %s

`, a.newMaster)
	} else {
		fmt.Fprint(w, "ADMIN token: the one in VP_MASTER_TOKEN (keep it out of agents' configurations).\n\n")
	}
	return nil
}

// firstAgentName names the first agent after the user who starts the
// server (an orchestrator id: lower case, letters, digits, '-' and '_'),
// "agent" when that gives nothing usable.
func firstAgentName() string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		}
		return -1
	}, os.Getenv("USER"))
	if name == "" || name == "root" || vp.ReservedOrchestrator(name) || vp.NormalizeOrchestrator(name) == vp.SystemCaller {
		return "agent"
	}
	return name
}

func stdioCommand() *command {
	return &command{Name: "stdio", Args: argsNone, Synopsis: []string{"stdio  [--data-dir DIR] [--log-level LEVEL]"},
		Details: `
Serves MCP over stdin/stdout, for a host that starts the server itself. VP_TOKEN is the agent's token;
without it, the owner of the data dir acts as the local admin of the default tenant.
`,
		Run: stdio,
	}
}

func stdio(ctx context.Context, e *env) error {
	log, err := e.logger()
	if err != nil {
		return err
	}
	a, err := e.app(ctx)
	if err != nil {
		return err
	}
	announceMaster(e.stderr, a, e.dataDir)
	p, err := stdioPrincipal(ctx, a, e.dataDir)
	if r := auth.Refusal(err); r != nil {
		// Exiting would show the host only "connection closed": serve, and
		// answer every request with the reason instead.
		log.Warn("VP_TOKEN refused", "reason", string(r.Reason), "tokenId", r.TokenID)
		return mcpserver.RefuseStdio(ctx, e.stdin, e.stdout, "VP_TOKEN was refused: "+r.Description())
	}
	if err != nil {
		return err
	}
	server := a.mcpServer(&p)
	log.Info("serving stdio", "tenant", p.Tenant, "dataDir", e.dataDir)
	stopJobs := a.startJobs(ctx, log)
	defer stopJobs()
	return runStdio(ctx, server, e.stdin, e.stdout)
}

func runStdio(ctx context.Context, server *mcp.Server, stdin io.Reader, stdout io.Writer) error {
	// GuardStdio: a request nested too deep gets an error naming its
	// argument instead of ending the session in the SDK's decoder.
	in, out := mcpserver.GuardStdio(stdin, stdout)
	err := server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// stdioPrincipal: VP_TOKEN when set; otherwise the owner of the data
// directory acts as the local admin of the default tenant.
func stdioPrincipal(ctx context.Context, a *app, dataDir string) (vp.Principal, error) {
	if tok := os.Getenv("VP_TOKEN"); tok != "" {
		p, err := a.Tokens.Resolve(ctx, tok)
		if err != nil {
			return vp.Principal{}, fmt.Errorf("VP_TOKEN: %w", err)
		}
		return p, nil
	}
	owned, err := ownedByCaller(dataDir)
	if err != nil {
		return vp.Principal{}, err
	}
	if !owned {
		return vp.Principal{}, fmt.Errorf("the data dir %s belongs to another user: set VP_TOKEN to a token of yours", dataDir)
	}
	p := auth.MasterPrincipal(vp.DefaultTenant)
	p.TokenID = "local-owner"
	return p, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
