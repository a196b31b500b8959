package issue

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Issue statistics (§11.4): issue_stats counts a project's issues by
// status; the daily job (06:00 UTC, jobs catalogue "issue-stats") writes
// one snapshot per project and day with the resolution times, which
// issue_stats returns with daily: true.

// maxStatsIssues bounds the issues one project's statistics read.
const maxStatsIssues = 20_000

// maxSnapshots is how many daily snapshots issue_stats returns, newest first.
const maxSnapshots = 90

// StatsInput is issue_stats' arguments.
type StatsInput struct {
	Project string `json:"project,omitempty"`
	Daily   bool   `json:"daily,omitempty"`
}

// Stats is issue_stats' answer: counts by status (every status present,
// zero included) and, with daily, the project's snapshots newest first.
type Stats struct {
	Project   string         `json:"project,omitempty"`
	Counts    map[string]int `json:"counts"`
	Total     int            `json:"total"`
	Snapshots []Snapshot     `json:"snapshots,omitempty"`
}

// IssueStats counts issues by status (of a project, or of the tenant).
func (s *Service) IssueStats(ctx context.Context, p vp.Principal, in StatsInput) (Stats, error) {
	const op = "issue_stats"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return Stats{}, err
	}
	project := strings.TrimSpace(in.Project)
	if err := vp.CheckKeyText(op, "project", project, vp.MaxProjectBytes, false); err != nil {
		return Stats{}, err
	}
	if in.Daily && project == "" {
		return Stats{}, vp.E(op, vp.KindInvalid, "project", "is required with daily: true (snapshots are per project)")
	}
	out := Stats{Project: project, Counts: map[string]int{}}
	for _, st := range Statuses {
		out.Counts[st] = 0
	}
	err = s.eachIssue(ctx, op, tenant, project, func(i Issue) {
		out.Counts[i.Status]++
		out.Total++
	})
	if err != nil {
		return Stats{}, err
	}
	if in.Daily {
		q := Snapshots.Query(tenant, store.Primary, table.Values{"project": project})
		q.Reverse = true
		rows, err := records.QueryAll(ctx, s.st, q, maxSnapshots)
		if err != nil {
			return Stats{}, records.Err(op, err)
		}
		out.Snapshots = []Snapshot{}
		for _, it := range rows {
			sn, err := records.Decode[Snapshot](op, it)
			if err != nil {
				return Stats{}, err
			}
			out.Snapshots = append(out.Snapshots, sn)
		}
	}
	return out, nil
}

// eachIssue calls fn on every issue of a project (of the tenant when
// project is ""), up to maxStatsIssues.
func (s *Service) eachIssue(ctx context.Context, op, tenant, project string, fn func(Issue)) error {
	var pks []string
	idx := store.GSI2
	if project != "" {
		idx, pks = store.GSI1, []string{Issues.PK(tenant, store.GSI1, table.Values{"project": project})}
	} else {
		for _, st := range Statuses {
			pks = append(pks, Issues.PK(tenant, store.GSI2, table.Values{"status": st}))
		}
	}
	n := 0
	for _, pk := range pks {
		err := records.Scan(ctx, s.st, store.Query{Index: idx, PK: pk}, func(it store.Item) (bool, error) {
			i, err := records.Decode[Issue](op, it)
			if err != nil {
				return false, err
			}
			fn(i)
			n++
			return n < maxStatsIssues, nil
		})
		if err != nil {
			return records.Err(op, err)
		}
	}
	return nil
}

// Snapshot computes and writes today's snapshot of a project.
func (s *Service) WriteSnapshot(ctx context.Context, tenant, project string) (Snapshot, error) {
	const op = "issue-stats"
	now := s.now().UTC()
	var issues []Issue
	if err := s.eachIssue(ctx, op, tenant, project, func(i Issue) { issues = append(issues, i) }); err != nil {
		return Snapshot{}, err
	}
	sn := computeSnapshot(project, issues, s.pivot, now)
	it, err := Snapshots.Item(op, tenant, sn)
	if err != nil {
		return Snapshot{}, err
	}
	if err := s.st.Write(ctx, store.Put(it, store.Always)); err != nil {
		return Snapshot{}, records.Err(op, err)
	}
	return sn, nil
}

