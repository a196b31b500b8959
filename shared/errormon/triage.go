package errormon

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/ghmd"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Triage: what Sentry's users ask of it most. An error is filed only once
// it occurred often enough (minOccurrences within windowMinutes); a fixed
// issue is reopened only by occurrences after its fix (never by events
// ingested late with older timestamps); what the hourly cap held back is
// counted where people look; a known error whose rate jumps is flagged
// once on its issue.

// Limits of add_deployment's triage fields (the MCP tool advertises them).
const (
	MaxMinOccurrences    = 1000
	DefaultWindowMinutes = 60
	MaxWindowMinutes     = 7 * 24 * 60
)

// StatusPending is the status of a group below its deployment's
// threshold: tracked and listed, not filed.
const StatusPending = "pending"

const (
	hourMS = 3_600_000
	// heldBackHours is how many hours of held-back counts a deployment
	// keeps (list_errors shows them).
	heldBackHours = 48
	// trailingHours is the history an escalation compares an hour with.
	trailingHours = 24
	// escalationFactor and EscalationMinCount: an hour escalates when it
	// has at least EscalationMinCount occurrences and escalationFactor
	// times the trailing hours' median (0→1 is not an escalation).
	escalationFactor   = 10
	EscalationMinCount = 10
)

// HeldBack is what the hourly cap of new issues kept from being filed in
// an hour (the summary issue's hour): groups, and their occurrences.
type HeldBack struct {
	Hour   int64 `json:"hour"` // ms, the hour's start
	Groups int   `json:"groups"`
	Events int64 `json:"events"`
}

// HourCount is a group's occurrences in one hour (by event time).
type HourCount struct {
	Hour  int64 `json:"hour"`
	Count int64 `json:"count"`
}

// Escalation is a known group's jump in rate: Count occurrences in Hour
// against a trailing hourly Median.
type Escalation struct {
	Hour   int64   `json:"hour"`
	Count  int64   `json:"count"`
	Median float64 `json:"median"`
}

// checkTriage validates and defaults the triage fields of in.
func (in *DeploymentInput) checkTriage(op string, now int64) vp.Errs {
	lim := in.Limits()
	var errs vp.Errs
	switch maxOcc := int(lim.MinOccurrences.Max); {
	case in.MinOccurrences < 0:
		errs.Add(vp.Errorf(op, vp.KindInvalid, "minOccurrences", "must be between 1 and %d (0: the default, 1), got %d", maxOcc, in.MinOccurrences))
	case in.MinOccurrences > maxOcc:
		errs.Add(vp.Errorf(op, vp.KindTooLarge, "minOccurrences", "is %d; the limit is %d", in.MinOccurrences, maxOcc))
	case in.MinOccurrences == 0:
		in.MinOccurrences = 1
	}
	switch maxWin := int(lim.WindowMinutes.Max); {
	case in.WindowMinutes < 0:
		errs.Add(vp.Errorf(op, vp.KindInvalid, "windowMinutes", "must be between 1 and %d (0: the default, %d), got %d", maxWin, DefaultWindowMinutes, in.WindowMinutes))
	case in.WindowMinutes > maxWin:
		errs.Add(vp.Errorf(op, vp.KindTooLarge, "windowMinutes", "is %d; the limit is %d (7 days)", in.WindowMinutes, maxWin))
	case in.WindowMinutes == 0:
		in.WindowMinutes = DefaultWindowMinutes
	}
	if in.DeployedAt < 0 || in.DeployedAt > now+clockSkew.Milliseconds() {
		errs.Add(vp.Errorf(op, vp.KindInvalid, "deployedAt", "must be a past time in Unix milliseconds (0: not told), got %d", in.DeployedAt))
	}
	return errs
}

// threshold returns how many occurrences within how long a deployment
// files an issue at (deployments stored before triage: 1, at once).
func (d Deployment) threshold() (int, int64) {
	return max(d.MinOccurrences, 1), int64(cmp.Or(d.WindowMinutes, DefaultWindowMinutes)) * 60_000
}

// note adds one occurrence's time to a batch's aggregate: the most recent
// keep times (the threshold's window) and the count per hour.
func (a *aggregate) note(t int64, keep int) {
	if a.hours == nil {
		a.hours = map[int64]int64{}
	}
	a.hours[t-t%hourMS]++
	if keep > 1 {
		a.times = append(a.times, t)
		if len(a.times) > 2*keep {
			a.times = latest(a.times, keep)
		}
	}
}

