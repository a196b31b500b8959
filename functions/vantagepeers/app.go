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

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/businessunit"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/digest"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/search"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/tenants"
	"github.com/vantagepeers/vantagepeers/shared/vp"
	"github.com/vantagepeers/vantagepeers/webhooks"
)

// app is the embedded product: one data directory, one SQLite store, and the
// services built on it.
type app struct {
	store   *sqlite.Store
	index   *searchlocal.Index
	queue   *storequeue.Queue
	outbox  *outbox.Outbox
	tokens  *auth.Tokens
	keyword *keyword.Service
	digest  *digest.Service
	memory  *memory.Service
	leaves  leaves
	// profiles, messages, iframe sessions and mandates
	profiles *profile.Service
	messages *message.Service
	iframes  *iframe.Service
	mandates *mandate.Service
	tasks    *task.Service
	// missions and recurring are built on tasks.
	missions  *mission.Service
	recurring *recurring.Service
	// issues is the GitHub capability; webhooks its handler's options;
	// errors the deployment error monitor.
	issues   *issue.Service
	webhooks webhooks.Options
	errors   *errormon.Service
	log      *slog.Logger
	// egress is the policy of requests to URLs a tenant, an agent or a
	// client names (VP_EGRESS_ALLOW_HOSTS).
	egress *egress.Policy
	// okfLinks signs the download URLs of bundles too large for a tool
	// result; set by serve, which knows the server's URL.
	okfLinks *okfsvc.Links
	// okfSvc is the one OKF service of the process (its memory budget is
	// shared by every call), built on first use.
	okfSvc okfOnce
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
	masterHash, created, err := auth.EnsureMaster(ctx, st, os.Getenv("VP_MASTER_TOKEN"))
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	key, err := auth.EnsureKey(ctx, st, "cursor")
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	signer, err := listing.NewSigner(key)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	// The search index is derived data (rebuilt from the store if lost), in
	// its own file so that index writes never wait on the store's writer.
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(dataDir, "search.db")})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	q := storequeue.New(storequeue.Options{Store: st, Name: "embed"})
	// Side effects outside the store are committed with their causes and
	// run by their writers right after the commit; the outbox job retries
	// what failed. Handlers and subscribers are registered below, before
	// any job runs.
	ob, err := outbox.New(outbox.Options{Store: st, Logger: log, RemovalBatch: removalBatch})
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	ws := servicesStore(st) // what the domain services write through
	indexed := &search.Writer{Index: idx, Logger: log, Outbox: ob}
	kw := keyword.New(keyword.Options{Store: ws, Cursors: signer, Logger: log, Index: idx})
	profiles := profile.New(profile.Options{Store: ws, Cursors: signer, Logger: log})
	tasks := task.New(task.Options{Store: ws, Cursors: signer, Logger: log, Search: indexed})
	missions := mission.New(mission.Options{Store: ws, Cursors: signer, Logger: log, Tasks: tasks})
	tasks.UseMissions(missions)
	tasks.UseEvents(ob)
	messages := message.New(message.Options{Store: ws, Cursors: signer, Logger: log, Directory: profiles, Search: indexed})
	issues, gh, hooks, err := openIssues(ws, st, dataDir, signer, log, missions, messages, ob)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	eg, err := egressFromEnv()
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	monitor, err := openErrors(ctx, dataDir, ws, signer, log, gh, issues, ob, eg)
	if err != nil {
		_ = st.Close()
		return nil, err
	}
	if err := errors.Join(wireEffects(ob, kw, missions), issues.Wire(ob, tasks)); err != nil {
		_ = st.Close()
		return nil, err
	}
	return &app{
		store:   st,
		index:   idx,
		queue:   q,
		outbox:  ob,
		tokens:  auth.New(auth.Options{Store: st, MasterHash: masterHash}),
		keyword: kw,
		digest:  digest.New(digest.Options{Store: ws}),
		tasks:   tasks, missions: missions, issues: issues, webhooks: hooks, errors: monitor,
		recurring: recurring.New(recurring.Options{Store: ws, Cursors: signer, Logger: log, Tasks: tasks}),
		memory: memory.New(memory.Options{Store: st, Index: idx, Embedder: embedlocal.New(embedlocal.Options{}),
			Queue: q, Cursors: signer, Logger: log}),
		leaves: leaves{
			briefings:     briefing.New(briefing.Options{Store: ws, Cursors: signer, Search: indexed}),
			components:    component.New(component.Options{Store: ws, Cursors: signer, Search: indexed}),
			businessUnits: businessunit.New(businessunit.Options{Store: ws, Cursors: signer}),
			diary:         diary.New(diary.Options{Store: ws, Cursors: signer}),
		},
		profiles:  profiles,
		messages:  messages,
		iframes:   iframe.New(iframe.Options{Store: ws, Logger: log}),
		mandates:  mandate.New(mandate.Options{Store: ws, Cursors: signer, Logger: log}),
		log:       log,
		egress:    eg,
		newMaster: created,
		fresh:     errors.Is(statErr, fs.ErrNotExist),
	}, nil
}

