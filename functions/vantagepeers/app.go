package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	vpapp "github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// app is the embedded product: one data directory, one SQLite store, the
// local search index, and the services the composition root
// (shared/app.Build) made on them.
type app struct {
	*vpapp.Services
	store *sqlite.Store
	index *searchlocal.Index
	// limits are the abuse limits of the endpoints open to all.
	limits *limits
	// newMaster is the master token's secret when this start created it.
	newMaster string
	// fresh: this start created the data dir's store (a first start, even
	// when VP_MASTER_TOKEN chose the master token).
	fresh bool
}

// servicesStore is the store the domain services write through: the store
// itself, except in the crash tests, which wrap it so that the process
// stops right after a commit and before the effects that follow it.
var servicesStore = func(st *sqlite.Store) store.Store { return st }

func openApp(ctx context.Context, dataDir string, log *slog.Logger) (*app, error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	// MkdirAll leaves an existing folder's mode alone; the data is secret.
	if err := os.Chmod(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dbPath := filepath.Join(dataDir, "vantagepeers.db")
	_, statErr := os.Stat(dbPath)
	st, err := sqlite.Open(ctx, sqlite.Options{Path: dbPath, Synchronous: os.Getenv("VP_SQLITE_SYNC")})
	if err != nil {
		return nil, err
	}
	a := &app{store: st, fresh: errors.Is(statErr, fs.ErrNotExist)}
	if err := a.open(ctx, dataDir, log); err != nil {
		_ = a.Close()
		return nil, err
	}
	return a, nil
}

// open makes the ports of the data directory and builds the services.
func (a *app) open(ctx context.Context, dataDir string, log *slog.Logger) error {
	masterHash, created, err := auth.EnsureMaster(ctx, a.store, os.Getenv("VP_MASTER_TOKEN"))
	if err != nil {
		return err
	}
	a.newMaster = created
	key, err := auth.EnsureKey(ctx, a.store, "cursor")
	if err != nil {
		return err
	}
	signer, err := listing.NewSigner(key)
	if err != nil {
		return err
	}
	// The search index is derived data (rebuilt from the store if lost), in
	// its own file so that index writes never wait on the store's writer.
	if a.index, err = searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dataDir, "search.db")}); err != nil {
		return err
	}
	eg, err := egressFromEnv()
	if err != nil {
		return err
	}
	if a.limits, err = abuseLimits(a.store, log); err != nil {
		return err
	}
	gh, err := gitHubFromEnv(a.store, dataDir)
	if err != nil {
		return err
	}
	// VP_EMBEDDER names the offline embedder; every process on this data
	// dir must name the same one, or each would re-embed the others' vectors.
	emb, err := vpapp.LocalEmbedder(os.Getenv(awsenv.EnvEmbedder))
	if err != nil {
		return fmt.Errorf("%s: %w", awsenv.EnvEmbedder, err)
	}
	a.Services, err = vpapp.Build(ctx, vpapp.Ports{Groups: vpapp.All,
		Store: servicesStore(a.store), Index: a.index, Cursors: signer, MasterHash: &masterHash,
		Embedder: emb, Queue: storequeue.New(storequeue.Options{Store: a.store, Name: "embed"}),
		OAuth: &oauth.Options{BaseURL: publicBaseURL(), MaxPendingClients: a.limits.maxPending, Clerk: oauth.ClerkOptions{
			Issuer: os.Getenv("CLERK_JWT_ISSUER_DOMAIN"), Audience: os.Getenv("VP_CLERK_AUDIENCE"), AllowedExtIDs: split(os.Getenv("VP_ALLOWED_EXT_IDS")),
		}},
		Limiter: a.limits.limiter, Egress: eg,
		GitHub: gh, GitHubTrusted: awsenv.SplitList(os.Getenv(awsenv.EnvGitHubTrusted)),
		ErrorSources: errorSources(ctx, eg, log), DeployKeys: deployKeys(dataDir), LogGroups: logGroups(dataDir),
		OutboxRemovalBatch: removalBatch, Version: version, Logger: log,
		// Waiters learn of other processes' commits on this data dir from
		// SQLite's data_version, polled while someone waits.
		Activity: activity.Options{Changes: a.store},
	})
	return err
}

// gitHubFromEnv is the GitHub capability's client: each tenant's
// credentials in the data dir (the default tenant's also from
// VP_GITHUB_WEBHOOK_SECRET and VP_GITHUB_TOKEN), read on every use so that
// `vantagepeers github set` needs no restart; the REST client paced by the
// store-backed limiter.
func gitHubFromEnv(st *sqlite.Store, dataDir string) (github.ForTenants, error) {
	creds := &github.FileCredentials{Path: filepath.Join(dataDir, github.CredentialsFile), Defaults: github.CredentialsFromEnv(os.Getenv)}
	client, err := github.New(github.Options{BaseURL: os.Getenv(awsenv.EnvGitHubAPIURL),
		Limiter: github.NewLimiter(github.LimiterOptions{Store: st})})
	if err != nil {
		return github.ForTenants{}, fmt.Errorf("%s: %w", awsenv.EnvGitHubAPIURL, err)
	}
	return github.ForTenants{Client: client, Credentials: creds}, nil
}

// mcpServer builds the MCP server over every service. local is the identity
// of token-less calls (stdio only).
func (a *app) mcpServer(local *vp.Principal) *mcp.Server {
	s := mcpserver.New(vpapp.MCPOptions(a.Services, mcpserver.Options{Version: version, Logger: a.Log,
		LocalPrincipal: local, ToolProfile: os.Getenv("VP_TOOL_PROFILE"),
		EmitUIMarkers: awsenv.On(os.Getenv(awsenv.EnvEmitUIMarkers)), Extend: conformanceOptions(),
	}))
	addConformanceFixtures(s)
	return s
}

// tenants lists the tenants this data directory serves: those holding a
// credential (tenants.WithCredentials, the scheduler's list on AWS too).
func (a *app) tenants(ctx context.Context) ([]string, error) {
	return a.Services.Tenants(ctx)
}

func (a *app) Close() error {
	if a.Services != nil {
		a.Services.Close() // the outbox's batched removals go to the store first
	}
	var errs []error
	if a.index != nil {
		errs = append(errs, a.index.Close())
	}
	return errors.Join(append(errs, a.store.Close())...)
}

// removalBatch is how long the removals of side effects done inline wait
// to be written together, off the tool call's path (outbox.RemovalBatch).
const removalBatch = 20 * time.Millisecond