// latest returns the keep latest of times, sorted.
func latest(times []int64, keep int) []int64 {
	slices.Sort(times)
	if len(times) > keep {
		times = slices.Clone(times[len(times)-keep:])
	}
	return times
}

// reached adds a batch's occurrence times to a pending group and says
// whether the group now has minOccurrences of them within the window
// (events' own times: a late batch counts where its events belong).
func reached(d Deployment, g *Group, a *aggregate) bool {
	n, window := d.threshold()
	if n <= 1 {
		g.Recent = nil
		return true
	}
	g.Recent = latest(append(g.Recent, a.times...), n)
	for k := n - 1; k < len(g.Recent); k++ {
		if g.Recent[k]-g.Recent[k-n+1] <= window {
			g.Recent = nil
			return true
		}
	}
	return false
}

// fileOrSummarise files a group that reached its threshold: its own issue
// while the deployment's hourly cap allows, else the hour's summary
// (counted as held back).
func (s *Service) fileOrSummarise(d *Deployment, g *Group, now int64) (string, string) {
	g.Status = StatusNew
	if n, _ := d.threshold(); n > 1 {
		g.FiledAt = now
	}
	if d.IssuesHour < s.o.IssuesPerHour {
		d.IssuesHour++
		return TopicFile, "file:" + g.ID
	}
	g.Summarised = true
	d.holdBack(g.summaryHour(), 1, g.Count)
	return TopicSummary, "summary:" + g.ID
}

// summaryHour is the hour whose summary lists a group over the cap: its
// first occurrence's, or, for a group held pending, the hour it reached
// its threshold (not a summary of days ago).
func (g Group) summaryHour() int64 {
	at := cmp.Or(g.FiledAt, g.FirstSeen)
	return at - at%hourMS
}

// holdBack counts groups and events the cap kept from being filed in the
// hour of at, keeping the last heldBackHours hours.
func (d *Deployment) holdBack(at int64, groups int, events int64) {
	hour := at - at%hourMS
	k := slices.IndexFunc(d.HeldBack, func(h HeldBack) bool { return h.Hour == hour })
	if k < 0 {
		d.HeldBack = append(d.HeldBack, HeldBack{Hour: hour})
		slices.SortFunc(d.HeldBack, func(a, b HeldBack) int { return cmp.Compare(a.Hour, b.Hour) })
		k = slices.IndexFunc(d.HeldBack, func(h HeldBack) bool { return h.Hour == hour })
	}
	d.HeldBack[k].Groups += groups
	d.HeldBack[k].Events += events
	if len(d.HeldBack) > heldBackHours {
		d.HeldBack = slices.Clone(d.HeldBack[len(d.HeldBack)-heldBackHours:])
	}
}

// heldBackIn is what the cap held back in the hour starting at hour.
func (d Deployment) heldBackIn(hour int64) HeldBack {
	for _, h := range d.HeldBack {
		if h.Hour == hour {
			return h
		}
	}
	return HeldBack{Hour: hour}
}

// regression decides whether a known group's batch reopens its fixed or
// closed issue: only occurrences timestamped after the fix (or, when the
// deployment told a later deploy time, after that deploy) count. Older
// ones, ingested late, are counted without reopening anything, so an
// issue never flaps on them.
func (s *Service) regression(ctx context.Context, tenant string, d *Deployment, g *Group, a *aggregate) (string, string, error) {
	if g.IssueNumber < 1 || (g.Status != StatusOngoing && g.Status != StatusResolved) {
		return "", "", nil
	}
	st, at, err := s.o.Issues.Resolution(ctx, tenant, g.IssueRepo, g.IssueNumber)
	if err != nil {
		return "", "", err
	}
	if st != "fixed" && st != "verified" && st != "closed" {
		if g.Status == StatusResolved {
			g.Status, g.ResolvedAt = StatusOngoing, 0 // reopened by someone
		}
		return "", "", nil
	}
	cutoff := at
	if d.DeployedAt > cutoff {
		cutoff = d.DeployedAt
	}
	if a.last <= cutoff {
		g.Status, g.ResolvedAt = StatusResolved, cutoff
		return "", "", nil
	}
	g.Status, g.Regressions, g.ResolvedAt = StatusRegressed, g.Regressions+1, cutoff
	return TopicRegression, fmt.Sprintf("regression:%s:%d", g.ID, g.Regressions), nil
}

