package issue

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// AutoIssue is an issue the product filed itself (the error monitor's
// "[Auto]" issues).
type AutoIssue struct {
	Repo         string
	Number       int
	Title, Body  string
	URL          string
	Orchestrator string
	// Project is used when the repository has no mapping.
	Project string
	// Author is the GitHub login that opened the issue, as GitHub answered
	// the filing (the bot's own account). A record that a webhook made
	// first is adopted only when its author is the same.
	Author string
}

// TrackAuto records an issue the product filed and starts its protocol,
// exactly once, whether GitHub's webhook for it arrives before, after or
// never: a webhook that came first recorded it (as untrusted: the bot is
// not a member), and this upgrades it; one that comes later finds it
// recorded (Duplicate). The start job is deduplicated by repo#number like
// an opened issue's.
//
// A record the bot did not write is never adopted: one a webhook made
// for an issue opened by anyone but a.Author is refused (KindConflict),
// and an adopted record's title and body, the mission's brief, are the
// bot's (a), never what the record holds.
func (s *Service) TrackAuto(ctx context.Context, tenant string, a AutoIssue) error {
	const op = "github.auto"
	repo, err := checkRepo(op, "repo", a.Repo)
	if err != nil {
		return err
	}
	if err := checkNumber(op, a.Number); err != nil {
		return err
	}
	project, orchestrator := a.Project, vp.NormalizeOrchestrator(a.Orchestrator)
	if m, _, err := s.mapping(ctx, op, tenant, repo); err == nil {
		project = m.Project
		if orchestrator == "" {
			orchestrator = m.Orchestrator
		}
	}
	var start outbox.Pending
	err = table.Retry(ctx, op, "issueNumber", repo, func() error {
		cur, it, err := s.issue(ctx, op, tenant, repo, a.Number)
		cond := store.IfNotExists
		now := s.nowMS()
		i := Issue{ID: s.ids.New("iss"), CreationTime: now, Repo: repo, IssueNumber: a.Number, Project: project,
			Title: Sanitize(a.Title, maxIssueTitle), Body: Sanitize(a.Body, maxIssueBody), URL: a.URL, Author: vp.SystemCaller,
			Status: StatusOpen, OpenedAt: now, UpdatedAt: now}
		switch {
		case err == nil:
			if cur.MissionID != "" || cur.Automation == "irp" {
				return nil // started already
			}
			if a.Author == "" || !strings.EqualFold(cur.Author, a.Author) {
				return vp.Errorf(op, vp.KindConflict, "number",
					"%s#%d was opened on GitHub by %q, not by the bot's account %q: an issue the bot did not write is never made a mission",
					repo, a.Number, cur.Author, a.Author)
			}
			title, body := i.Title, i.Body
			i, cond = cur, store.IfVersion(it.Version)
			i.Title, i.Body, i.UpdatedAt = title, body, now
		case !vp.IsKind(err, vp.KindNotFound):
			return err
		}
		i.Automation, i.Orchestrator = "irp", orchestrator
		b, err := json.Marshal(startJob{Repo: repo, Number: a.Number})
		if err != nil {
			return vp.Wrap(op, vp.KindInternal, err)
		}
		if start, err = s.jobs.Enqueue(ctx, tenant, TopicStart, "start:"+i.Ref(), b); err != nil {
			return err
		}
		next, err := Issues.Item(op, tenant, i)
		if err != nil {
			return err
		}
		err = s.st.Write(ctx, append([]store.Op{store.Put(next, cond)}, start.Ops()...)...)
		if outbox.IsDuplicate(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return err // table.Retry has mapped store errors onto kinds
	}
	s.jobs.Kick(start)
	return nil
}

// StatusOf returns the status of an issue, "" when it is not tracked.
func (s *Service) StatusOf(ctx context.Context, tenant, repo string, number int) (string, error) {
	i, _, err := s.current(ctx, "github.status", tenant, strings.ToLower(repo), number)
	if vp.IsKind(err, vp.KindNotFound) {
		return "", nil
	}
	return i.Status, err
}

// Resolution returns an issue's status and when it was resolved (Unix ms):
// fixed or verified, when it was fixed; closed, when it was closed; 0
// while it is open or when the time is not known. The error monitor
// reopens an issue only for occurrences after that moment.
func (s *Service) Resolution(ctx context.Context, tenant, repo string, number int) (string, int64, error) {
	i, _, err := s.current(ctx, "github.status", tenant, strings.ToLower(repo), number)
	if vp.IsKind(err, vp.KindNotFound) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	var at *int64
	switch i.Status {
	case StatusFixed, StatusVerified:
		at = cmp.Or(i.FixedAt, i.VerifiedAt)
	case StatusClosed:
		at = i.ClosedAt
	}
	if at == nil {
		return i.Status, 0, nil
	}
	return i.Status, *at, nil
}

// Regressed records that an issue's fix did not hold (the error it
// reports fired again, and GitHub reopened it): closed → open, fixed or
// verified → in_progress. Other statuses are left alone.
func (s *Service) Regressed(ctx context.Context, tenant, repo string, number int) error {
	const op = "github.regressed"
	i, _, err := s.current(ctx, op, tenant, strings.ToLower(repo), number)
	if vp.IsKind(err, vp.KindNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	_, err = s.update(ctx, op, tenant, i.Repo, i.IssueNumber, func(i *Issue, now int64) error {
		switch i.Status {
		case StatusClosed:
			return setStatus(op, i, StatusOpen, now)
		case StatusFixed, StatusVerified:
			return setStatus(op, i, StatusInProgress, now)
		}
		return errUnchanged
	})
	return err
}