// SnapshotAll writes today's snapshot of every project with an active
// mapping: the daily job.
func (s *Service) SnapshotAll(ctx context.Context, tenant string) (int, error) {
	const op = "issue-stats"
	rows, err := records.QueryAll(ctx, s.st, Mappings.Query(tenant, store.GSI1, nil), 10_000)
	if err != nil {
		return 0, records.Err(op, err)
	}
	var projects []string
	for _, it := range rows {
		m, err := records.Decode[Mapping](op, it)
		if err != nil {
			return 0, err
		}
		if m.Active && !slices.Contains(projects, m.Project) {
			projects = append(projects, m.Project)
		}
	}
	for _, p := range projects {
		if _, err := s.WriteSnapshot(ctx, tenant, p); err != nil {
			return 0, err
		}
	}
	return len(projects), nil
}

// computeSnapshot: time to fix is opened → closed (or fixed, when still
// open), in minutes; time to first response opened → the first comment
// that is neither the author's nor a bot's.
func computeSnapshot(project string, issues []Issue, pivot, now time.Time) Snapshot {
	sn := Snapshot{Project: project, Day: now.Format("2006-01-02"), ComputedAt: now.UnixMilli()}
	var fix, response, before, after []float64
	minutes := func(from, to int64) float64 { return float64(max(to-from, 0)) / 60000 }
	for _, i := range issues {
		sn.TotalIssues++
		period := &sn.AfterVantageOS
		if i.OpenedAt < pivot.UnixMilli() {
			period = &sn.BeforeVantageOS
		}
		period.TotalIssues++
		if i.FirstResponseAt != nil {
			response = append(response, minutes(i.OpenedAt, *i.FirstResponseAt))
		} else {
			sn.NeverAnswered++
		}
		end := i.ClosedAt
		if end == nil {
			end = i.FixedAt
		}
		if end == nil || i.Status == StatusOpen || i.Status == StatusInProgress {
			continue
		}
		d := minutes(i.OpenedAt, *end)
		sn.ResolvedIssues++
		period.ResolvedIssues++
		fix = append(fix, d)
		if period == &sn.BeforeVantageOS {
			before = append(before, d)
		} else {
			after = append(after, d)
		}
	}
	sn.MedianTimeToFirstResponse = median(response)
	sn.MedianTimeToFix = median(fix)
	sn.BeforeVantageOS.MedianTimeToFix = median(before)
	sn.AfterVantageOS.MedianTimeToFix = median(after)
	if len(fix) > 0 {
		sum := 0.0
		for _, d := range fix {
			sum += d
		}
		avg, fast, slow := sum/float64(len(fix)), slices.Min(fix), slices.Max(fix)
		sn.AvgTimeToFix, sn.FastestResolution, sn.SlowestResolution = &avg, &fast, &slow
	}
	return sn
}

func median(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	s := slices.Sorted(slices.Values(xs))
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return &m
}

// MonitorPRs polls the pull request of every watched external issue (the
// hourly PR monitor): conditional requests on the stored ETag, so an
// unchanged PR costs no rate limit; a merge or a close tells the watcher.
// It returns how many changed. A PR webhook usually got there first.
func (s *Service) MonitorPRs(ctx context.Context, tenant string) (int, error) {
	const op = "pr-monitor"
	watched, err := s.watchedPRs(ctx, op, tenant)
	if err != nil {
		return 0, err
	}
	changed := 0
	var errs []error
	for _, w := range watched {
		repo, n, err := parsePRURL(w.PRURL)
		if err != nil {
			continue
		}
		pr, notModified, err := s.gh.PullRequest(ctx, tenant, repo, n, w.PRETag)
		if err != nil {
			if vp.IsKind(err, vp.KindRateLimited) {
				return changed, err // the next run goes on
			}
			errs = append(errs, err)
			continue
		}
		if notModified {
			continue
		}
		ok, err := s.setPRStatus(ctx, op, tenant, w, prStatus(pr.State, pr.Draft, pr.Merged), pr.ETag)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			changed++
		}
	}
	return changed, errors.Join(errs...)
}
