package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/awsenv"
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
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/oauth"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/relay"
	"github.com/vantagepeers/vantagepeers/shared/pacerelle/webapp"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	"github.com/vantagepeers/vantagepeers/shared/ratelimit"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/reservation"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/tenants"
	"github.com/vantagepeers/vantagepeers/shared/vp"
	"github.com/vantagepeers/vantagepeers/webhooks"
)

// Module is what one capability contributes. Every field but Name is
// optional.
type Module struct {
	Name string
	// Group is when the module is built (Coordination when zero); a module
	// whose group a process does not build contributes nothing to it.
	Group Group
	// Tables are the module's key declarations (KEYS.md, the CDK table).
	Tables func() []table.Doc
	// Build constructs the module's services into s, from p and the
	// services of the modules before it.
	Build func(ctx context.Context, p *Ports, s *Services) error
	// Wire registers the module's outbox handlers and subscribers, once
	// every module is built.
	Wire func(s *Services) error
	// Jobs are the module's jobs, bound to s (with s empty, for the
	// catalogue's static view, their Build says not wired).
	Jobs func(s *Services) []jobs.Job
	// Routes are the module's HTTP routes, their handlers built over s
	// (nil handlers with s empty: the table the CDK stack is made from).
	Routes func(s *Services) []httpapi.Route
	// Tools are the module's MCP tools over s (none for a service not
	// built): tools/list offers what the modules give.
	Tools func(s *Services) []mcpserver.Toolset
}

func (m Module) builtIn(g Group) bool {
	switch m.Group {
	case Core:
		return true
	case 0:
		return g&Coordination != 0
	}
	return g&m.Group != 0
}

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
	// IssuesGitHub and ErrorsGitHub stand for GitHub in the issues and in
	// the error monitor when set (tests: in-memory fakes); TuneErrors
	// adjusts the error monitor's options (tests: its own clock, limits and
	// log). See issuesGitHub and errorsOptions.
	IssuesGitHub issue.GitHub
	ErrorsGitHub errormon.GitHub
	TuneErrors   func(*errormon.Options)
	// Activity configures wait_for_activity: Changes, the store's commit
	// counter across processes (nil: the sources are polled with
	// backoff), and MaxWait, the longest wait (AWS: its configuration).
	Activity activity.Options

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
	Activity *activity.Service
	// Reservations are the path reservations.
	Reservations *reservation.Service

	groups Group // the groups Build built
}

// Tenants lists the tenants that hold a credential: what a process knows of
// tenants (the per-tenant jobs visit them).
func (s *Services) Tenants(ctx context.Context) ([]string, error) {
	// Read-only listers over the store: a process without a master token
	// or an OAuth server (the scheduler) lists them too.
	toks := auth.New(auth.Options{Store: s.Store})
	return tenants.WithCredentials(ctx, toks, oauth.New(oauth.Options{Store: s.Store, Tokens: toks}))
}

