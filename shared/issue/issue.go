// Package issue is the GitHub side of the product: repository mappings
// (which orchestrator and project own a repository), the issues of mapped
// repositories kept in step with GitHub's webhooks, the Issue Resolution
// Protocol (an opened issue becomes a mission of the template
// issue-resolution-v2 and GitHub hears back at T0, T6, T8 and T11),
// auto-linking of completed tasks to the issues their titles name, the
// PR monitor of external issues, the daily resolution statistics, and
// live issue context (live.go: what trusted people add to an issue after
// its mission started reaches the mission's pilot as a message).
//
// Everything GitHub must see goes through the outbox, committed in the
// transaction of its cause and posted later by CommentJob, which looks
// for the comment's hidden marker before posting: a redelivered webhook,
// a retried job or a crash between GitHub's answer and our commit posts
// nothing twice.
package issue

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Issue statuses, in lifecycle order.
const (
	StatusOpen       = "open"
	StatusInProgress = "in_progress"
	StatusFixed      = "fixed"
	StatusVerified   = "verified"
	StatusClosed     = "closed"
)

// Statuses is the issue lifecycle: open → in_progress → fixed → verified → closed.
var Statuses = []string{StatusOpen, StatusInProgress, StatusFixed, StatusVerified, StatusClosed}

// PR statuses of an external issue.
var PRStatuses = []string{"draft", "open", "merged", "closed"}

// Template is the mission template an opened issue starts.
const Template = "issue-resolution-v2"

// Limits.
const (
	maxLinks      = 50   // linkedTaskIds, commitShas
	maxIssueBody  = 8192 // bytes of the issue text kept (and given to agents)
	maxIssueTitle = 300
	maxLabels     = 20
)

// Mapping binds a GitHub repository to the orchestrator and project that
// handle its issues.
type Mapping struct {
	ID              string `json:"_id"`
	CreationTime    int64  `json:"_creationTime"`
	Repo            string `json:"repo"`
	Orchestrator    string `json:"orchestrator"`
	Project         string `json:"project"`
	Active          bool   `json:"active"`
	LastDeployedSHA string `json:"lastDeployedSHA,omitempty"`
	LastDeployedAt  *int64 `json:"lastDeployedAt,omitempty"`
	CreatedBy       string `json:"createdBy"`
	UpdatedAt       int64  `json:"updatedAt"`
}

// Issue is a GitHub issue of a mapped repository (or an external one
// tracked for its pull request).
type Issue struct {
	ID           string `json:"_id"`
	CreationTime int64  `json:"_creationTime"`
	Repo         string `json:"repo"`
	IssueNumber  int    `json:"issueNumber"`
	Project      string `json:"project"`
	Title        string `json:"title"`
	// Body is the issue text as agents see it: HTML comments and invisible
	// characters removed, cut to 8 KiB.
	Body              string   `json:"body,omitempty"`
	URL               string   `json:"url,omitempty"`
	Author            string   `json:"author,omitempty"`
	AuthorAssociation string   `json:"authorAssociation,omitempty"`
	Labels            []string `json:"labels,omitempty"`
	Status            string   `json:"status"`
	// OpenedAt is GitHub's created_at (Unix ms); FirstResponseAt the first
	// comment by someone other than the author and bots.
	OpenedAt        int64  `json:"openedAt"`
	FirstResponseAt *int64 `json:"firstResponseAt,omitempty"`
	FixedAt         *int64 `json:"fixedAt,omitempty"`
	ClosedAt        *int64 `json:"closedAt,omitempty"`
	// Automation says what the opening did: "irp" (a mission started),
	// "untrusted" (author not trusted), "inactive" (mapping paused),
	// "transferred" (the mission followed the issue from another repo).
	Automation    string   `json:"automation,omitempty"`
	MissionID     string   `json:"missionId,omitempty"`
	Orchestrator  string   `json:"orchestrator,omitempty"`
	LinkedTaskIDs []string `json:"linkedTaskIds,omitempty"`
	CommitSHAs    []string `json:"commitShas,omitempty"`
	FixedBy       string   `json:"fixedBy,omitempty"`
	VerifiedBy    string   `json:"verifiedBy,omitempty"`
	VerifiedAt    *int64   `json:"verifiedAt,omitempty"`
	// External issues (a third-party repository): the pull request that
	// fixes it, watched by the PR monitor, and who hears of its outcome.
	External bool   `json:"external,omitempty"`
	PRURL    string `json:"prUrl,omitempty"`
	PRStatus string `json:"prStatus,omitempty"`
	PRETag   string `json:"prEtag,omitempty"`
	Watcher  string `json:"watcher,omitempty"`
	// RelayedComments are the ids of the last comments told to the
	// mission's pilot (live issue context), so that a second hook's
	// delivery of one is not told twice.
	RelayedComments []int64 `json:"relayedComments,omitempty"`
	// TransferredTo is "owner/repo#N" once GitHub moved the issue.
	TransferredTo string `json:"transferredTo,omitempty"`
	UpdatedAt     int64  `json:"updatedAt"`
}

