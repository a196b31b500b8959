package errormon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/ghmd"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Labels of the issues the monitor files.
var Labels = []string{"bug", "auto-detected"}

const (
	maxTitleChars = ghmd.MaxTitleChars
	// maxBodyChars keeps a body under GitHub's 65,536 characters with room
	// for the marker.
	maxBodyChars    = 60_000
	maxStackChars   = 16_000
	maxMessageChars = 4_000
	maxRawChars     = 6_000
	// maxNameChars bounds a function, type or deployment name shown
	// within a line.
	maxNameChars = 200
	// clockSkew is how far GitHub's clock may be from ours when a read of
	// comments is bounded by a time of ours.
	clockSkew = 10 * time.Minute
)

// Registrar is the outbox as Wire needs it.
type Registrar interface {
	Handle(topic string, h outbox.Handler) error
}

// Wire registers the monitor's outbox handlers, before the outbox runs.
func (s *Service) Wire(ob Registrar) error {
	return errors.Join(
		ob.Handle(TopicFile, s.FileJob),
		ob.Handle(TopicSummary, s.SummaryJob),
		ob.Handle(TopicRegression, s.RegressionJob),
		ob.Handle(TopicEscalation, s.EscalationJob),
	)
}

func (s *Service) jobGroup(ctx context.Context, op string, j outbox.Job) (groupJob, Group, Deployment, error) {
	var gj groupJob
	if err := json.Unmarshal(j.Payload, &gj); err != nil || gj.GroupID == "" {
		return gj, Group{}, Deployment{}, outbox.Permanent(vp.Errorf(op, vp.KindInvalid, "payload", "not an error job: %s", j.Payload))
	}
	g, _, err := Groups.Get(ctx, s.o.Store, op, "errorId", gj.GroupID, groupKey(j.Tenant, gj.GroupID))
	if err != nil {
		return gj, g, Deployment{}, err
	}
	d, _, err := Deployments.Get(ctx, s.o.Store, op, "name", g.Deployment, deploymentKey(j.Tenant, g.Deployment))
	return gj, g, d, err
}

// githubErr makes failures that retrying cannot fix permanent (a dead
// letter to look at: a bad token, a repository that does not exist).
func githubErr(err error) error {
	switch vp.KindOf(err) {
	case vp.KindUnauthorized, vp.KindForbidden, vp.KindNotFound, vp.KindInvalid, vp.KindTooLarge:
		return outbox.Permanent(err)
	}
	return err
}

// FileJob files a new group's "[Auto]" issue and starts its protocol
// (TrackAuto). CreateIssueOnce finds an issue carrying the group's marker
// before filing, so a rerun after a crash between GitHub's answer and
// the group's update files nothing twice.
func (s *Service) FileJob(ctx context.Context, j outbox.Job) error {
	const op = "errormon.file"
	_, g, d, err := s.jobGroup(ctx, op, j)
	if err != nil || nothingToFile(g) {
		return ignoreGone(err)
	}
	title := Title(g)
	body := Body(g, d)
	marker := "<!-- vantagepeers:error:" + g.ID + " -->"
	n, url, author, err := s.o.GitHub.CreateIssueOnce(ctx, j.Tenant, d.GitHubRepo, title, body+"\n\n"+marker, marker, Labels,
		time.UnixMilli(g.CreationTime).Add(-time.Hour))
	if err != nil {
		return githubErr(err)
	}
	if err := s.linkIssue(ctx, op, j.Tenant, g.ID, d.GitHubRepo, n, url); err != nil {
		return err
	}
	return s.trackAuto(ctx, j.Tenant, d, n, title, body, url, author)
}

func (s *Service) linkIssue(ctx context.Context, op, tenant, id, repo string, n int, url string) error {
	return table.Retry(ctx, op, "errorId", id, func() error {
		g, it, err := Groups.Get(ctx, s.o.Store, op, "errorId", id, groupKey(tenant, id))
		if err != nil {
			return err
		}
		if g.IssueNumber == n && g.Status == StatusOngoing {
			return nil
		}
		g.IssueRepo, g.IssueNumber, g.IssueURL, g.UpdatedAt = repo, n, url, s.nowMS()
		if g.Status == StatusNew || g.Status == StatusRegressed {
			g.Status = StatusOngoing
		}
		next, err := Groups.Item(op, tenant, g)
		if err != nil {
			return err
		}
		return s.o.Store.Write(ctx, store.Put(next, store.IfVersion(it.Version)))
	})
}

