package issue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Outcomes of an event.
const (
	Accepted  = "accepted"  // something was written
	Duplicate = "duplicate" // already handled: a redelivery, or the same event through another hook
	Ignored   = "ignored"   // nothing to do (an unmapped repository, an event or action we do not follow)
)

// Event is a verified webhook delivery as this package reads it.
type Event struct {
	Tenant string
	Name   string // X-GitHub-Event
	Body   []byte
	// Seen is the delivery's dedup record, committed with the writes the
	// event causes (its first op); IsRedelivery recognises its failure.
	Seen         store.Op
	IsRedelivery func(error) bool
}

// The parts of GitHub's webhook payloads this package reads. They are
// decoded by hand rather than with go-github's ParseWebHook, which fails
// on some event types; unknown fields are ignored.
type payload struct {
	Action      string     `json:"action"`
	Issue       *ghIssue   `json:"issue"`
	Comment     *ghComment `json:"comment"`
	PullRequest *ghPull    `json:"pull_request"`
	Repository  *ghRepo    `json:"repository"`
	Changes     *ghChanges `json:"changes"`
	Sender      *ghUser    `json:"sender"`
}

type ghRepo struct {
	FullName string `json:"full_name"`
}

type ghUser struct {
	Login string `json:"login"`
	Type  string `json:"type"`
}

type ghIssue struct {
	Number            int        `json:"number"`
	Title             string     `json:"title"`
	Body              *string    `json:"body"`
	HTMLURL           string     `json:"html_url"`
	State             string     `json:"state"`
	User              ghUser     `json:"user"`
	AuthorAssociation string     `json:"author_association"`
	CreatedAt         time.Time  `json:"created_at"`
	ClosedAt          *time.Time `json:"closed_at"`
	Labels            []struct {
		Name string `json:"name"`
	} `json:"labels"`
	PullRequest *struct{} `json:"pull_request"`
}

type ghComment struct {
	ID                int64     `json:"id"`
	Body              string    `json:"body"`
	HTMLURL           string    `json:"html_url"`
	User              ghUser    `json:"user"`
	AuthorAssociation string    `json:"author_association"`
	CreatedAt         time.Time `json:"created_at"`
}

type ghPull struct {
	Number  int    `json:"number"`
	HTMLURL string `json:"html_url"`
	State   string `json:"state"`
	Draft   bool   `json:"draft"`
	Merged  bool   `json:"merged"`
}

type ghChanges struct {
	OldIssue      *ghIssue `json:"old_issue"`
	OldRepository *ghRepo  `json:"old_repository"`
	NewIssue      *ghIssue `json:"new_issue"`
	NewRepository *ghRepo  `json:"new_repository"`
	// Body is there, with the old text, when an edit changed the body.
	Body *struct {
		From string `json:"from"`
	} `json:"body"`
}

// HandleEvent applies a webhook event. Events and actions it does not
// follow are Ignored, never errors: GitHub adds both over time.
func (s *Service) HandleEvent(ctx context.Context, e Event) (string, error) {
	const op = "github.webhook"
	var p payload
	if err := json.Unmarshal(e.Body, &p); err != nil {
		return "", vp.Errorf(op, vp.KindInvalid, "body", "is not a GitHub webhook payload: %v", err)
	}
	if p.Repository == nil || p.Repository.FullName == "" {
		return Ignored, nil
	}
	repo, err := checkRepo(op, "repository.full_name", p.Repository.FullName)
	if err != nil {
		return Ignored, nil
	}
	switch e.Name {
	case "issues":
		if p.Issue == nil || p.Issue.Number < 1 {
			return Ignored, nil
		}
		return s.issueEvent(ctx, op, e, repo, p)
	case "issue_comment":
		if p.Action != "created" || p.Issue == nil || p.Comment == nil {
			return Ignored, nil
		}
		return s.commented(ctx, op, e, repo, p)
	case "pull_request":
		if p.PullRequest == nil {
			return Ignored, nil
		}
		return s.pullRequestEvent(ctx, op, e, p)
	}
	return Ignored, nil
}