// Modules is the ordered list of capabilities: Build constructs them in
// this order (a module may use the services of those before it), and
// KEYS.md, the job catalogue, the routes and the tools follow it.
//
// A new capability is one entry here; see the README's "Adding a
// capability".
func Modules() []Module {
	return []Module{
		{Name: "outbox", Group: Core, Tables: outbox.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) (err error) {
				s.Outbox, err = outbox.New(outbox.Options{Store: p.Store, Logger: p.Logger, Now: p.Now, RemovalBatch: p.OutboxRemovalBatch, Jitter: p.OutboxJitter})
				return err
			},
			Jobs: func(s *Services) []jobs.Job {
				return []jobs.Job{cron("outbox", "* * * * *", "runs the side effects whose inline run failed or whose writer died, with backoff and dead letters",
					func(d jobs.Deps) (jobs.Func, error) {
						if s.Outbox == nil {
							return nil, jobs.NotWired("outbox", "the outbox")
						}
						return jobs.OutboxDrain(s.Outbox, d.Logger), nil
					})}
			}},
		{Name: "auth", Group: Core, Tables: func() []table.Doc { return append(auth.Tables(), ratelimit.Tables()...) },
			Build: func(_ context.Context, p *Ports, s *Services) error {
				if p.MasterHash != nil {
					s.Tokens = auth.New(auth.Options{Store: p.Store, MasterHash: *p.MasterHash, Now: p.Now})
				}
				return nil
			}},
		{Name: "oauth", Group: Core, Tables: oauth.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) error {
				if p.OAuth != nil {
					o := *p.OAuth
					o.Store, o.Tokens, o.Logger, o.Egress, o.Limiter = p.Store, s.Tokens, p.Logger, p.Egress, p.Limiter
					s.OAuth = oauth.New(o)
				}
				return nil
			}},
		activityModule(),
		memoryModule(),
		{Name: "briefing", Tables: briefing.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) error {
				s.Briefings = briefing.New(briefing.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Search: searchWriter(p, s)})
				return nil
			},
			Tools: func(s *Services) []mcpserver.Toolset {
				return []mcpserver.Toolset{mcpserver.BriefingTools(s.Briefings)}
			}},
		{Name: "component", Tables: component.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) error {
				s.Components = component.New(component.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Search: searchWriter(p, s)})
				return nil
			},
			Tools: func(s *Services) []mcpserver.Toolset {
				return []mcpserver.Toolset{mcpserver.ComponentTools(s.Components)}
			}},
		{Name: "businessunit", Tables: businessunit.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) error {
				s.BusinessUnits = businessunit.New(businessunit.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now})
				return nil
			},
			Tools: func(s *Services) []mcpserver.Toolset {
				return []mcpserver.Toolset{mcpserver.BusinessUnitTools(s.BusinessUnits)}
			}},
		{Name: "diary", Tables: diary.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) error {
				s.Diary = diary.New(diary.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now})
				return nil
			},
			Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.DiaryTools(s.Diary)} }},
		{Name: "profile", Tables: profile.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) error {
				s.Profiles = profile.New(profile.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger})
				return nil
			},
			Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.ProfileTools(s.Profiles)} }},
		{Name: "message", Tables: message.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) error {
				s.Messages = message.New(message.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger,
					Directory: s.Profiles, Search: searchWriter(p, s)})
				return nil
			},
			Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.MessageTools(s.Messages)} }},
		{Name: "mandate", Tables: mandate.Tables,
			Build: func(_ context.Context, p *Ports, s *Services) error {
				s.Mandates = mandate.New(mandate.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger})
				return nil
			},
			Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.MandateTools(s.Mandates)} }},
		iframeModule(),
		taskModule(),
		reservationModule(),
		recurringModule(),
		keywordModule(),
		{Name: "digest",
			Build: func(_ context.Context, p *Ports, s *Services) error {
				s.Digest = digest.New(digest.Options{Store: p.Store, Now: p.Now})
				return nil
			},
			Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.DigestTools(s.Digest)} }},
		issueModule(),
		errormonModule(),
		okfModule(),
		relayModule(),
	}
}

// cron is a Cron job of the scheduler function.
func cron(name, schedule, summary string, build func(jobs.Deps) (jobs.Func, error)) jobs.Job {
	return jobs.Job{Name: name, Kind: jobs.Cron, Schedule: jobs.MustParseSchedule(schedule), Function: awsenv.FuncScheduler,
		Summary: summary, Build: build}
}

// perTenant is a per-tenant Cron job of run, a method of a service that
// may not be built in this process (then run is nil).
func perTenant(name, schedule, summary string, run func() func(context.Context, string) (int, error)) jobs.Job {
	j := cron(name, schedule, summary, func(d jobs.Deps) (jobs.Func, error) { return jobs.PerTenant(name, d, run()) })
	j.PerTenant = true
	return j
}