// Ref is "owner/repo#N".
func (i Issue) Ref() string { return i.Repo + "#" + strconv.Itoa(i.IssueNumber) }

func (i Issue) watched() bool {
	return i.PRURL != "" && (i.PRStatus == "" || i.PRStatus == "draft" || i.PRStatus == "open")
}

// Mappings declares the repository mappings.
var Mappings = table.Declare(table.Schema[Mapping]{
	Entity:  "repo mapping",
	Primary: table.Key{PK: "GHMAP#{repo}", SK: "GHMAP", Pattern: "mapping by repo slug", Note: "slug lower-cased; add is one IfNotExists put"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "GHMAPS", SK: "{created 13 digits}#{repo}", Pattern: "mappings, newest first"},
		{Index: store.GSI2, PK: "GHMAPPROJ#{project}", SK: "{repo}", Pattern: "mappings of a project (auto-linking)"},
	},
	Fields: func(m Mapping) table.Values {
		return table.Values{"repo": m.Repo, "project": m.Project, "created 13 digits": table.Millis(m.CreationTime)}
	},
})

// Issues declares the issues.
var Issues = table.Declare(table.Schema[Issue]{
	Entity: "github issue",
	Primary: table.Key{PK: "GHISSUE#{repo}#{number}", SK: "GHISSUE", Pattern: "issue by (repo, number)",
		Note: "opened is one IfNotExists put: two hooks or a redelivery make one issue"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "GHIPROJ#{project}", SK: "{opened 13 digits}#{repo}#{number}", Pattern: "issues of a project, newest first"},
		{Index: store.GSI2, PK: "GHISTAT#{status}", SK: "{opened 13 digits}#{repo}#{number}", Pattern: "issues by status", Note: "one partition per status, merged"},
		{Index: store.GSI3, PK: "GHIMSN#{missionId}", SK: "GHISSUE", Pattern: "issue of an IRP mission", Note: "sparse"},
		{Index: store.GSI4, PK: "GHIPRWATCH#{watch}", SK: "{repo}#{number}", Pattern: "external issues whose PR is open (PR monitor)", Note: "sparse"},
	},
	Fields: func(i Issue) table.Values {
		watch := ""
		if i.watched() {
			watch = "open"
		}
		return table.Values{"repo": i.Repo, "number": strconv.Itoa(i.IssueNumber), "project": i.Project, "status": i.Status,
			"opened 13 digits": table.Millis(i.OpenedAt), "missionId": i.MissionID, "watch": watch}
	},
})

