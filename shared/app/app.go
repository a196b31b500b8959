// Package app is the composition root: Build constructs every service of
// VantagePeers over the ports a backend provides, wires the outbox's
// handlers and subscribers, and returns them. The embedded binary
// (functions/vantagepeers), each Lambda (shared/awsapp) and the tests call
// it; nothing else calls a service's New outside that service's own tests.
//
// What each capability contributes — its tables, jobs, routes, outbox
// wiring and tools — is declared once, in its entry of Modules; KEYS.md,
// the job catalogue, the route table, the CDK stack's generated tables
// and tools/list are derived from that list.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/businessunit"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/digest"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/tenants"
	"github.com/vantagepeers/vantagepeers/webhooks"
)

// Group is a set of modules a process builds: a Lambda function builds
// only the groups it needs (least privilege: it reads no secret and holds
// no client of a group it does not build).
type Group uint8

const (
	// Coordination: the agents' shared state — profiles, messages, tasks,
	// missions and the rest, GitHub issues and the error monitor — with the
	// outbox that carries their side effects.
	Coordination Group = 1 << iota
	// Memory: memories and their search (needs Index, Embedder and Queue).
	Memory
	// Relay: the Pacerelle relay.
	Relay
	// All groups: the embedded binary.
	All = Coordination | Memory | Relay
	// Core modules are built in every process, whatever its groups: the
	// outbox, tokens and the OAuth server, each only from its ports.
	Core Group = 1 << 7
)

// Ports are what a backend provides: storage, search, the queue, the
// clients of remote services and the configuration the services need.
// Zero fields leave out what needs them.
type Ports struct {
	// Groups are the modules to build besides the Core ones.
	Groups Group
	// Store is the store every service writes through.
	Store store.Store
	// Index is the search index; nil: no keyword index, no memory.
	Index search.Index
	// Embedder and Queue, with Index, make the memory service.
	Embedder embed.Embedder
	Queue    queue.Queue
	// Cursors signs list cursors.
	Cursors *listing.Signer
	// MasterHash is the SHA-256 of the master token; nil: no bearer tokens
	// are checked in this process (no Tokens service).
	MasterHash *[32]byte
	// OAuth configures the OAuth 2.1 server; nil: not served here. Its
	// Store, Tokens, Logger, Egress and Limiter are filled in.
	OAuth *oauth.Options
	// Limiter counts the requests of the routes open to all.
	Limiter *ratelimit.Limiter
	// Egress is the policy of every request to a URL a tenant, an agent or
	// an OAuth client names.
	Egress *egress.Policy

	// GitHub is the REST client with each tenant's credentials;
	// GitHubTrusted the authors whose comments steer the IRP.
	GitHub        github.ForTenants
	GitHubTrusted []string
	// FlushStarts: a delivery's mission starts run before its answer (a
	// Lambda, frozen after it answers).
	FlushStarts bool
	// ErrorSources, DeployKeys and LogGroups are the error monitor's log
	// sources and its tenants' secrets and allowances.
	ErrorSources map[string]source.Source
	DeployKeys   errormon.Keys
	LogGroups    errormon.LogGroupPolicy
	// RelayPusher rings doorbells outside this process (the WebSocket
	// API), through the outbox; nil: only this process's doorbells.
	RelayPusher relay.Pusher
	// OKFBudget is the memory budget of OKF imports (the default when zero).
	OKFBudget int64
	// OutboxRemovalBatch and OutboxJitter: see outbox.Options
	// (RemovalBatch, Jitter: tests fix the retries' jitter).
	OutboxRemovalBatch time.Duration
	OutboxJitter       func() float64
	// Tests only: IssuesGitHub and ErrorsGitHub stand for GitHub in the
	// issues and the error monitor (in-memory fakes; nil: GitHub), and
	// TuneErrors adjusts the error monitor's options (its limits, budget
	// and clock). See testports.go.
	IssuesGitHub issue.GitHub
	ErrorsGitHub errormon.GitHub
	TuneErrors   func(*errormon.Options)

	Version string
	Logger  *slog.Logger
	Now     func() time.Time
}