// activityModule is wait_for_activity. It is built before the modules
// whose writes wake its waiters: they write through a store that tells
// its hub of every commit (activity.Notifying); its sources read the
// messages and tasks built after it, plugged in by its Wire.
func activityModule() Module {
	return Module{Name: "activity",
		Build: func(_ context.Context, p *Ports, s *Services) error {
			o := p.Activity
			o.Hub, o.Logger = activity.NewHub(), p.Logger
			p.Store = activity.Notifying(p.Store, o.Hub)
			s.Activity = activity.New(o)
			return nil
		},
		Wire: func(s *Services) error {
			if s.Messages != nil {
				s.Activity.Add(activity.Messages(s.Messages))
			}
			if s.Tasks != nil {
				s.Activity.Add(activity.Tasks(s.Store))
				s.Activity.Add(activity.Unblocked(s.Store))
			}
			return nil
		},
		Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.ActivityTools(s.Activity)} }}
}

func memoryModule() Module {
	return Module{Name: "memory", Group: Memory, Tables: func() []table.Doc { return append(memory.Tables(), storequeue.Tables()...) },
		Build: func(_ context.Context, p *Ports, s *Services) error {
			if p.Index == nil || p.Embedder == nil || p.Queue == nil {
				return nil // no search index here: no memory tools
			}
			s.Queue = p.Queue
			s.Memory = memory.New(memory.Options{Store: p.Store, Index: p.Index, Embedder: p.Embedder, Queue: p.Queue,
				Cursors: p.Cursors, Now: p.Now, Logger: p.Logger})
			return nil
		},
		Jobs: func(s *Services) []jobs.Job {
			var o *jobs.EmbedderOptions
			if s.Memory != nil {
				o = &jobs.EmbedderOptions{Queue: s.Queue, Memory: s.Memory}
			}
			return []jobs.Job{jobs.Embedder("embedder", awsenv.FuncEmbedder, "computes the vectors of stored memories from the embedding queue", o)}
		},
		Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.MemoryTools(s.Memory)} }}
}

func iframeModule() Module {
	return Module{Name: "iframe", Tables: iframe.Tables,
		Build: func(_ context.Context, p *Ports, s *Services) error {
			s.Iframes = iframe.New(iframe.Options{Store: p.Store, Now: p.Now, Logger: p.Logger})
			return nil
		},
		Jobs: func(s *Services) []jobs.Job {
			return []jobs.Job{cron("iframe-session-cleanup", "0 * * * *", "deletes expired (and revoked) iframe embed sessions",
				func(d jobs.Deps) (jobs.Func, error) {
					if s.Iframes == nil {
						return nil, jobs.NotWired("iframe-session-cleanup", "the iframe service")
					}
					return jobs.IframeCleanup(s.Iframes, d.Logger), nil
				})}
		},
		Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.IframeTools(s.Iframes)} }}
}

// taskModule is tasks and missions, built together: each needs the other
// (a task's completion may complete its mission; a mission creates tasks).
func taskModule() Module {
	return Module{Name: "task", Tables: func() []table.Doc { return append(task.Tables(), mission.Tables()...) },
		Build: func(_ context.Context, p *Ports, s *Services) error {
			s.Tasks = task.New(task.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger, Search: searchWriter(p, s)})
			s.Missions = mission.New(mission.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger, Tasks: s.Tasks})
			s.Tasks.UseMissions(s.Missions)
			s.Tasks.UseEvents(s.Outbox)
			if s.Messages != nil { // check_messages reports the recipient's stuck work
				s.Messages.UseWork(s.Tasks)
			}
			return nil
		},
		Wire: func(s *Services) error {
			return s.Outbox.Subscribe(task.TopicFinished, "mission.autocomplete", s.Missions.OnTaskFinished)
		},
		Tools: func(s *Services) []mcpserver.Toolset {
			return []mcpserver.Toolset{mcpserver.TaskTools(s.Tasks), mcpserver.MissionTools(s.Missions)}
		}}
}