func (s *Service) issueEvent(ctx context.Context, op string, e Event, repo string, p payload) (string, error) {
	m, _, err := s.mapping(ctx, op, e.Tenant, repo)
	if vp.IsKind(err, vp.KindNotFound) {
		return Ignored, nil
	}
	if err != nil {
		return "", err
	}
	n := p.Issue.Number
	switch p.Action {
	case "opened":
		if p.Changes != nil && p.Changes.OldIssue != nil && p.Changes.OldRepository != nil {
			return s.transfer(ctx, op, e, p.Changes.OldRepository.FullName, p.Changes.OldIssue.Number, m, p.Issue)
		}
		return s.opened(ctx, op, e, m, p.Issue)
	case "transferred":
		if p.Changes == nil || p.Changes.NewIssue == nil || p.Changes.NewRepository == nil {
			return Ignored, nil
		}
		to, err := checkRepo(op, "changes.new_repository", p.Changes.NewRepository.FullName)
		if err != nil {
			return Ignored, nil
		}
		nm, _, err := s.mapping(ctx, op, e.Tenant, to)
		if err != nil {
			nm = Mapping{Repo: to, Project: m.Project, Orchestrator: m.Orchestrator}
		}
		return s.transfer(ctx, op, e, repo, n, nm, p.Changes.NewIssue)
	case "edited", "labeled", "unlabeled":
		if p.Action == "edited" && p.Changes != nil && p.Changes.Body != nil {
			return s.bodyEdited(ctx, op, e, repo, p)
		}
		return s.apply(ctx, op, e, repo, n, func(i *Issue, _ int64) error {
			before := fmt.Sprint(i.Title, i.Body, i.Labels)
			i.Title, i.Body, i.Labels = text(p.Issue)
			if fmt.Sprint(i.Title, i.Body, i.Labels) == before {
				return errUnchanged
			}
			return nil
		})
	case "closed":
		return s.apply(ctx, op, e, repo, n, func(i *Issue, now int64) error {
			if err := setStatus(op, i, StatusClosed, now); err != nil {
				return err
			}
			if p.Issue.ClosedAt != nil {
				ms := p.Issue.ClosedAt.UnixMilli()
				i.ClosedAt = &ms
			}
			return nil
		})
	case "reopened":
		return s.apply(ctx, op, e, repo, n, func(i *Issue, now int64) error {
			if i.Status != StatusClosed {
				return errUnchanged
			}
			return setStatus(op, i, StatusOpen, now)
		})
	}
	return Ignored, nil
}

// text returns what an issue says, as agents may read it.
func text(gi *ghIssue) (title, body string, labels []string) {
	title = Sanitize(gi.Title, maxIssueTitle)
	if gi.Body != nil {
		body = Sanitize(*gi.Body, maxIssueBody)
	}
	for _, l := range gi.Labels {
		if len(labels) < maxLabels && l.Name != "" {
			labels = append(labels, Sanitize(l.Name, 100))
		}
	}
	return title, body, labels
}

// apply changes a known issue with the delivery's dedup record; an
// unknown issue (opened before its repository was mapped) is ignored.
func (s *Service) apply(ctx context.Context, op string, e Event, repo string, n int, change func(*Issue, int64) error) (string, error) {
	return s.applyWith(ctx, op, e, repo, n, func(i *Issue, now int64) ([]store.Op, error) {
		return []store.Op{e.Seen}, change(i, now)
	})
}

// applyWith is apply for a change that brings its own ops, which must
// hold the delivery's dedup record (e.Seen).
func (s *Service) applyWith(ctx context.Context, op string, e Event, repo string, n int, change func(*Issue, int64) ([]store.Op, error)) (string, error) {
	outcome := Accepted
	_, err := s.updateWith(ctx, op, e.Tenant, repo, n, func(i *Issue, now int64) ([]store.Op, error) {
		outcome = Accepted
		ops, err := change(i, now)
		if err == errUnchanged || vp.IsKind(err, vp.KindConflict) {
			outcome = Ignored
			return nil, errUnchanged
		}
		return ops, err
	})
	switch {
	case vp.IsKind(err, vp.KindNotFound):
		return Ignored, nil
	case redelivered(e, err):
		return Duplicate, nil
	}
	return outcome, err
}