// Snapshot is one day's resolution statistics of a project.
type Snapshot struct {
	Project string `json:"project"`
	Day     string `json:"day"` // YYYY-MM-DD (UTC)
	// Minutes; nil when no issue qualifies.
	MedianTimeToFirstResponse *float64 `json:"medianTimeToFirstResponse"`
	MedianTimeToFix           *float64 `json:"medianTimeToFix"`
	AvgTimeToFix              *float64 `json:"avgTimeToFix"`
	FastestResolution         *float64 `json:"fastestResolution"`
	SlowestResolution         *float64 `json:"slowestResolution"`
	TotalIssues               int      `json:"totalIssues"`
	ResolvedIssues            int      `json:"resolvedIssues"`
	// NeverAnswered counts issues with no first response yet.
	NeverAnswered   int    `json:"neverAnswered"`
	BeforeVantageOS Period `json:"beforeVantageOS"`
	AfterVantageOS  Period `json:"afterVantageOS"`
	ComputedAt      int64  `json:"computedAt"`
}

// Period is the part of a snapshot before or after the pivot date.
type Period struct {
	TotalIssues     int      `json:"totalIssues"`
	ResolvedIssues  int      `json:"resolvedIssues"`
	MedianTimeToFix *float64 `json:"medianTimeToFix"`
}

// Snapshots declares the daily statistics.
var Snapshots = table.Declare(table.Schema[Snapshot]{
	Entity:  "issue stats snapshot",
	Primary: table.Key{PK: "GHSTATS#{project}", SK: "{day}", Pattern: "a project's daily snapshots", Note: "one per day, rewritten by the daily job"},
	Fields:  func(s Snapshot) table.Values { return table.Values{"project": s.Project, "day": s.Day} },
})

// Tables describes the keys for shared/store/KEYS.md.
func Tables() []table.Doc { return []table.Doc{Mappings.Doc(), Issues.Doc(), Snapshots.Doc()} }

func mappingKey(tenant, repo string) store.Key {
	return Mappings.KeyOf(tenant, table.Values{"repo": repo})
}

func issueKey(tenant, repo string, number int) store.Key {
	return Issues.KeyOf(tenant, table.Values{"repo": repo, "number": strconv.Itoa(number)})
}

// Missions creates IRP missions in the caller's transaction;
// *mission.Service implements it.
type Missions interface {
	PlanFromTemplate(ctx context.Context, op, tenant string, in mission.FromTemplate) (mission.Planned, error)
	Committed(ctx context.Context, op, tenant string, p mission.Planned)
}

// Notices sends system messages in the caller's transaction;
// *message.Service implements it.
type Notices interface {
	ComposeNotice(ctx context.Context, op, tenant, from, to, content string) (message.Notice, error)
	Sent(ctx context.Context, op, tenant string, n message.Notice)
}

// Jobs is the outbox; *outbox.Outbox implements it.
type Jobs interface {
	Enqueue(ctx context.Context, tenant, topic, dedupKey string, payload []byte) (outbox.Pending, error)
	Kick(p ...outbox.Pending)
	Flush(ctx context.Context, p ...outbox.Pending)
}

// GitHub is what the package asks of GitHub, on behalf of a tenant
// (whose credentials the implementation holds).
type GitHub interface {
	// CommentOnce posts body, which ends with marker, on repo#number
	// unless a comment of the bot's own ending with marker is there
	// already, looking only at the comments updated since since.
	CommentOnce(ctx context.Context, tenant, repo string, number int, marker, body string, since time.Time) error
	// PullRequest reads a pull request, conditionally on etag: notModified
	// when it has not changed.
	PullRequest(ctx context.Context, tenant, repo string, number int, etag string) (pr PullRequest, notModified bool, err error)
}

// PullRequest is what the PR monitor reads of a pull request.
type PullRequest struct {
	State  string // open or closed
	Draft  bool
	Merged bool
	ETag   string
}

// DefaultTrusted are the author associations whose issues start a mission.
var DefaultTrusted = []string{"OWNER", "MEMBER", "COLLABORATOR"}

// DefaultPivot is the date statistics are split at (§11.4).
var DefaultPivot = time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)

