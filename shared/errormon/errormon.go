// Package errormon is deployment error monitoring: every five minutes
// (jobs catalogue "error-monitor") the error logs of each monitored
// deployment are read from where the last scan stopped, grouped by a
// stable fingerprint and counted; each new group files one "[Auto]"
// GitHub issue, which the Issue Resolution Protocol then picks up, and a
// group whose issue was fixed or closed that fires again reopens it.
//
// Exactly once: a scan holds a lease on its deployment, and each batch
// commits its groups' counts with the deployment's new cursor in one
// transaction, so two scans never count an event twice; a new group's
// issue is an outbox job committed with the group, filed by marker
// (github CreateIssueOnce), so a crash between GitHub's answer and our
// commit files nothing twice.
package errormon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
)

// Sources.
const (
	SourceConvex     = "convex"
	SourceCloudWatch = "cloudwatch"
)

// Group statuses.
const (
	StatusNew       = "new"       // its issue is being filed
	StatusOngoing   = "ongoing"   // its issue is open
	StatusRegressed = "regressed" // its issue was fixed or closed, and it fired again
	StatusResolved  = "resolved"  // its issue is fixed or closed (read when it fires again)
)

// Deployment is a monitored deployment and the state of its scans.
type Deployment struct {
	ID              string   `json:"_id"`
	CreationTime    int64    `json:"_creationTime"`
	Name            string   `json:"name"`
	Source          string   `json:"source"`
	DeploymentURL   string   `json:"deploymentUrl,omitempty"`
	DeployKeyEnvVar string   `json:"deployKeyEnvVar,omitempty"`
	LogGroups       []string `json:"logGroups,omitempty"`
	FilterPattern   string   `json:"filterPattern,omitempty"`
	GitHubRepo      string   `json:"githubRepo"`
	Orchestrator    string   `json:"orchestrator"`
	Active          bool     `json:"active"`
	CreatedBy       string   `json:"createdBy"`
	UpdatedAt       int64    `json:"updatedAt"`
	// Scans: where the next one starts, when it may (after failures:
	// exponential backoff), and what the last one met.
	Cursor      string `json:"cursor,omitempty"`
	LeaseUntil  int64  `json:"leaseUntil,omitempty"`
	LastScanAt  int64  `json:"lastScanAt,omitempty"`
	LastError   string `json:"lastError,omitempty"`
	LastErrorAt int64  `json:"lastErrorAt,omitempty"`
	Failures    int    `json:"failures,omitempty"`
	NextScanAt  int64  `json:"nextScanAt,omitempty"`
	// NeedsKey: the last scan found no deploy key to read the source with,
	// and sent nothing (list_errors: StatusNeedsKey).
	NeedsKey bool `json:"needsKey,omitempty"`
	// KeyElsewhere: the last scan found the deploy key bound to another
	// URL than the deployment's, and sent nothing (StatusKeyElsewhere).
	KeyElsewhere  bool  `json:"keyElsewhere,omitempty"`
	EventsScanned int64 `json:"eventsScanned,omitempty"`
	// LagSeconds: the last scan ran out of budget this far behind its own
	// start (0: it caught up); the next one reads on from its cursor.
	LagSeconds int64 `json:"lagSeconds,omitempty"`
	// The hourly cap of new issues: the hour's start and how many it filed.
	IssueHour  int64 `json:"issueHour,omitempty"`
	IssuesHour int   `json:"issuesHour,omitempty"`
	// Triage (triage.go): file a group once it occurred MinOccurrences
	// times within WindowMinutes (0: 1, at once); DeployedAt, when the
	// deployment told it, is the last deploy (a fix counts from then);
	// HeldBack is what the hourly cap kept from being filed, per hour.
	MinOccurrences int        `json:"minOccurrences,omitempty"`
	WindowMinutes  int        `json:"windowMinutes,omitempty"`
	DeployedAt     int64      `json:"deployedAt,omitempty"`
	HeldBack       []HeldBack `json:"heldBack,omitempty"`
}

