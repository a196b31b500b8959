package issue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// lifecycle: the statuses each status may move to. closed only reopens.
var lifecycle = map[string][]string{
	StatusOpen:       {StatusInProgress, StatusFixed, StatusClosed},
	StatusInProgress: {StatusOpen, StatusFixed, StatusClosed},
	StatusFixed:      {StatusInProgress, StatusVerified, StatusClosed},
	StatusVerified:   {StatusInProgress, StatusClosed},
	StatusClosed:     {StatusOpen},
}

// IssueRef names an issue.
type IssueRef struct {
	Repo        string `json:"repo"`
	IssueNumber int    `json:"issueNumber"`
}

func (r IssueRef) check(op string) (string, error) {
	repo, err := checkRepo(op, "repo", r.Repo)
	if err != nil {
		return "", err
	}
	return repo, checkNumber(op, r.IssueNumber)
}

// begin starts a call on an issue: the caller's tenant, and the checked
// repository with the reference's errors, to which the call adds its own.
func (r IssueRef) begin(op string, p vp.Principal) (tenant, repo string, errs vp.Errs, err error) {
	if tenant, err = vp.TenantOf(op, p); err != nil {
		return "", "", nil, err
	}
	repo, err = r.check(op)
	errs.Add(err)
	return tenant, repo, errs, nil
}

// GetIssue returns an issue.
func (s *Service) GetIssue(ctx context.Context, p vp.Principal, in IssueRef) (Issue, error) {
	const op = "get_issue"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Issue{}, err
	}
	repo, err := in.check(op)
	if err != nil {
		return Issue{}, err
	}
	i, _, err := s.issue(ctx, op, tenant, repo, in.IssueNumber)
	return i, err
}

func (s *Service) issue(ctx context.Context, op, tenant, repo string, number int) (Issue, store.Item, error) {
	i, it, err := Issues.Get(ctx, s.st, op, "issueNumber", fmt.Sprintf("%s#%d", repo, number), issueKey(tenant, repo, number))
	if vp.IsKind(err, vp.KindNotFound) {
		err = vp.Errorf(op, vp.KindNotFound, "issueNumber", "no issue %s#%d in this tenant: issues arrive through the GitHub webhook of a mapped repository", repo, number)
	}
	return i, it, err
}

// update applies change to an issue and writes it on the version read,
// retried on conflict, with extra ops (a delivery's dedup record). A
// change that returns errUnchanged writes nothing.
func (s *Service) update(ctx context.Context, op, tenant, repo string, number int, change func(*Issue, int64) error, extra ...store.Op) (Issue, error) {
	return s.updateWith(ctx, op, tenant, repo, number, func(i *Issue, now int64) ([]store.Op, error) {
		return extra, change(i, now)
	})
}

// updateWith is update for a change that brings its own ops (a message
// composed for the new state).
func (s *Service) updateWith(ctx context.Context, op, tenant, repo string, number int, change func(*Issue, int64) ([]store.Op, error)) (Issue, error) {
	var out Issue
	err := table.Retry(ctx, op, "issueNumber", fmt.Sprintf("%s#%d", repo, number), func() error {
		i, it, err := s.issue(ctx, op, tenant, repo, number)
		if err != nil {
			return err
		}
		now := s.nowMS()
		extra, err := change(&i, now)
		if err == errUnchanged {
			out = i
			return nil
		} else if err != nil {
			return err
		}
		i.UpdatedAt = now
		next, err := Issues.Item(op, tenant, i)
		if err != nil {
			return err
		}
		out = i
		err = s.st.Write(ctx, append([]store.Op{store.Put(next, store.IfVersion(it.Version))}, extra...)...)
		var ce *store.ConditionError
		if errors.As(err, &ce) && ce.Index > 0 {
			return &extraConflict{ce} // not a lost race on the issue: do not retry
		}
		return err
	})
	return out, err
}

// extraConflict is the failed condition of an extra op of an update (a
// delivery already seen). It does not unwrap to store.ErrConditionFailed,
// so that table.Retry does not retry it.
type extraConflict struct{ cond *store.ConditionError }

func (e *extraConflict) Error() string { return e.cond.Error() }

var errUnchanged = fmt.Errorf("unchanged")