// Options configures a Service.
type Options struct {
	Store    store.Store
	Cursors  *listing.Signer
	Now      func() time.Time
	Logger   *slog.Logger
	Missions Missions
	Notices  Notices
	Jobs     Jobs
	GitHub   GitHub
	// Trusted author associations (default DefaultTrusted).
	Trusted []string
	// Pivot splits the statistics (default DefaultPivot).
	Pivot time.Time
	// FlushStarts runs an opened issue's start job in the webhook's own
	// call, after the commit: for a Lambda, which has no outbox worker
	// to hand it to (the server's worker runs it at once instead). Its
	// comment then waits for the scheduled outbox run, so that GitHub's
	// answer never waits on GitHub.
	FlushStarts bool
}

// Service is the GitHub issues capability.
type Service struct {
	st       store.Store
	cursors  *listing.Signer
	now      func() time.Time
	ids      *vp.IDs
	log      *slog.Logger
	missions Missions
	notices  Notices
	jobs     Jobs
	gh       GitHub
	trusted  []string
	pivot    time.Time
	flush    bool
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Trusted == nil {
		o.Trusted = DefaultTrusted
	}
	if o.Pivot.IsZero() {
		o.Pivot = DefaultPivot
	}
	trusted := make([]string, len(o.Trusted))
	for i, t := range o.Trusted {
		trusted[i] = strings.ToUpper(strings.TrimSpace(t))
	}
	return &Service{st: o.Store, cursors: o.Cursors, now: o.Now, ids: vp.NewIDs(o.Now), log: o.Logger,
		missions: o.Missions, notices: o.Notices, jobs: o.Jobs, gh: o.GitHub, trusted: trusted, pivot: o.Pivot, flush: o.FlushStarts}
}

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// repoSlug is GitHub's owner/name: an owner of 1–39 letters, digits and
// inner hyphens, a name of letters, digits, ".", "-" and "_".
var repoSlug = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?/[A-Za-z0-9._-]{1,100}$`)

// checkRepo validates a slug and returns it lower-cased: GitHub's slugs
// are case-insensitive, so "Acme/API" and "acme/api" are one repository.
func checkRepo(op, field, repo string) (string, error) {
	repo = strings.TrimSpace(repo)
	if repo == "" {
		return "", vp.E(op, vp.KindInvalid, field, "is required: a GitHub repository as owner/name, e.g. acme/api")
	}
	if !repoSlug.MatchString(repo) || strings.HasSuffix(repo, "/.") || strings.HasSuffix(repo, "/..") {
		return "", vp.Errorf(op, vp.KindInvalid, field, "must be a GitHub repository as owner/name (owner ≤ 39 letters, digits or hyphens; name ≤ 100 letters, digits, '.', '-' or '_'), got %q", repo)
	}
	return strings.ToLower(repo), nil
}

func checkNumber(op string, n int) error {
	if n < 1 || n > 1_000_000_000 {
		return vp.Errorf(op, vp.KindInvalid, "issueNumber", "must be a GitHub issue number (1 to 1000000000), got %d", n)
	}
	return nil
}

// Registrar is the outbox as Wire needs it; *outbox.Outbox implements it.
type Registrar interface {
	Handle(topic string, h outbox.Handler) error
	Subscribe(topic, subscriber string, h outbox.Handler) error
}

// TaskWatcher is the task service as Wire needs it.
type TaskWatcher interface {
	WatchFinished(watch func(vp.Task) bool)
}

// Wire registers what the capability reacts to, before the outbox runs:
// its comment jobs, completed tasks (IRP steps and auto-linking), and
// the completions of tasks outside missions whose title names an issue.
func (s *Service) Wire(ob Registrar, tasks TaskWatcher) error {
	tasks.WatchFinished(NamesIssue)
	return errors.Join(
		ob.Handle(TopicStart, s.StartJob),
		ob.Handle(TopicComment, s.CommentJob),
		ob.Subscribe(task.TopicFinished, "github.issues", s.OnTaskFinished),
	)
}