// Group is one error: every occurrence with the same fingerprint.
type Group struct {
	ID           string `json:"_id"`
	CreationTime int64  `json:"_creationTime"`
	Deployment   string `json:"deployment"`
	Fingerprint  string `json:"fingerprint"`
	// Algorithm is the fingerprint's version: groups of different versions
	// never merge.
	Algorithm string `json:"algorithm"`
	// MergedInto: a template that generalised took this group in; that
	// group counts its occurrences and carries the issue.
	MergedInto string `json:"mergedInto,omitempty"`
	// IssueFrom: the issue was this group's (taken in, or the same error
	// under fp1 before an upgrade), and none is filed for this one.
	IssueFrom string `json:"issueFrom,omitempty"`
	Function  string `json:"function,omitempty"`
	Type      string `json:"type,omitempty"`
	// Message is the parameterised message the group is keyed by; Sample
	// the first occurrence's message as logged, with its stack and raw
	// record.
	Message   string `json:"message"`
	Frame     string `json:"frame,omitempty"`
	Sample    string `json:"sample"`
	Stack     string `json:"stack,omitempty"`
	Raw       string `json:"raw,omitempty"`
	Count     int64  `json:"count"`
	FirstSeen int64  `json:"firstSeen"`
	LastSeen  int64  `json:"lastSeen"`
	Status    string `json:"status"`
	// The GitHub issue filed for it; Summarised: over the hourly cap, it
	// was reported in the deployment's summary issue instead.
	IssueRepo   string `json:"issueRepo,omitempty"`
	IssueNumber int    `json:"issueNumber,omitempty"`
	IssueURL    string `json:"issueUrl,omitempty"`
	Summarised  bool   `json:"summarised,omitempty"`
	Regressions int    `json:"regressions,omitempty"`
	// Triage (triage.go): a pending group's latest occurrence times (at
	// most its deployment's minOccurrences); when its issue was resolved
	// (occurrences before it never reopen the issue); its occurrences per
	// hour over the trailing day; its last escalation.
	// FiledAt: when a group held pending reached its threshold (its
	// summary hour, when over the cap, is that hour, not its first's).
	Recent     []int64     `json:"recent,omitempty"`
	FiledAt    int64       `json:"filedAt,omitempty"`
	ResolvedAt int64       `json:"resolvedAt,omitempty"`
	Hourly     []HourCount `json:"hourly,omitempty"`
	Escalation *Escalation `json:"escalation,omitempty"`
	// PageFrom and PageCounted: the page (its start cursor's digest) the group was
	// last counted from and how many of its events there it counted, so
	// that a page read again after a scan died mid-page adds only the rest
	// (groupOps).
	PageFrom    string `json:"pageFrom,omitempty"`
	PageCounted int64  `json:"pageCounted,omitempty"`
	// Escalated: list_errors' flag, the group escalated within the
	// trailing day (computed when listed, not stored).
	Escalated bool  `json:"escalated,omitempty"`
	UpdatedAt int64 `json:"updatedAt"`
}

// Deployments declares the monitored deployments.
var Deployments = table.Declare(table.Schema[Deployment]{
	Entity:  "monitored deployment",
	Primary: table.Key{PK: "DEPLOY#{name}", SK: "DEPLOY", Pattern: "deployment by name", Note: "scan lease and cursor in the item"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "DEPLOYS", SK: "{name}", Pattern: "the tenant's deployments (the scan job)"},
	},
	Fields: func(d Deployment) table.Values { return table.Values{"name": d.Name} },
})

// Groups declares the error groups.
var Groups = table.Declare(table.Schema[Group]{
	Entity: "error group",
	Primary: table.Key{PK: "ERRGRP#{id}", SK: "ERRGRP", Pattern: "error by id",
		Note: "id = hash(deployment, fingerprint or tpl1 key): a new group is one IfNotExists put"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "ERRDEP#{deployment}", SK: "{lastSeen 13 digits}#{id}", Pattern: "a deployment's errors, last seen first", Note: "moves on every count"},
		{Index: store.GSI2, PK: "ERRS", SK: "{lastSeen 13 digits}#{id}", Pattern: "every error, last seen first"},
		{Index: store.GSI3, PK: "ERRSUM#{summaryHour}", SK: "{id}", Pattern: "errors summarised in an hour's summary issue", Note: "sparse"},
	},
	Fields: func(g Group) table.Values {
		hour := ""
		if g.Summarised {
			hour = g.Deployment + "#" + table.Millis(g.summaryHour())
		}
		return table.Values{"id": g.ID, "deployment": g.Deployment, "lastSeen 13 digits": table.Millis(g.LastSeen), "summaryHour": hour}
	},
})

// Tables describes the keys for shared/store/KEYS.md.
func Tables() []table.Doc {
	return []table.Doc{Deployments.Doc(), Groups.Doc(), summaries.Doc(), TemplateBuckets.Doc(), groupMerges.Doc()}
}

// GroupID is the id of a deployment's group of a fingerprint.
func GroupID(deployment, fingerprint string) string {
	h := sha256.Sum256([]byte(deployment + "\x00" + fingerprint))
	return "err_" + hex.EncodeToString(h[:12])
}

func deploymentKey(tenant, name string) store.Key {
	return Deployments.KeyOf(tenant, table.Values{"name": name})
}

func groupKey(tenant, id string) store.Key { return Groups.KeyOf(tenant, table.Values{"id": id}) }