// reservationModule is path reservations: a linked task's end releases
// them (task.TopicFinished, watched for tasks outside missions too), and a
// job tells holders of the ones that expired unrenewed.
func reservationModule() Module {
	const name = "reservation-expiry"
	return Module{Name: "reservation", Tables: reservation.Tables,
		Build: func(_ context.Context, p *Ports, s *Services) error {
			s.Reservations = reservation.New(reservation.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger,
				Tasks: s.Tasks, Notices: s.Messages})
			// Any task may hold reservations; the subscriber's read is one
			// sparse index query.
			s.Tasks.WatchFinished(func(vp.Task) bool { return true })
			if s.Activity != nil {
				s.Activity.Add(s.Reservations.Expiring())
			}
			return nil
		},
		Wire: func(s *Services) error {
			return s.Outbox.Subscribe(task.TopicFinished, "reservation.release", func(ctx context.Context, j outbox.Job) error {
				f, err := task.DecodeFinished(j)
				if err != nil {
					return err
				}
				return s.Reservations.OnTaskFinished(ctx, f.Tenant, f.TaskID, f.NewStatus)
			})
		},
		Jobs: func(s *Services) []jobs.Job {
			return []jobs.Job{cron(name, "* * * * *", "tells each holder of a path reservation that expired unrenewed, once",
				func(d jobs.Deps) (jobs.Func, error) {
					if s.Reservations == nil {
						return nil, jobs.NotWired(name, "the reservation service")
					}
					return func(ctx context.Context, now time.Time) error {
						rep, err := s.Reservations.NotifyExpired(ctx, now)
						if rep.Notified > 0 || err != nil {
							s.Log.InfoContext(ctx, name, "expired", rep.Expired, "notified", rep.Notified, "more", rep.More, "err", err)
						}
						return err
					}, nil
				})}
		},
		Tools: func(s *Services) []mcpserver.Toolset {
			return []mcpserver.Toolset{mcpserver.ReservationTools(s.Reservations)}
		}}
}

func recurringModule() Module {
	return Module{Name: "recurring", Tables: recurring.Tables,
		Build: func(_ context.Context, p *Ports, s *Services) error {
			s.Recurring = recurring.New(recurring.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger, Tasks: s.Tasks})
			return nil
		},
		Jobs: func(s *Services) []jobs.Job {
			return []jobs.Job{cron("recurring-tasks", "* * * * *", "creates the task of every recurring template due, once per scheduled time",
				func(d jobs.Deps) (jobs.Func, error) {
					if s.Recurring == nil {
						return nil, jobs.NotWired("recurring-tasks", "the recurring service")
					}
					return jobs.RecurringTasks(s.Recurring, d.Logger), nil
				})}
		},
		Tools: func(s *Services) []mcpserver.Toolset {
			return []mcpserver.Toolset{mcpserver.RecurringTools(s.Recurring)}
		}}
}

func keywordModule() Module {
	const name = "search-backfill"
	return Module{Name: "keyword", Tables: keyword.Tables,
		Build: func(_ context.Context, p *Ports, s *Services) error {
			s.Keyword = keyword.New(keyword.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger, Index: p.Index})
			return nil
		},
		// Keyword index writes, only where there is an index: a Writer
		// without one enqueues nothing.
		Wire: func(s *Services) error {
			if s.Index == nil {
				return nil
			}
			return s.Outbox.Handle(search.IndexTopic, s.Keyword.IndexJob)
		},
		Jobs: func(s *Services) []jobs.Job {
			// Every 10 minutes on AWS: writes index themselves, so the
			// backfill only matters after a deployment brings an index, and
			// each run reads the credential indexes (tenants.WithCredentials).
			j := cron(name, "*/10 * * * *", "makes what was written before keyword search existed searchable, once per index",
				func(d jobs.Deps) (jobs.Func, error) {
					switch {
					case s.Keyword == nil || s.Index == nil:
						return nil, jobs.NotWired(name, "a search index")
					case d.Tenants == nil:
						return nil, jobs.NotWired(name, "Deps.Tenants")
					}
					return jobs.SearchBackfill(s.Keyword, d.Tenants, d.Logger), nil
				})
			j.AtStart, j.PerTenant = true, true
			return []jobs.Job{j}
		},
		Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.KeywordTools(s.Keyword)} }}
}

