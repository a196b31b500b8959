package issue

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/vantagepeers/vantagepeers/shared/ghmd"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Outbox topics: the start of an issue's protocol, and its comments.
const (
	TopicStart   = "github.irp.start"
	TopicComment = "github.comment"
)

type startJob struct {
	Repo   string `json:"repo"`
	Number int    `json:"number"`
}

// StartJob starts the protocol of an opened issue (the outbox handler of
// TopicStart): in one transaction, conditional on the issue's version,
// the mission of the template with its 14 tasks, the issue assigned to
// it (in_progress), the orchestrator's message and the "Investigating"
// comment's job. A rerun finds the issue assigned and does nothing, so
// the job is idempotent under its id.
func (s *Service) StartJob(ctx context.Context, j outbox.Job) error {
	const op = "github.irp.start"
	var sj startJob
	if err := json.Unmarshal(j.Payload, &sj); err != nil || sj.Number < 1 {
		return outbox.Permanent(vp.Errorf(op, vp.KindInvalid, "payload", "not a start job: %s", j.Payload))
	}
	var st *started
	err := table.Retry(ctx, op, "issueNumber", sj.Repo, func() error {
		i, it, err := s.current(ctx, op, j.Tenant, sj.Repo, sj.Number)
		if err != nil || i.MissionID != "" || i.Automation != "irp" {
			return err
		}
		if st, err = s.startIRP(ctx, op, j.Tenant, &i); err != nil {
			return err
		}
		next, err := Issues.Item(op, j.Tenant, i)
		if err != nil {
			return err
		}
		return s.st.Write(ctx, append([]store.Op{store.Put(next, store.IfVersion(it.Version))}, st.ops...)...)
	})
	if vp.IsKind(err, vp.KindNotFound) {
		return nil // the issue is gone
	}
	if err == nil && st != nil {
		st.committed(ctx, s, op, j.Tenant)
		s.log.InfoContext(ctx, "github issue assigned", "tenant", j.Tenant, "issue", sj.Repo+"#"+strconv.Itoa(sj.Number),
			"mission", st.plan.Mission.ID, "orchestrator", st.plan.Mission.Pilot)
	}
	return err
}

// started is an IRP ready to commit: the mission, the orchestrator's
// message and the first comment's job.
type started struct {
	ops     []store.Op
	plan    mission.Planned
	notice  message.Notice
	comment outbox.Pending
}

func (st *started) committed(ctx context.Context, s *Service, op, tenant string) {
	s.missions.Committed(ctx, op, tenant, st.plan)
	s.notices.Sent(ctx, op, tenant, st.notice)
	s.jobs.Kick(st.comment)
}

// startIRP prepares the mission of an issue and assigns i to it.
func (s *Service) startIRP(ctx context.Context, op, tenant string, i *Issue) (*started, error) {
	num := fmt.Sprint(i.IssueNumber)
	plan, err := s.missions.PlanFromTemplate(ctx, op, tenant, mission.FromTemplate{
		Name:    Sanitize(fmt.Sprintf("[#%d] %s", i.IssueNumber, i.Title), vp.MaxMissionNameBytes),
		Project: i.Project, Priority: "high", Pilot: i.Orchestrator, CreatedBy: vp.SystemCaller,
		Description: fmt.Sprintf("GitHub issue %s: %s", i.Ref(), i.URL), Brief: i.Body, Template: Template,
		Context: map[string]string{"repo": i.Repo, "issueNumber": num, "title": i.Title, "url": i.URL,
			"orchestrator": i.Orchestrator},
		TitlePrefix: "[#" + num + "]",
	})
	if err != nil {
		return nil, err
	}
	notice, err := s.notices.ComposeNotice(ctx, op, tenant, vp.SystemCaller, i.Orchestrator, fmt.Sprintf(
		"GitHub issue %s is yours: %q (%s). Mission %s (%s, %d tasks) starts with T0; steps T6, T8 and T11 comment on the issue when completed.",
		i.Ref(), i.Title, i.URL, plan.Mission.ID, Template, len(plan.TaskIDs)))
	if err != nil {
		return nil, err
	}
	if i.Status == StatusOpen {
		i.Status = StatusInProgress
	}
	i.MissionID = plan.Mission.ID
	comment, err := s.queueComment(ctx, tenant, *i, "open")
	if err != nil {
		return nil, err
	}
	ops := append(append(slices.Clip(plan.Ops), notice.Ops...), comment.Ops()...)
	return &started{ops: ops, plan: plan, notice: notice, comment: comment}, nil
}