// GitHub is what the monitor asks of GitHub for a tenant.
type GitHub interface {
	// CreateIssueOnce files an issue unless the bot's own account filed
	// one ending with marker since since; author is the login that opened
	// it (the bot's).
	CreateIssueOnce(ctx context.Context, tenant, repo, title, body, marker string, labels []string, since time.Time) (number int, url, author string, err error)
	CommentOnce(ctx context.Context, tenant, repo string, number int, marker, body string, since time.Time) error
	// SetComment makes the bot's comment ending with marker say body:
	// comment id when known (0: find it among those updated since since,
	// or post it). It returns the comment's id.
	SetComment(ctx context.Context, tenant, repo string, number int, id int64, marker, body string, since time.Time) (int64, error)
	Reopen(ctx context.Context, tenant, repo string, number int) error
}

// Issues is the GitHub issues capability; *issue.Service implements it.
type Issues interface {
	TrackAuto(ctx context.Context, tenant string, a issue.AutoIssue) error
	// Resolution is an issue's status ("" when it is not tracked) and
	// when it was fixed or closed (Unix ms, 0 when not known).
	Resolution(ctx context.Context, tenant, repo string, number int) (string, int64, error)
	// Regressed moves a fixed or closed issue back into work.
	Regressed(ctx context.Context, tenant, repo string, number int) error
}

// trackAuto hands an issue the monitor filed for d to the issues
// capability, which records it and starts its protocol.
func (s *Service) trackAuto(ctx context.Context, tenant string, d Deployment, n int, title, body, url, author string) error {
	return s.o.Issues.TrackAuto(ctx, tenant, issue.AutoIssue{Repo: d.GitHubRepo, Number: n, Title: title, Body: body, URL: url,
		Orchestrator: d.Orchestrator, Project: d.Name, Author: author})
}

// Keys gives a deployment's source key (a Convex deploy key) and the URL
// it is bound to: the key its tenant stored under the name
// deployKeyEnvVar gives (FileKeys embedded, a Secrets Manager secret of
// the tenant on AWS). An empty Key means it is not set. The monitor never
// asks for a name that is not a deploy key's (ValidDeployKeyName), and
// implementations check it again.
type Keys interface {
	Key(ctx context.Context, tenant string, d Deployment) (DeployKey, error)
	// HowToSet tells an operator how to set tenant's key name, bound to
	// url (a deployment's URL).
	HowToSet(tenant, name, url string) string
}

// Jobs is the outbox; *outbox.Outbox implements it.
type Jobs interface {
	Enqueue(ctx context.Context, tenant, topic, dedupKey string, payload []byte) (outbox.Pending, error)
	Kick(p ...outbox.Pending)
}

// Options configures a Service.
type Options struct {
	Store   store.Store
	Cursors *listing.Signer
	Now     func() time.Time
	Logger  *slog.Logger
	// Sources by name (SourceConvex, SourceCloudWatch).
	Sources map[string]source.Source
	Keys    Keys
	// LogGroups are the CloudWatch Logs log groups each tenant may name;
	// nil: none.
	LogGroups LogGroupPolicy
	GitHub    GitHub
	Issues    Issues
	Jobs      Jobs
	// Backfill is how far back a deployment's first scan reads (default 1 h).
	Backfill time.Duration
	// IssuesPerHour caps the new issues a deployment files an hour
	// (default 10); the rest go into one summary issue.
	IssuesPerHour int
	// ScanBudget bounds one deployment's scan (default 30 s: a Lambda's
	// scheduler run has 55).
	ScanBudget time.Duration
	// ScanConcurrency is how many of a tenant's deployments are scanned at
	// once (default DefaultScanConcurrency).
	ScanConcurrency int
	// CaughtUpWithin and FollowUpWait bound reading a burst to the end
	// (defaults DefaultCaughtUpWithin, DefaultFollowUpWait; see burst.go).
	CaughtUpWithin time.Duration
	FollowUpWait   time.Duration
	// Egress checks a deploymentUrl when it is added (its source checks it
	// again when it dials); nil: the default policy, public https only.
	Egress *egress.Policy
}

// Service is the error monitor.
type Service struct {
	o   Options
	log *slog.Logger
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Backfill <= 0 {
		o.Backfill = time.Hour
	}
	if o.IssuesPerHour <= 0 {
		o.IssuesPerHour = 10
	}
	if o.ScanBudget <= 0 {
		o.ScanBudget = 30 * time.Second
	}
	if o.Egress == nil {
		o.Egress = egress.New(egress.Options{})
	}
	if o.ScanConcurrency <= 0 {
		o.ScanConcurrency = DefaultScanConcurrency
	}
	if o.CaughtUpWithin <= 0 {
		o.CaughtUpWithin = DefaultCaughtUpWithin
	}
	if o.FollowUpWait <= 0 {
		o.FollowUpWait = DefaultFollowUpWait
	}
	return &Service{o: o, log: o.Logger}
}

func (s *Service) nowMS() int64 { return s.o.Now().UnixMilli() }