// countHours adds a batch's per-hour counts to the group's trailing
// hours (by event time; hours older than the trailing window are dropped).
func countHours(g *Group, a *aggregate, now int64) {
	from := now - now%hourMS - trailingHours*hourMS
	for h, n := range a.hours {
		if h < from {
			continue
		}
		k := slices.IndexFunc(g.Hourly, func(c HourCount) bool { return c.Hour == h })
		if k < 0 {
			g.Hourly = append(g.Hourly, HourCount{Hour: h})
			k = len(g.Hourly) - 1
		}
		g.Hourly[k].Count += n
	}
	g.Hourly = slices.DeleteFunc(g.Hourly, func(c HourCount) bool { return c.Hour < from })
	slices.SortFunc(g.Hourly, func(a, b HourCount) int { return cmp.Compare(a.Hour, b.Hour) })
}

// escalate flags a known group whose current hour has jumped to
// escalationFactor times its trailing hourly median (hours without an
// occurrence count as 0) and at least EscalationMinCount: at most once per
// trailing window, so a sustained jump is one comment, not one an hour.
func (s *Service) escalate(g *Group, now int64) (string, string) {
	hour := now - now%hourMS
	known := g.IssueNumber > 0 && !g.Summarised && g.FirstSeen < hour && g.Status != StatusPending
	if !known || (g.Escalation != nil && g.Escalation.Hour > hour-trailingHours*hourMS) {
		return "", ""
	}
	var cur int64
	past := make([]int64, trailingHours)
	for _, c := range g.Hourly {
		switch k := (hour - c.Hour) / hourMS; {
		case k == 0:
			cur = c.Count
		case k >= 1 && k <= trailingHours:
			past[k-1] = c.Count
		}
	}
	slices.Sort(past)
	median := float64(past[trailingHours/2-1]+past[trailingHours/2]) / 2
	if cur < EscalationMinCount || float64(cur) < escalationFactor*median {
		return "", ""
	}
	g.Escalation = &Escalation{Hour: hour, Count: cur, Median: median}
	return TopicEscalation, fmt.Sprintf("escalation:%s:%d", g.ID, hour)
}

// Escalated is list_errors' flag: the group escalated within the trailing
// window.
func (g Group) escalated(now int64) bool {
	return g.Escalation != nil && g.Escalation.Hour > now-now%hourMS-trailingHours*hourMS
}

// EscalationJob says on a group's issue, once per escalation, that its
// rate jumped. CommentOnce finds the comment by marker before posting, so
// a rerun after a crash between GitHub's answer and the job's removal
// posts nothing twice.
func (s *Service) EscalationJob(ctx context.Context, j outbox.Job) error {
	const op = "errormon.escalation"
	gj, g, d, err := s.jobGroup(ctx, op, j)
	if err != nil {
		return ignoreGone(err)
	}
	if g.IssueNumber < 1 || g.Escalation == nil || g.Escalation.Hour != gj.Escalation {
		return nil // superseded: a later escalation posts its own
	}
	marker := fmt.Sprintf("<!-- vantagepeers:escalation:%s:%d -->", g.ID, gj.Escalation)
	if err := s.o.GitHub.CommentOnce(ctx, j.Tenant, g.IssueRepo, g.IssueNumber, marker, escalationBody(g, d, marker), j.EnqueuedAt.Add(-clockSkew)); err != nil {
		return githubErr(err)
	}
	return nil
}

// escalationBody is composed by the bot; the one value from the tenant,
// the deployment's name, goes through ghmd.
func escalationBody(g Group, d Deployment, marker string) string {
	e := g.Escalation
	return fmt.Sprintf("Escalating: this error occurred %d times in the hour from %s UTC in %s, against a median of %.1f an hour over the %d hours before (%d occurrences in all).\n\n%s",
		e.Count, time.UnixMilli(e.Hour).UTC().Format("2006-01-02 15:04"), ghmd.Inline(d.Name, maxNameChars), e.Median, trailingHours, g.Count, marker)
}