func issueModule() Module {
	return Module{Name: "issue", Tables: func() []table.Doc { return append(append(issue.Tables(), webhooks.Tables()...), github.Tables()...) },
		Build: func(_ context.Context, p *Ports, s *Services) error {
			s.Issues = issue.New(issue.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger, Missions: s.Missions,
				Notices: s.Messages, Jobs: s.Outbox, GitHub: p.issuesGitHub(), Trusted: p.GitHubTrusted, FlushStarts: p.FlushStarts})
			s.Webhooks = &webhooks.Options{Secrets: github.WebhookSecrets{Credentials: p.GitHub.Credentials}, Dispatcher: s.Issues,
				Logger: p.Logger, DefaultTenant: vp.DefaultTenant, Now: p.Now, Limiter: p.Limiter}
			return nil
		},
		Wire: func(s *Services) error { return s.Issues.Wire(s.Outbox, s.Tasks) },
		Jobs: func(s *Services) []jobs.Job {
			issues := func(run func(*issue.Service, context.Context, string) (int, error)) func() func(context.Context, string) (int, error) {
				return func() func(context.Context, string) (int, error) {
					if s.Issues == nil {
						return nil
					}
					return func(ctx context.Context, t string) (int, error) { return run(s.Issues, ctx, t) }
				}
			}
			return []jobs.Job{
				perTenant("pr-monitor", "0 * * * *", "polls the pull requests of tracked external issues (conditional requests) and tells the watcher on merge or close",
					issues((*issue.Service).MonitorPRs)),
				perTenant("issue-stats", "0 6 * * *", "writes each mapped project's daily issue resolution snapshot (time to first response, time to fix)",
					issues((*issue.Service).SnapshotAll)),
			}
		},
		// GitHub deliveries for the default tenant, and for a named one;
		// the handler checks the signatures itself.
		Routes: func(s *Services) []httpapi.Route {
			var h http.Handler
			if s.Webhooks != nil {
				o := *s.Webhooks
				if o.Logger == nil {
					o.Logger = s.Log
				}
				h = webhooks.New(o)
			}
			post := []string{http.MethodPost}
			return []httpapi.Route{
				{Path: "/webhooks/github", Methods: post, Auth: httpapi.AuthSignature, Function: awsenv.FuncWebhooks, Handler: h},
				{Path: "/webhooks/github/{tenant}", Methods: post, Auth: httpapi.AuthSignature, Function: awsenv.FuncWebhooks, Handler: h},
			}
		},
		Tools: func(s *Services) []mcpserver.Toolset {
			return []mcpserver.Toolset{mcpserver.IssueTools(s.Issues, s.Memory)}
		}}
}

func errormonModule() Module {
	return Module{Name: "errormon", Tables: errormon.Tables,
		Build: func(_ context.Context, p *Ports, s *Services) error {
			s.Errors = errormon.New(p.errorsOptions(errormon.Options{Store: p.Store, Cursors: p.Cursors, Now: p.Now, Logger: p.Logger, Sources: p.ErrorSources,
				Keys: p.DeployKeys, LogGroups: p.LogGroups, GitHub: p.GitHub, Issues: s.Issues, Jobs: s.Outbox, Egress: p.Egress}))
			return nil
		},
		Wire: func(s *Services) error { return s.Errors.Wire(s.Outbox) },
		Jobs: func(s *Services) []jobs.Job {
			return []jobs.Job{perTenant("error-monitor", "*/5 * * * *", "reads each monitored deployment's new error logs, groups and counts them; a new error files one [Auto] GitHub issue",
				func() func(context.Context, string) (int, error) {
					if s.Errors == nil {
						return nil
					}
					return s.Errors.ScanAll
				})}
		},
		Tools: func(s *Services) []mcpserver.Toolset { return []mcpserver.Toolset{mcpserver.ErrorTools(s.Errors)} }}
}

