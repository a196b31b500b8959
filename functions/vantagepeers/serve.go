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
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/vp"
	"github.com/vantagepeers/vantagepeers/webhooks"
)

func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	addr := fs.String("addr", envOr("VP_ADDR", "127.0.0.1:8787"), "listen address (env VP_ADDR)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	if err := mcpserver.CheckToolProfile(os.Getenv("VP_TOOL_PROFILE")); err != nil {
		return fmt.Errorf("VP_TOOL_PROFILE: %w", err)
	}
	a, err := openApp(ctx, c.dataDir, log)
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("--addr: %w", err)
	}
	url := "http://" + ln.Addr().String() + "/mcp"
	if a.newMaster != "" {
		printMaster(stdout, a.newMaster, url)
	}
	// Bundles too large for a tool result come as signed URLs, absolute:
	// under VP_PUBLIC_BASE_URL when set (a proxy in front), else the
	// listen address.
	base := publicBaseURL()
	if base == "" {
		base = "http://" + ln.Addr().String()
	}
	var okfDownload http.Handler
	if a.okfLinks, okfDownload, err = a.okfDownloads(ctx, base); err != nil {
		_ = ln.Close()
		return err
	}
	srv := &http.Server{
		Handler: httpapi.New(httpapi.Options{
			MCP:    a.mcpServer(nil),
			Tokens: a.tokens, Version: version, Logger: log, Started: time.Now(), Storage: "sqlite",
			OAuth: newOAuth(a, log), BasePath: publicBaseURL(), Webhooks: webhooks.New(a.webhooks), OKFDownload: okfDownload,
		}),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	log.Info("serving", "url", url, "dataDir", c.dataDir, "version", version)
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

// printMaster shows the master token once, with a ready-to-paste Claude Code
// configuration. Only its SHA-256 is stored.
func printMaster(w io.Writer, secret, url string) {
	fmt.Fprintf(w, `
First start: created the master token. It is shown once and only its SHA-256 is stored.

  %s

Add VantagePeers to Claude Code (.mcp.json in your project):

{
  "mcpServers": {
    "vantagepeers": {
      "type": "http",
      "url": "%s",
      "headers": { "Authorization": "Bearer %s" }
    }
  }
}

Create scoped tokens for each agent with: vantagepeers token create --tenant default --as alice

`, secret, url, secret)
}

func stdio(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c common
	c.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	log, err := c.logger(stderr)
	if err != nil {
		return err
	}
	a, err := openApp(ctx, c.dataDir, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if a.newMaster != "" {
		fmt.Fprintf(stderr, "vantagepeers: created the master token (shown once, only its hash is stored): %s\n", a.newMaster)
	}
	p, err := stdioPrincipal(ctx, a, c.dataDir)
	if err != nil {
		return err
	}
	server := a.mcpServer(&p)
	log.Info("serving stdio", "tenant", p.Tenant, "dataDir", c.dataDir)
	stopJobs := a.startJobs(ctx, log)
	defer stopJobs()
	err = server.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err != nil && (errors.Is(err, context.Canceled) || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// stdioPrincipal: VP_TOKEN when set; otherwise the owner of the data
// directory acts as the local admin of the default tenant.
func stdioPrincipal(ctx context.Context, a *app, dataDir string) (vp.Principal, error) {
	if tok := os.Getenv("VP_TOKEN"); tok != "" {
		p, err := a.tokens.Resolve(ctx, tok)
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