// current reads an issue where it lives now, following its transfers.
func (s *Service) current(ctx context.Context, op, tenant, repo string, number int) (Issue, store.Item, error) {
	i, it, err := s.issue(ctx, op, tenant, repo, number)
	for hop := 0; err == nil && hop < 5; hop++ {
		to, n, ok := splitRef(i.TransferredTo)
		if !ok {
			break
		}
		i, it, err = s.issue(ctx, op, tenant, to, n)
	}
	return i, it, err
}

// The four comments of the protocol (§11.3), by step.
var commentTexts = map[string]string{
	"open": "Investigating - assigned to %s",
	"T6":   "Bug reproduced in test suite. Root cause identified.",
	"T8":   "Fix ready. All tests pass including new regression test.",
	"T11":  "Fixed and deployed to production. Regression test added.",
}

// markerPrefix starts the hidden marker each comment carries: CommentJob
// looks for it on the issue before posting, and issue_comment events
// carrying it are ours.
const markerPrefix = "<!-- vantagepeers:irp:"

func marker(step, issueID string) string { return markerPrefix + step + ":" + issueID + " -->" }

type commentJob struct {
	Repo         string `json:"repo"`
	Number       int    `json:"number"`
	Step         string `json:"step"`
	Orchestrator string `json:"orchestrator"`
	IssueID      string `json:"issueId"`
	At           int64  `json:"at"` // when the step happened, for the signature
}

// queueComment returns the job of one of the protocol's comments, to
// commit with its cause. Its dedup key is the issue's id and the step, so
// a second cause (a redelivered event) queues nothing.
func (s *Service) queueComment(ctx context.Context, tenant string, i Issue, step string) (outbox.Pending, error) {
	b, err := json.Marshal(commentJob{Repo: i.Repo, Number: i.IssueNumber, Step: step, Orchestrator: i.Orchestrator,
		IssueID: i.ID, At: s.nowMS()})
	if err != nil {
		return outbox.Pending{}, vp.Wrap("github.comment", vp.KindInternal, err)
	}
	return s.jobs.Enqueue(ctx, tenant, TopicComment, "irp:"+i.ID+":"+step, b)
}

// CommentJob posts one comment of the protocol: the outbox handler of
// TopicComment. It comments where the issue lives now (after a
// transfer too), and GitHub.CommentOnce skips a comment whose marker is
// already on the issue, which is what makes a crash between GitHub's
// answer and the job's removal harmless.
func (s *Service) CommentJob(ctx context.Context, j outbox.Job) error {
	const op = "github.comment"
	var c commentJob
	if err := json.Unmarshal(j.Payload, &c); err != nil || c.Step == "" || commentTexts[c.Step] == "" {
		return outbox.Permanent(vp.Errorf(op, vp.KindInvalid, "payload", "not a comment job: %s", j.Payload))
	}
	repo, number := c.Repo, c.Number
	switch i, _, err := s.current(ctx, op, j.Tenant, c.Repo, c.Number); {
	case err == nil:
		repo, number = i.Repo, i.IssueNumber
	case !vp.IsKind(err, vp.KindNotFound): // gone: comment where it was
		return err
	}
	text := commentTexts[c.Step]
	if c.Step == "open" {
		text = fmt.Sprintf(text, displayName(c.Orchestrator))
	}
	body := text + "\n\n" + Signature(c.Orchestrator, time.UnixMilli(c.At)) + "\n\n" + marker(c.Step, c.IssueID)
	// No comment of this job's can be older than the job: the reads do
	// not grow with the issue's history. The margin covers the skew
	// between our clock and GitHub's.
	err := s.gh.CommentOnce(ctx, j.Tenant, repo, number, marker(c.Step, c.IssueID), body, j.EnqueuedAt.Add(-clockSkew))
	switch vp.KindOf(err) {
	case vp.KindUnauthorized, vp.KindForbidden, vp.KindNotFound, vp.KindInvalid, vp.KindTooLarge:
		return outbox.Permanent(err) // retrying cannot help: a dead letter to look at
	}
	return err
}