// redelivered: err is the failure of the event's dedup record.
func redelivered(e Event, err error) bool {
	var xc *extraConflict
	return errors.As(err, &xc) && e.IsRedelivery != nil && e.IsRedelivery(xc.cond)
}

func (s *Service) trustedAuthor(association string) bool {
	return slices.Contains(s.trusted, strings.ToUpper(association))
}

// opened records a new issue and, for a trusted author on an active
// mapping, queues the start of its protocol (StartJob), in one
// transaction with the delivery's dedup record: a redelivery, a second
// hook or a concurrent delivery of the same issue finds it recorded. The
// mission itself is created by the job, right after the answer, so that
// GitHub gets its answer after one small write whatever the template.
func (s *Service) opened(ctx context.Context, op string, e Event, m Mapping, gi *ghIssue) (string, error) {
	if _, _, err := s.issue(ctx, op, e.Tenant, m.Repo, gi.Number); err == nil {
		return Duplicate, nil
	} else if !vp.IsKind(err, vp.KindNotFound) {
		return "", err
	}
	now := s.nowMS()
	title, body, labels := text(gi)
	i := Issue{ID: s.ids.New("iss"), CreationTime: now, Repo: m.Repo, IssueNumber: gi.Number, Project: m.Project,
		Title: title, Body: body, URL: gi.HTMLURL, Author: gi.User.Login, AuthorAssociation: gi.AuthorAssociation,
		Labels: labels, Status: StatusOpen, OpenedAt: gi.CreatedAt.UnixMilli(), UpdatedAt: now}
	if gi.CreatedAt.IsZero() {
		i.OpenedAt = now
	}
	switch {
	case !m.Active:
		i.Automation = "inactive"
	case !s.trustedAuthor(gi.AuthorAssociation):
		i.Automation = "untrusted"
	case gi.State == "closed":
		i.Automation = "closed"
	default:
		i.Automation, i.Orchestrator = "irp", m.Orchestrator
	}
	ops := []store.Op{e.Seen}
	var start outbox.Pending
	if i.Automation == "irp" {
		b, err := json.Marshal(startJob{Repo: i.Repo, Number: i.IssueNumber})
		if err != nil {
			return "", vp.Wrap(op, vp.KindInternal, err)
		}
		if start, err = s.jobs.Enqueue(ctx, e.Tenant, TopicStart, "start:"+i.Ref(), b); err != nil {
			return "", err
		}
		ops = append(ops, start.Ops()...)
	}
	it, err := Issues.Item(op, e.Tenant, i)
	if err != nil {
		return "", err
	}
	ops = append(ops, store.Put(it, store.IfNotExists))
	if err := s.st.Write(ctx, ops...); err != nil {
		if isCondition(err) {
			return Duplicate, nil // the same issue, committed by another delivery meanwhile
		}
		return "", records.Err(op, err)
	}
	if s.flush {
		s.jobs.Flush(ctx, start)
	} else {
		s.jobs.Kick(start)
	}
	s.log.InfoContext(ctx, "github issue opened", "tenant", e.Tenant, "issue", i.Ref(), "automation", i.Automation)
	return Accepted, nil
}