func okfModule() Module {
	return Module{Name: "okf", Group: Coordination, Tables: okfsvc.Tables,
		Build: func(_ context.Context, p *Ports, s *Services) error {
			if s.Memory == nil || s.Tasks == nil {
				return nil // bundles hold memories and tasks
			}
			s.OKF = okfsvc.New(okfsvc.Options{Store: p.Store, Memory: s.Memory, Tasks: s.Tasks, Version: p.Version, Now: p.Now,
				MemoryBudget: p.OKFBudget, Search: searchWriter(p, s)})
			return nil
		},
		// Large OKF exports: the URL is signed (HMAC, tenant, expiry), no token.
		Routes: func(s *Services) []httpapi.Route {
			var h http.Handler
			if s.OKF != nil && s.OKFLinks != nil {
				h = s.OKFLinks.Handler(s.OKF)
			}
			return []httpapi.Route{{Path: okfsvc.DownloadPath, Methods: []string{http.MethodGet}, Auth: httpapi.AuthNone, Function: awsenv.FuncMCP,
				Handler: h, Limit: func(r ratelimit.Rules) (ratelimit.Rule, string) { return r.Download, "downloads" }}}
		},
		Tools: func(s *Services) []mcpserver.Toolset {
			return []mcpserver.Toolset{mcpserver.OKFTools(s.OKF, s.OKFLinks)}
		}}
}

func relayModule() Module {
	return Module{Name: "pacerelle", Group: Relay, Tables: relay.Tables,
		Build: func(_ context.Context, p *Ports, s *Services) error {
			o := relay.Options{Store: p.Store, Logger: p.Logger, Now: p.Now}
			if s.Tokens != nil { // a nil *auth.Tokens in the interface would not read as "none"
				o.Tokens = s.Tokens
			}
			s.Relay = relay.New(o)
			if p.RelayPusher != nil && s.Outbox != nil {
				// Rings go through the outbox only where a pusher reaches
				// doorbells outside this process.
				o.Jobs, o.Pusher = s.Outbox, p.RelayPusher
				s.Relay = relay.New(o)
				return s.Relay.Wire(s.Outbox)
			}
			return nil
		},
		Routes: func(s *Services) []httpapi.Route {
			var api, app http.Handler
			if s.Relay != nil {
				api, app = s.Relay.Handler(), webapp.Handler(s.Log)
			}
			return []httpapi.Route{
				// Agent tokens and person-device credentials, both as bearers,
				// checked by the relay. On AWS the doorbell is the WebSocket
				// API (functions/doorbell).
				{Path: "/pacerelle/{proxy+}", Auth: httpapi.AuthBearer, Function: awsenv.FuncMCP, Handler: api},
				// The person's web app: static pages and scripts; the browser
				// authenticates to the relay API itself.
				{Path: "/pacerelle/app/{proxy+}", Methods: []string{http.MethodGet}, Auth: httpapi.AuthNone, Function: awsenv.FuncMCP, Handler: app},
			}
		}}
}

// searchWriter is the indexing of an aggregate's writes: through the
// outbox, into p.Index (a Writer without an index enqueues nothing).
func searchWriter(p *Ports, s *Services) *search.Writer {
	return &search.Writer{Index: p.Index, Logger: p.Logger, Outbox: s.Outbox}
}

// issuesGitHub and errorsOptions apply the ports tests set: the issues'
// and the error monitor's tests drive an in-memory GitHub and tune the
// monitor through Build (shared/app/apptest), not a wiring of their own.

func (p *Ports) issuesGitHub() issue.GitHub {
	if p.IssuesGitHub != nil {
		return p.IssuesGitHub
	}
	return p.GitHub
}

func (p *Ports) errorsOptions(o errormon.Options) errormon.Options {
	if p.ErrorsGitHub != nil {
		o.GitHub = p.ErrorsGitHub
	}
	if p.TuneErrors != nil {
		p.TuneErrors(&o)
	}
	return o
}