func splitRef(ref string) (string, int, bool) {
	repo, num, ok := strings.Cut(ref, "#")
	if !ok {
		return "", 0, false
	}
	n, err := strconv.Atoi(num)
	return repo, n, err == nil && n > 0
}

// teams are the VantageOS team suffixes of the fleet's orchestrators (§11.5).
var teams = map[string]string{"pi": "Lead", "sigma": "Infra", "omega": "Dev", "tau": "Frontend", "phi": "Product", "zeta": "Dev"}

// Signature is the orchestrator signature that ends every comment:
// "Orchestrator: Sigma — VantageOS Team Infra | 2026-04-06 14:32" (UTC).
func Signature(orchestrator string, at time.Time) string {
	team := "VantageOS Team"
	if t, ok := teams[strings.ToLower(orchestrator)]; ok {
		team += " " + t
	}
	return fmt.Sprintf("Orchestrator: %s — %s | %s", displayName(orchestrator), team, at.UTC().Format("2006-01-02 15:04"))
}

// displayName is an orchestrator's name as a comment shows it: a name is
// whatever the tenant typed ("@octocat", "[x](https://…)"), so it goes
// through the renderer, inert.
func displayName(o string) string {
	if o == "" {
		return "the team"
	}
	r := []rune(o)
	r[0] = unicode.ToUpper(r[0])
	return ghmd.Inline(string(r), vp.MaxNameBytes)
}

// clockSkew is how far GitHub's clock may be from ours when a read is
// bounded by a time of ours.
const clockSkew = 10 * time.Minute

// stepPattern finds the protocol step of an IRP task title: "[#42] T6 — Write Missing Tests".
var stepPattern = regexp.MustCompile(`(?:^|\s)(T\d{1,2})\s+—`)

// OnTaskFinished reacts to a completed task (subscriber of
// task.TopicFinished): a step of an issue's protocol records the commits
// its note names, queues its comment (T6, T8, T11) and, at T8 ("Fix
// ready"), moves the issue to fixed; any other task whose title names an
// issue is linked to it (auto-linking, §11.2). The protocol's own steps
// are not auto-linked: they name their issue in every title, and a KB
// Search note that mentions "a fix" must not mark the issue fixed.
func (s *Service) OnTaskFinished(ctx context.Context, j outbox.Job) error {
	f, err := task.DecodeFinished(j)
	if err != nil || f.NewStatus != vp.TaskDone {
		return err
	}
	if f.MissionID != "" {
		step, err := s.stepDone(ctx, f)
		if err != nil || step {
			return err
		}
	}
	return s.autoLink(ctx, f)
}

// stepDone handles a completed task of an IRP mission; false when the
// mission is no issue's.
func (s *Service) stepDone(ctx context.Context, f task.Finished) (bool, error) {
	const op = "github.irp"
	rows, err := records.QueryAll(ctx, s.st, Issues.Query(f.Tenant, store.GSI3, table.Values{"missionId": f.MissionID}), 10)
	if err != nil || len(rows) == 0 {
		return false, records.Err(op, err)
	}
	step := ""
	if m := stepPattern.FindStringSubmatch(f.Title); m != nil {
		step = m[1]
	}
	shas := CommitSHAs(f.Note)
	for _, it := range rows {
		i, err := records.Decode[Issue](op, it)
		if err != nil {
			return true, err
		}
		if len(shas) > 0 || step == "T8" {
			_, err := s.update(ctx, op, f.Tenant, i.Repo, i.IssueNumber, func(i *Issue, now int64) error {
				changed := addAll(&i.CommitSHAs, shas)
				if step == "T8" && (i.Status == StatusOpen || i.Status == StatusInProgress) {
					changed = setStatus(op, i, StatusFixed, now) == nil || changed
				}
				if !changed {
					return errUnchanged
				}
				return nil
			})
			if err != nil {
				return true, err
			}
		}
		if commentTexts[step] == "" {
			continue
		}
		job, err := s.queueComment(ctx, f.Tenant, i, step)
		if err != nil {
			return true, err
		}
		if job.Duplicate() {
			continue
		}
		if err := s.st.Write(ctx, job.Ops()...); err != nil && !outbox.IsDuplicate(err) {
			return true, records.Err(op, err)
		}
		s.jobs.Kick(job)
	}
	return true, nil
}