// setStatus moves i to status, stamping the moment; same status: unchanged.
func setStatus(op string, i *Issue, status string, now int64) error {
	if i.Status == status {
		return errUnchanged
	}
	if !slices.Contains(lifecycle[i.Status], status) {
		return vp.Errorf(op, vp.KindConflict, "status", "issue %s is %s; it may move to %s, not %s", i.Ref(), i.Status,
			strings.Join(lifecycle[i.Status], ", "), status)
	}
	i.Status = status
	switch status {
	case StatusFixed:
		i.FixedAt = &now
	case StatusClosed:
		i.ClosedAt = &now
	case StatusOpen:
		i.ClosedAt = nil
	}
	return nil
}

// StatusInput is update_issue_status' arguments.
type StatusInput struct {
	IssueRef
	Status string `json:"status"`
	// External issues: the pull request that fixes it and who hears when
	// it is merged or closed. Setting prUrl on an issue not yet known
	// starts tracking it.
	PRURL   string `json:"prUrl,omitempty"`
	Watcher string `json:"watcher,omitempty"`
}

// prURL is a pull request's web address.
var prURLPattern = `https://github.com/<owner>/<repo>/pull/<number>`

// UpdateStatus moves an issue along its lifecycle (see lifecycle).
func (s *Service) UpdateStatus(ctx context.Context, p vp.Principal, in StatusInput) (Issue, error) {
	const op = "update_issue_status"
	tenant, repo, errs, err := in.begin(op, p)
	if err != nil {
		return Issue{}, err
	}
	errs.Add(vp.CheckEnum(op, "status", in.Status, Statuses, true))
	if in.PRURL != "" {
		if _, _, err := parsePRURL(in.PRURL); err != nil {
			errs.Add(vp.Errorf(op, vp.KindInvalid, "prUrl", "must be %s, got %q", prURLPattern, in.PRURL))
		}
	}
	errs.Add(vp.CheckName(op, "watcher", in.Watcher, false))
	if err := errs.First(); err != nil {
		return Issue{}, err
	}
	caller, _ := p.ActAs(op, "watcher", "")
	if in.PRURL != "" {
		if err := s.track(ctx, op, tenant, repo, in.IssueNumber); err != nil {
			return Issue{}, err
		}
	}
	return s.update(ctx, op, tenant, repo, in.IssueNumber, func(i *Issue, now int64) error {
		changed := false
		if in.PRURL != "" && in.PRURL != i.PRURL {
			i.PRURL, i.PRStatus, i.PRETag, changed = in.PRURL, "open", "", true
			if i.Watcher == "" {
				i.Watcher = caller
			}
		}
		if in.Watcher != "" && vp.NormalizeOrchestrator(in.Watcher) != i.Watcher {
			i.Watcher, changed = vp.NormalizeOrchestrator(in.Watcher), true
		}
		err := setStatus(op, i, in.Status, now)
		if err == errUnchanged && changed {
			return nil
		}
		return err
	})
}

// track creates the record of an external issue (one on a repository
// without a mapping) the first time a pull request is attached to it.
func (s *Service) track(ctx context.Context, op, tenant, repo string, number int) error {
	now := s.nowMS()
	i := Issue{ID: s.ids.New("iss"), CreationTime: now, Repo: repo, IssueNumber: number, Project: "external",
		Title: fmt.Sprintf("%s#%d", repo, number), URL: fmt.Sprintf("https://github.com/%s/issues/%d", repo, number),
		Status: StatusInProgress, OpenedAt: now, External: true, UpdatedAt: now}
	if m, _, err := s.mapping(ctx, op, tenant, repo); err == nil {
		i.Project, i.External = m.Project, false
	}
	it, err := Issues.Item(op, tenant, i)
	if err != nil {
		return err
	}
	err = s.st.Write(ctx, store.Put(it, store.IfNotExists))
	if err != nil && !isCondition(err) {
		return records.Err(op, err)
	}
	return nil
}

// CommitInput is link_commit_to_issue's arguments.
type CommitInput struct {
	IssueRef
	CommitSHA string `json:"commitSha"`
	FixedBy   string `json:"fixedBy,omitempty"`
}