// Services are the services Build made; a field is nil when its module's
// group or its ports were not given.
type Services struct {
	Log    *slog.Logger
	Store  store.Store
	Index  search.Index
	Outbox *outbox.Outbox
	Tokens *auth.Tokens
	OAuth  *oauth.Server
	// Limiter counts the requests of the routes open to all (Ports).
	Limiter *ratelimit.Limiter

	Keyword       *keyword.Service
	Digest        *digest.Service
	Profiles      *profile.Service
	Messages      *message.Service
	Iframes       *iframe.Service
	Mandates      *mandate.Service
	Tasks         *task.Service
	Missions      *mission.Service
	Recurring     *recurring.Service
	Briefings     *briefing.Service
	Components    *component.Service
	BusinessUnits *businessunit.Service
	Diary         *diary.Service
	Memory        *memory.Service
	Queue         queue.Queue
	Issues        *issue.Service
	// Webhooks are the options of the GitHub webhooks' handler.
	Webhooks *webhooks.Options
	Errors   *errormon.Service
	OKF      *okfsvc.Service
	// OKFLinks signs the download URLs of bundles too large for a tool
	// result: set by the server, which knows its public URL, before Routes.
	OKFLinks *okfsvc.Links
	Relay    *relay.Relay

	groups Group // the groups Build built
}

// Tenants lists the tenants that hold a credential: what a process knows of
// tenants (the per-tenant jobs visit them).
func (s *Services) Tenants(ctx context.Context) ([]string, error) {
	return tenants.WithCredentials(ctx, s.Store)
}

// Build constructs the services of the modules of p.Groups over p, in the
// order of Modules, then wires their outbox handlers and subscribers.
func Build(ctx context.Context, p Ports) (*Services, error) {
	if p.Store == nil {
		return nil, errors.New("app: Ports.Store is required")
	}
	if p.Logger == nil {
		p.Logger = slog.New(slog.DiscardHandler)
	}
	if p.Now == nil {
		p.Now = time.Now
	}
	if p.Egress == nil {
		p.Egress = egress.New(egress.Options{})
	}
	s := &Services{Log: p.Logger, Store: p.Store, Index: p.Index, Limiter: p.Limiter, groups: p.Groups}
	mods := Modules()
	for _, m := range mods {
		if m.Build == nil || !m.builtIn(p.Groups) {
			continue
		}
		if err := m.Build(ctx, &p, s); err != nil {
			return nil, fmt.Errorf("app: building %s: %w", m.Name, err)
		}
	}
	if err := wireOutbox(s, mods, p.Groups); err != nil {
		return nil, err
	}
	return s, nil
}

// WireOutbox registers every built module's outbox handlers and
// subscribers on s.Outbox. Build does it; a test that stands for a
// restarted process (an outbox with another clock) does it again.
func WireOutbox(s *Services) error {
	return wireOutbox(s, Modules(), s.groups)
}

func wireOutbox(s *Services, mods []Module, g Group) error {
	if s.Outbox == nil {
		return nil
	}
	var errs []error
	for _, m := range mods {
		if m.Wire != nil && m.builtIn(g) {
			errs = append(errs, m.Wire(s))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("app: wiring the outbox: %w", err)
	}
	return nil
}

// Close stops what the services run in the background; the backend closes
// its ports.
func (s *Services) Close() {
	if s.Outbox != nil {
		s.Outbox.Close() // its batched removals go to the store first
	}
}

// searchWriter is the indexing of an aggregate's writes: through the
// outbox, into p.Index (a Writer without an index enqueues nothing).
func searchWriter(p *Ports, s *Services) *search.Writer {
	return &search.Writer{Index: p.Index, Logger: p.Logger, Outbox: s.Outbox}
}