// addAll appends the values of add not in *list yet, up to maxLinks;
// whether it added any.
func addAll(list *[]string, add []string) bool {
	changed := false
	for _, v := range add {
		if !slices.Contains(*list, v) && len(*list) < maxLinks {
			*list, changed = append(*list, v), true
		}
	}
	return changed
}

// autoLink links a completed task to the issues its title names: "#N" on
// a repository mapped to the task's project, "owner/repo#N" on that
// mapped repository. The note's commit SHAs are recorded, and an open or
// in-progress issue becomes fixed when the note says fix/fixed or
// carries a SHA. Each link is idempotent, so a redelivered event changes
// nothing.
func (s *Service) autoLink(ctx context.Context, f task.Finished) error {
	const op = "github.autolink"
	refs := References(f.Title)
	if len(refs) == 0 {
		return nil
	}
	var projectRepos []string
	if f.Project != "" {
		ms, err := s.mappingsOfProject(ctx, op, f.Tenant, f.Project)
		if err != nil {
			return err
		}
		for _, m := range ms {
			projectRepos = append(projectRepos, m.Repo)
		}
	}
	shas, fixed := CommitSHAs(f.Note), saysFixed(f.Note)
	for _, r := range refs {
		repos := projectRepos
		if r.Repo != "" {
			if _, _, err := s.mapping(ctx, op, f.Tenant, r.Repo); err != nil {
				if vp.IsKind(err, vp.KindNotFound) {
					continue
				}
				return err
			}
			repos = []string{r.Repo}
		}
		for _, repo := range repos {
			_, err := s.update(ctx, op, f.Tenant, repo, r.Number, func(i *Issue, now int64) error {
				changed := addAll(&i.LinkedTaskIDs, []string{f.TaskID})
				changed = addAll(&i.CommitSHAs, shas) || changed
				if fixed && (i.Status == StatusOpen || i.Status == StatusInProgress) {
					_ = setStatus(op, i, StatusFixed, now)
					changed = true
				}
				if !changed {
					return errUnchanged
				}
				return nil
			})
			if err != nil && !vp.IsKind(err, vp.KindNotFound) {
				return err
			}
		}
	}
	return nil
}

// setPRStatus records a pull request's status on an external issue and,
// when it is merged or closed, tells the watcher in the same transaction.
// extra ops (a delivery's dedup record) commit with it.
func (s *Service) setPRStatus(ctx context.Context, op, tenant string, w Issue, status, etag string, extra ...store.Op) (bool, error) {
	changed := false
	var notice *message.Notice
	_, err := s.updateWith(ctx, op, tenant, w.Repo, w.IssueNumber, func(i *Issue, now int64) ([]store.Op, error) {
		changed, notice = false, nil
		etagChanged := etag != "" && etag != i.PRETag
		if etagChanged {
			i.PRETag = etag
		}
		if i.PRStatus == status {
			if etagChanged {
				return extra, nil
			}
			return nil, errUnchanged
		}
		i.PRStatus, changed = status, true
		if (status != "merged" && status != "closed") || i.Watcher == "" {
			return extra, nil
		}
		verb := "was merged"
		if status == "closed" {
			verb = "was closed without merging"
		}
		n, err := s.notices.ComposeNotice(ctx, op, tenant, vp.SystemCaller, i.Watcher,
			fmt.Sprintf("Pull request %s for %s %s.", i.PRURL, i.Ref(), verb))
		if err != nil {
			return nil, err
		}
		notice = &n
		return append(slices.Clip(extra), n.Ops...), nil
	})
	if err == nil && notice != nil {
		s.notices.Sent(ctx, op, tenant, *notice)
	}
	return changed, err
}