// LinkCommit records a commit on an issue (and who fixed it).
func (s *Service) LinkCommit(ctx context.Context, p vp.Principal, in CommitInput) (Issue, error) {
	const op = "link_commit_to_issue"
	tenant, repo, errs, err := in.begin(op, p)
	if err != nil {
		return Issue{}, err
	}
	sha := strings.ToLower(strings.TrimSpace(in.CommitSHA))
	if !isSHA(sha) {
		errs.Add(vp.Errorf(op, vp.KindInvalid, "commitSha", "must be a git commit SHA of 7 to 40 hex digits, got %q", in.CommitSHA))
	}
	errs.Add(vp.CheckName(op, "fixedBy", in.FixedBy, false))
	if err := errs.First(); err != nil {
		return Issue{}, err
	}
	return s.update(ctx, op, tenant, repo, in.IssueNumber, func(i *Issue, _ int64) error {
		changed := false
		if !slices.Contains(i.CommitSHAs, sha) {
			if len(i.CommitSHAs) >= maxLinks {
				return vp.Errorf(op, vp.KindTooLarge, "commitSha", "issue %s already has %d commits; the limit is %d", i.Ref(), len(i.CommitSHAs), maxLinks)
			}
			i.CommitSHAs, changed = append(i.CommitSHAs, sha), true
		}
		if by := vp.NormalizeOrchestrator(in.FixedBy); by != "" && by != i.FixedBy {
			i.FixedBy, changed = by, true
		}
		if !changed {
			return errUnchanged
		}
		return nil
	})
}

// VerifyInput is verify_issue's arguments.
type VerifyInput struct {
	IssueRef
	VerifiedBy string `json:"verifiedBy"`
}

// Verify marks a fixed issue verified.
func (s *Service) Verify(ctx context.Context, p vp.Principal, in VerifyInput) (Issue, error) {
	const op = "verify_issue"
	tenant, repo, errs, err := in.begin(op, p)
	if err != nil {
		return Issue{}, err
	}
	errs.Add(vp.CheckName(op, "verifiedBy", in.VerifiedBy, true))
	if err := errs.First(); err != nil {
		return Issue{}, err
	}
	return s.update(ctx, op, tenant, repo, in.IssueNumber, func(i *Issue, now int64) error {
		if i.Status != StatusFixed {
			return vp.Errorf(op, vp.KindConflict, "issueNumber", "issue %s is %s: only a fixed issue can be verified", i.Ref(), i.Status)
		}
		i.VerifiedBy, i.VerifiedAt = vp.NormalizeOrchestrator(in.VerifiedBy), &now
		return setStatus(op, i, StatusVerified, now)
	})
}

// ListInput is list_issues' filters.
type ListInput struct {
	listing.Params
	Project string `json:"project,omitempty"`
	Status  string `json:"status,omitempty"`
}

// List is list_issues' answer: rows under "issues", not "items".
type List struct {
	Count      int    `json:"count"`
	Issues     []any  `json:"issues"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// ListIssues lists issues newest first, by project (gsi1) or status
// (gsi2; all statuses merged when none is given).
func (s *Service) ListIssues(ctx context.Context, p vp.Principal, in ListInput) (List, error) {
	const op = "list_issues"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return List{}, err
	}
	project := strings.TrimSpace(in.Project)
	var errs vp.Errs
	errs.Add(vp.CheckKeyText(op, "project", project, vp.MaxProjectBytes, false))
	errs.Add(vp.CheckEnum(op, "status", in.Status, Statuses, false))
	if err := errs.First(); err != nil {
		return List{}, err
	}
	statuses := Statuses
	if in.Status != "" {
		statuses = []string{in.Status}
	}
	idx, pks := store.GSI2, []string{}
	if project != "" {
		idx, pks = store.GSI1, []string{Issues.PK(tenant, store.GSI1, table.Values{"project": project})}
	} else {
		for _, st := range statuses {
			pks = append(pks, Issues.PK(tenant, store.GSI2, table.Values{"status": st}))
		}
	}
	page, err := listing.List(ctx, store.Partitions(s.st, pks), s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: op + "\x00" + project + "\x00" + in.Status, Params: in.Params,
		Query:    store.Query{Index: idx, PK: pks[0], Reverse: true},
		LiteKeys: []string{"repo", "issueNumber", "title", "status"},
	}, func(it store.Item) (Issue, bool, error) {
		i, err := records.Decode[Issue](op, it)
		return i, err == nil && slices.Contains(statuses, i.Status) && (project == "" || i.Project == project), err
	})
	if err != nil {
		return List{}, err
	}
	return List{Count: len(page.Items), Issues: page.Items, NextCursor: page.NextCursor}, nil
}