// transfer follows an issue GitHub moved from (fromRepo, fromNumber) to
// the repository of m: the record at the new place takes over the old
// one's mission and history, so the steps still to come comment where
// the issue now lives, and no second mission starts. GitHub sends both an
// "opened" (new repository) and a "transferred" (old one), in either
// order; whichever comes first does the move, the other finds it done.
func (s *Service) transfer(ctx context.Context, op string, e Event, fromRepo string, fromNumber int, m Mapping, gi *ghIssue) (string, error) {
	from, err := checkRepo(op, "changes.old_repository", fromRepo)
	if err != nil {
		return Ignored, nil
	}
	if _, _, err := s.issue(ctx, op, e.Tenant, m.Repo, gi.Number); err == nil {
		return Duplicate, nil
	}
	old, oldItem, err := s.issue(ctx, op, e.Tenant, from, fromNumber)
	if vp.IsKind(err, vp.KindNotFound) {
		if m.ID == "" {
			return Ignored, nil // moved from and to repositories we do not follow
		}
		return s.opened(ctx, op, e, m, gi) // we never saw it before: a new issue here
	}
	if err != nil {
		return "", err
	}
	now := s.nowMS()
	moved := old
	moved.Repo, moved.IssueNumber, moved.URL, moved.UpdatedAt = m.Repo, gi.Number, gi.HTMLURL, now
	if m.Project != "" {
		moved.Project = m.Project
	}
	moved.TransferredTo = ""
	old.TransferredTo, old.MissionID, old.UpdatedAt = moved.Ref(), "", now
	if old.Status != StatusClosed {
		old.Status, old.ClosedAt = StatusClosed, &now
	}
	oldNext, err := Issues.Item(op, e.Tenant, old)
	if err != nil {
		return "", err
	}
	newItem, err := Issues.Item(op, e.Tenant, moved)
	if err != nil {
		return "", err
	}
	err = s.st.Write(ctx, e.Seen, store.Put(oldNext, store.IfVersion(oldItem.Version)), store.Put(newItem, store.IfNotExists))
	if isCondition(err) {
		return Duplicate, nil
	}
	if err != nil {
		return "", records.Err(op, err)
	}
	return Accepted, nil
}

// BotLogins tells the login a tenant's bot posts as; the GitHub adapter
// (github.ForTenants) implements it next to GitHub. Without it no marker
// is the bot's.
type BotLogins interface {
	BotLogin(ctx context.Context, tenant string) (string, error)
}

// byBot reports whether login is the tenant's bot. An unknown bot is an
// error, not a "no": the event is retried rather than counted wrongly.
func (s *Service) byBot(ctx context.Context, tenant, login string) (bool, error) {
	b, ok := s.gh.(BotLogins)
	if !ok || login == "" {
		return false, nil
	}
	bot, err := b.BotLogin(ctx, tenant)
	if err != nil {
		return false, err
	}
	return bot != "" && strings.EqualFold(bot, login), nil
}

// endsWithMarker reports whether body ends with one of the IRP's markers
// (trailing white space aside, which GitHub may add), as the bot writes
// them: a marker quoted earlier in the text is text.
func endsWithMarker(body string) bool {
	body = strings.TrimRight(body, " \t\r\n")
	i := strings.LastIndex(body, markerPrefix)
	if i < 0 || !strings.HasSuffix(body, " -->") {
		return false
	}
	id := body[i+len(markerPrefix) : len(body)-len(" -->")]
	return id != "" && !strings.ContainsAny(id, "\n<>")
}

// pullRequestEvent updates the external issues watching a pull request
// at once (the PR monitor's hourly poll is the backstop).
func (s *Service) pullRequestEvent(ctx context.Context, op string, e Event, p payload) (string, error) {
	status := prStatus(p.PullRequest.State, p.PullRequest.Draft, p.PullRequest.Merged)
	watched, err := s.watchedPRs(ctx, op, e.Tenant)
	if err != nil {
		return "", err
	}
	outcome := Ignored
	for _, w := range watched {
		if !strings.EqualFold(w.PRURL, p.PullRequest.HTMLURL) {
			continue
		}
		changed, err := s.setPRStatus(ctx, op, e.Tenant, w, status, "", e.Seen)
		if redelivered(e, err) {
			return Duplicate, nil
		}
		if err != nil {
			return "", err
		}
		if changed {
			outcome = Accepted
		}
	}
	return outcome, nil
}

func prStatus(state string, draft, merged bool) string {
	switch {
	case merged:
		return "merged"
	case state == "closed":
		return "closed" // closed without merging is not a merge
	case draft:
		return "draft"
	}
	return "open"
}

func (s *Service) watchedPRs(ctx context.Context, op, tenant string) ([]Issue, error) {
	var out []Issue
	err := records.Scan(ctx, s.st, Issues.Query(tenant, store.GSI4, table.Values{"watch": "open"}), func(it store.Item) (bool, error) {
		i, err := records.Decode[Issue](op, it)
		if err == nil {
			out = append(out, i)
		}
		return err == nil, err
	})
	return out, err
}