// wireEffects registers the handlers and subscribers of the outbox: the
// keyword index writes of every aggregate, and mission auto-completion as
// an observer of finished tasks. More subscribers of task.TopicFinished
// (GitHub comments on step completion) are added here, not in the task
// package.
func wireEffects(ob *outbox.Outbox, kw *keyword.Service, missions *mission.Service) error {
	return errors.Join(
		ob.Handle(search.IndexTopic, kw.IndexJob),
		ob.Subscribe(task.TopicFinished, "mission.autocomplete", missions.OnTaskFinished),
	)
}

// openIssues builds the GitHub capability: each tenant's credentials in
// the data dir (the default tenant's also from VP_GITHUB_WEBHOOK_SECRET
// and VP_GITHUB_TOKEN), read on every use so that `vantagepeers github
// set` needs no restart; the REST client paced by the store-backed
// limiter; and the webhook handler's options.
func openIssues(ws store.Store, st *sqlite.Store, dataDir string, signer *listing.Signer, log *slog.Logger,
	missions *mission.Service, messages *message.Service, ob *outbox.Outbox) (*issue.Service, github.ForTenants, webhooks.Options, error) {
	creds := &github.FileCredentials{Path: filepath.Join(dataDir, github.CredentialsFile), Defaults: github.CredentialsFromEnv(os.Getenv)}
	client, err := github.New(github.Options{BaseURL: os.Getenv(awsenv.EnvGitHubAPIURL),
		Limiter: github.NewLimiter(github.LimiterOptions{Store: st})})
	if err != nil {
		return nil, github.ForTenants{}, webhooks.Options{}, fmt.Errorf("%s: %w", awsenv.EnvGitHubAPIURL, err)
	}
	gh := github.ForTenants{Client: client, Credentials: creds}
	issues := issue.New(issue.Options{Store: ws, Cursors: signer, Logger: log, Missions: missions, Notices: messages, Jobs: ob,
		GitHub: gh, Trusted: awsenv.SplitList(os.Getenv(awsenv.EnvGitHubTrusted))})
	return issues, gh, webhooks.Options{Secrets: github.WebhookSecrets{Credentials: creds}, Dispatcher: issues, Logger: log,
		DefaultTenant: vp.DefaultTenant}, nil
}

// mcpServer builds the MCP server over every service. local is the identity
// of token-less calls (stdio only).
func (a *app) mcpServer(local *vp.Principal) *mcp.Server {
	return mcpserver.New(mcpserver.Options{
		Keyword: a.keyword, Digest: a.digest, Tasks: a.tasks, Missions: a.missions, Recurring: a.recurring, Memory: a.memory, Version: version, Logger: a.log,
		Profiles: a.profiles, Messages: a.messages, Iframes: a.iframes, Mandates: a.mandates,
		LocalPrincipal: local, ToolProfile: os.Getenv("VP_TOOL_PROFILE"),
		EmitUIMarkers: awsenv.On(os.Getenv(awsenv.EnvEmitUIMarkers)),
		Briefings:     a.leaves.briefings, Components: a.leaves.components, BusinessUnits: a.leaves.businessUnits,
		Diary: a.leaves.diary, Issues: a.issues, Errors: a.errors, OKF: a.okf(), OKFLinks: a.okfLinks,
	})
}

// leaves are the services of the aggregates that need no other's.
type leaves struct {
	briefings     *briefing.Service
	components    *component.Service
	businessUnits *businessunit.Service
	diary         *diary.Service
}

// tenants lists the tenants this data directory serves: those holding a
// credential (tenants.WithCredentials, the scheduler's list on AWS too).
func (a *app) tenants(ctx context.Context) ([]string, error) {
	return tenants.WithCredentials(ctx, a.store)
}

func (a *app) Close() error {
	a.outbox.Close() // its batched removals go to the store first
	return errors.Join(a.index.Close(), a.store.Close())
}

// removalBatch is how long the removals of side effects done inline wait
// to be written together, off the tool call's path (outbox.RemovalBatch).
const removalBatch = 20 * time.Millisecond