// SummaryJob adds a group over the deployment's hourly cap to the hour's
// summary: one issue per deployment and hour (filed by the first of them,
// by marker) with one comment listing them all, edited in place as more
// come (summary.go).
func (s *Service) SummaryJob(ctx context.Context, j outbox.Job) error {
	const op = "errormon.summary"
	_, g, d, err := s.jobGroup(ctx, op, j)
	if err != nil || nothingToFile(g) {
		return ignoreGone(err)
	}
	n, url, err := s.summarise(ctx, op, j, g, d)
	if err != nil {
		return err
	}
	return s.linkIssue(ctx, op, j.Tenant, g.ID, d.GitHubRepo, n, url)
}

// RegressionJob reopens a regressed group's issue and says so in one
// comment per regression.
func (s *Service) RegressionJob(ctx context.Context, j outbox.Job) error {
	const op = "errormon.regression"
	gj, g, d, err := s.jobGroup(ctx, op, j)
	if err != nil {
		return ignoreGone(err)
	}
	if g.IssueNumber < 1 {
		return nil
	}
	if err := s.o.GitHub.Reopen(ctx, j.Tenant, g.IssueRepo, g.IssueNumber); err != nil {
		return githubErr(err)
	}
	marker := fmt.Sprintf("<!-- vantagepeers:regression:%s:%d -->", g.ID, gj.Regression)
	body := fmt.Sprintf("Regression: this error fired again after the issue was fixed or closed (%d occurrences in all, last seen %s UTC in %s).\n\n%s",
		g.Count, time.UnixMilli(g.LastSeen).UTC().Format("2006-01-02 15:04"), ghmd.Inline(d.Name, maxNameChars), marker)
	if err := s.o.GitHub.CommentOnce(ctx, j.Tenant, g.IssueRepo, g.IssueNumber, marker, body, j.EnqueuedAt.Add(-clockSkew)); err != nil {
		return githubErr(err)
	}
	if err := s.o.Issues.Regressed(ctx, j.Tenant, g.IssueRepo, g.IssueNumber); err != nil {
		return err
	}
	return s.linkIssue(ctx, op, j.Tenant, g.ID, g.IssueRepo, g.IssueNumber, g.IssueURL)
}

func ignoreGone(err error) error {
	if vp.IsKind(err, vp.KindNotFound) {
		return nil // the group or its deployment is gone: nothing to file
	}
	return err
}

// Title is "[Auto] <type>: <message>", bounded, one line, with no
// mention (ghmd.Title).
func Title(g Group) string { return ghmd.Title("[Auto] "+titleText(g), maxTitleChars) }

// titleText is "<type>: <message>" as logged.
func titleText(g Group) string {
	t := g.Type
	if t == "" {
		t = "Error"
	}
	msg := g.Sample
	if strings.TrimSpace(msg) == "" {
		msg = g.Message
	}
	return t + ": " + msg
}

// Body describes a group for its issue: where, how often, a sample and
// its stack trace, under GitHub's 65,536 characters. Every value that
// came from the logs or from the tenant goes through ghmd: the table's
// cells are code spans with their pipes escaped, the message, stack and
// raw record fenced code blocks.
func Body(g Group, d Deployment) string {
	stack, raw := maxStackChars, maxRawChars
	for {
		b := body(g, d, stack, raw)
		if utf8.RuneCountInString(b) <= maxBodyChars || stack == 0 {
			return b
		}
		// Only fences around long runs of backticks and tildes can
		// overflow the bound: give up the raw record, then stack.
		stack, raw = stack/2, 0
	}
}

func body(g Group, d Deployment, stackChars, rawChars int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The error monitor found a new error in deployment %s (%s).\n\n",
		ghmd.Inline(d.Name, maxNameChars), ghmd.Inline(d.Source, maxNameChars))
	fmt.Fprintf(&b, "| | |\n|---|---|\n| function | %s |\n| type | %s |\n| occurrences | %d |\n| first seen | %s |\n| last seen | %s |\n| fingerprint | %s (%s) |\n\n",
		ghmd.Cell(g.Function, maxNameChars), ghmd.Cell(g.Type, maxNameChars), g.Count,
		time.UnixMilli(g.FirstSeen).UTC().Format(time.RFC3339), time.UnixMilli(g.LastSeen).UTC().Format(time.RFC3339),
		ghmd.Cell(g.Fingerprint, maxNameChars), ghmd.Cell(g.Algorithm, maxNameChars))
	fmt.Fprintf(&b, "**Message**\n\n%s\n", ghmd.Block(g.Sample, maxMessageChars))
	if g.Stack != "" && stackChars > 0 {
		fmt.Fprintf(&b, "**Stack trace**\n\n%s\n", ghmd.Block(g.Stack, stackChars))
	}
	if g.Raw != "" && rawChars > 0 {
		fmt.Fprintf(&b, "<details><summary>Raw log record</summary>\n\n%s\n</details>\n", ghmd.Block(g.Raw, rawChars))
	}
	return b.String()
}
