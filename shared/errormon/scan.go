package errormon

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Outbox topics of the monitor's GitHub writes.
const (
	TopicFile       = "errormon.file"       // a new group's issue
	TopicSummary    = "errormon.summary"    // a group over the hourly cap, added to the hour's summary issue
	TopicRegression = "errormon.regression" // a regressed group's issue reopened, with a comment
	TopicEscalation = "errormon.escalation" // a known group's rate jumped: one comment on its issue
)

const (
	// pageEvents: the store work of a page is per group, not per event, so
	// larger pages amortise it (the corpus scans at ~13,000 events/s with
	// pages of 500, ~48,000 with 5,000, on one loaded core); a page holds
	// at most 5,000 × source.MaxRawBytes = 40 MiB of raw records, usually
	// a few.
	pageEvents = 5000
	// groupsPerBatch keeps a batch's transaction under store.MaxTransactOps:
	// a group, its job and the job's dedup record each, and the deployment.
	groupsPerBatch = 30
	// leaseSlack is added to the scan budget for the lease.
	leaseSlack = 30 * time.Second
	maxBackoff = time.Hour
)

// ScanAll scans every active deployment of the tenant that is due (the
// error-monitor job) and returns the events read. One deployment's
// failure is recorded on it and does not stop the others.
func (s *Service) ScanAll(ctx context.Context, tenant string) (int, error) {
	const op = "error-monitor"
	rows, err := records.QueryAll(ctx, s.o.Store, Deployments.Query(tenant, store.GSI1, nil), 1000)
	if err != nil {
		return 0, records.Err(op, err)
	}
	var due []string
	for _, it := range rows {
		d, err := records.Decode[Deployment](op, it)
		if err != nil {
			return 0, err
		}
		if d.Active && d.NextScanAt <= s.nowMS() {
			due = append(due, d.Name)
		}
	}
	return s.scanConcurrently(ctx, tenant, due, s.o.ScanConcurrency)
}

// Scan reads one deployment's new error events and groups them. It takes
// the deployment's lease first: a scan that finds it held (another scan
// running) does nothing.
func (s *Service) Scan(ctx context.Context, tenant, name string) (int, error) {
	const op = "error-monitor"
	d, ok, err := s.lease(ctx, op, tenant, name)
	if err != nil || !ok {
		return 0, err
	}
	// The budget bounds the reads; a chunk read within it is still
	// committed after it (the lease outlasts the budget by leaseSlack).
	rctx, cancel := context.WithTimeout(ctx, s.o.ScanBudget)
	defer cancel()
	src := s.o.Sources[d.Source]
	target := source.Target{Tenant: tenant, Name: d.Name, DeploymentURL: d.DeploymentURL, LogGroups: d.LogGroups, FilterPattern: d.FilterPattern}
	if src == nil {
		return 0, s.failed(ctx, op, tenant, d, vp.Errorf(op, vp.KindInvalid, "source", "no %s log source is configured in this server", d.Source))
	}
	if err := s.checkLogGroups(ctx, op, tenant, d.Source, d.LogGroups); err != nil {
		return 0, s.failed(ctx, op, tenant, d, err)
	}
	if d.Source == SourceConvex {
		var held bool
		if target.Key, target.KeyOrigin, held, err = s.convexKey(ctx, op, tenant, d); err != nil || held {
			return 0, err
		}
	}
	since := s.o.Now().Add(-s.o.Backfill)
	read := 0
	r := s.newReading()
	defer func() { s.logScan(ctx, tenant, d.Name, r, read) }()
	for {
		page, err := src.Read(rctx, s.target(r, target), d.Cursor, since, pageEvents)
		if err != nil && outOfBudget(rctx, r) {
			return read, s.behind(ctx, op, tenant, d, r)
		}
		if err != nil {
			if vp.IsKind(err, vp.KindUnauthorized) && d.Source == SourceConvex {
				err = vp.Errorf(op, vp.KindUnauthorized, "deployKeyEnvVar", "%v (the key is tenant %s's %s: %s)", err, tenant, d.DeployKeyEnvVar,
					s.o.Keys.HowToSet(tenant, d.DeployKeyEnvVar, d.DeploymentURL))
			}
			return read, s.failed(ctx, op, tenant, d, err)
		}
		read += len(page.Events)
		more := s.next(rctx, r, page)
		if d, err = s.apply(ctx, op, tenant, d, page, !more, r.lag); err != nil {
			if vp.IsKind(err, vp.KindConflict) {
				return read, err // another scan holds it now
			}
			return read, s.failed(ctx, op, tenant, d, err)
		}
		if !more {
			return read, nil
		}
	}
}

// lease takes the deployment for one scan: one conditional write.
func (s *Service) lease(ctx context.Context, op, tenant, name string) (Deployment, bool, error) {
	d, it, err := Deployments.Get(ctx, s.o.Store, op, "name", name, deploymentKey(tenant, name))
	if err != nil {
		return d, false, err
	}
	now := s.nowMS()
	if !d.Active || d.LeaseUntil > now {
		return d, false, nil
	}
	d.LeaseUntil = now + (s.o.ScanBudget + leaseSlack).Milliseconds()
	next, err := Deployments.Item(op, tenant, d)
	if err != nil {
		return d, false, err
	}
	err = s.o.Store.Write(ctx, store.Put(next, store.IfVersion(it.Version)))
	if errors.Is(err, store.ErrConditionFailed) {
		return d, false, nil // another scan took it
	}
	if err != nil {
		return d, false, records.Err(op, err)
	}
	return d, true, nil
}

// failed records a source's failure on the deployment (visible in
// list_errors) and backs its next scan off exponentially.
func (s *Service) failed(ctx context.Context, op, tenant string, d Deployment, cause error) error {
	now := s.nowMS()
	back := min(time.Duration(1<<min(d.Failures, 10))*5*time.Minute/2, maxBackoff)
	if d, ok := vp.RetryAfter(cause); ok && d > back {
		back = d
	}
	_, err := s.updateDeployment(ctx, op, tenant, d.Name, func(d *Deployment) {
		d.Failures++
		d.LastError, d.LastErrorAt, d.NextScanAt, d.LeaseUntil = cause.Error(), now, now+back.Milliseconds(), 0
	})
	s.log.WarnContext(ctx, "error monitor: a source failed", "tenant", tenant, "deployment", d.Name, "err", cause.Error(), "retryIn", back)
	return errors.Join(cause, err)
}

// needsKeyRecheck is when a deployment without a key (or whose key is
// bound elsewhere) is looked at again: the next pass of the job (every 5
// minutes), since looking costs a file or Secrets Manager read and sends
// nothing to the deployment.
const needsKeyRecheck = 5 * time.Minute

// convexKey is the deploy key a Convex deployment is read with and the
// origin it is bound to. held is true when there is none it may be sent
// with (no key, a key bound to nothing, or to another URL): that is
// recorded on the deployment as its status, and nothing is sent.
func (s *Service) convexKey(ctx context.Context, op, tenant string, d Deployment) (key, origin string, held bool, err error) {
	// A name that is not a deploy key's is never looked up: an older
	// server accepted any variable of its own (VP_MASTER_TOKEN…).
	var dk DeployKey
	if ValidDeployKeyName(d.DeployKeyEnvVar) {
		if dk, err = s.o.Keys.Key(ctx, tenant, d); err != nil {
			return "", "", false, s.failed(ctx, op, tenant, d, err)
		}
	}
	if dk.Key == "" {
		return "", "", true, s.held(ctx, op, tenant, d, false, s.needsKeyText(tenant, d))
	}
	origin, how := dk.Origin()
	if origin == "" {
		return "", "", true, s.held(ctx, op, tenant, d, false, fmt.Sprintf(
			"deployment %s needs a key: tenant %s's deploy key %s is bound to no URL (stored without one, and not a prod:/dev: Convex deploy key naming its deployment), so it is never sent; %s",
			d.Name, tenant, d.DeployKeyEnvVar, s.o.Keys.HowToSet(tenant, d.DeployKeyEnvVar, d.DeploymentURL)))
	}
	// The URL the source will dial must have the key's origin: an agent
	// that names its tenant's key with a URL of its own receives nothing.
	if at, err := egress.Origin(d.DeploymentURL); err != nil || at != origin {
		return "", "", true, s.held(ctx, op, tenant, d, true, s.keyElsewhereText(tenant, d, origin, how))
	}
	return dk.Key, origin, false, nil
}

// held records that a deployment was not read for want of a key it may
// be sent with (list_errors: StatusNeedsKey or, elsewhere,
// StatusKeyElsewhere, with text saying what to do). Only its tenant can
// change that, so it is a status, not a failure of the job: the
// operator's log says it once, when it starts (or its reason changes).
func (s *Service) held(ctx context.Context, op, tenant string, d Deployment, elsewhere bool, text string) error {
	cause := vp.E(op, vp.KindUnauthorized, "deployKeyEnvVar", text)
	now := s.nowMS()
	news := d.NeedsKey == elsewhere || d.KeyElsewhere != elsewhere || d.LastError != cause.Error()
	_, err := s.updateDeployment(ctx, op, tenant, d.Name, func(d *Deployment) {
		d.NeedsKey, d.KeyElsewhere = !elsewhere, elsewhere
		d.LastError, d.LastErrorAt, d.NextScanAt, d.LeaseUntil = cause.Error(), now, now+needsKeyRecheck.Milliseconds(), 0
	})
	if news {
		level, msg := slog.LevelInfo, "error monitor: a deployment needs a key; nothing is sent until its tenant sets one"
		if elsewhere {
			// Also what an agent trying to have the key sent to itself sees.
			level, msg = slog.LevelWarn, "error monitor: a deployment's key is bound to another URL; nothing is sent"
		}
		s.log.Log(ctx, level, msg, "tenant", tenant, "deployment", d.Name, "keyName", d.DeployKeyEnvVar)
	}
	return err
}

// needsKeyText says why a deployment has no key and what to do.
func (s *Service) needsKeyText(tenant string, d Deployment) string {
	if !ValidDeployKeyName(d.DeployKeyEnvVar) {
		name := suggestKeyName(d.DeployKeyEnvVar)
		return fmt.Sprintf("deployment %s needs a key: its deployKeyEnvVar %q is not a deploy key's name (it %s), so no key is read and nothing is sent; "+
			"rename it with add_deployment (name %q, deployKeyEnvVar %q) and %s",
			d.Name, clipName(d.DeployKeyEnvVar), DeployKeyRule, d.Name, name, s.o.Keys.HowToSet(tenant, name, d.DeploymentURL))
	}
	return fmt.Sprintf("deployment %s needs a key: tenant %s's deploy key %s is not set, so nothing is sent; %s",
		d.Name, tenant, d.DeployKeyEnvVar, s.o.Keys.HowToSet(tenant, d.DeployKeyEnvVar, d.DeploymentURL))
}

// aggregate is what one batch adds to a group: its events of the page
// (their indexes, in page order), and what those not counted yet add up to.
type aggregate struct {
	fp          fingerprint.Fingerprint
	page        []source.Event
	events      []int
	count       int64
	first, last int64
	sample      source.Event
	// times (the latest, for a threshold) and hours (counts per hour):
	// triage.go.
	times []int64
	hours map[int64]int64
}

// pageKey names the page read from cursor: a digest, as a source's
// cursor may be long (CloudWatch's holds a position per log group) and
// every group counted from the page keeps it.
func pageKey(cursor string) string {
	h := sha256.Sum256([]byte(cursor))
	return hex.EncodeToString(h[:12])
}

// fold is the aggregate of the events (a fresh one: a retried batch folds
// again from the same events); its events stay the page's, all of them.
func (a *aggregate) fold(events []int, keep int) *aggregate {
	b := &aggregate{fp: a.fp, page: a.page, events: a.events, sample: a.page[events[0]]}
	b.first, b.last = b.sample.Time.UnixMilli(), b.sample.Time.UnixMilli()
	for _, i := range events {
		t := a.page[i].Time.UnixMilli()
		b.count++
		b.first, b.last = min(b.first, t), max(b.last, t)
		b.note(t, keep)
	}
	return b
}

// ownPipeline: events about the monitor itself never become issues (a
// failing scan would report itself in a loop).
func ownPipeline(e source.Event) bool {
	for _, s := range []string{e.Function, e.Message} {
		if strings.Contains(s, "error-monitor") || strings.Contains(s, "errormon.") {
			return true
		}
	}
	return false
}

// apply groups a page's events and commits the counts with the
// deployment's new cursor, in batches of groupsPerBatch groups; the
// cursor (and, when last, the lease's release) goes in the final batch.
func (s *Service) apply(ctx context.Context, op, tenant string, d Deployment, page source.Page, last bool, lag int64) (Deployment, error) {
	aggs := map[string]*aggregate{}
	var order []string
	fps, err := s.groupPage(ctx, op, tenant, d.Name, page.Events)
	if err != nil {
		return d, err
	}
	for i, fp := range fps {
		if fp.Hash == "" {
			continue // ownPipeline
		}
		id := GroupID(d.Name, fp.Hash)
		a := aggs[id]
		if a == nil {
			a = &aggregate{fp: fp, page: page.Events}
			aggs[id] = a
			order = append(order, id)
		}
		a.events = append(a.events, i)
	}
	slices.Sort(order)
	for start := 0; ; start += groupsPerBatch {
		end := min(start+groupsPerBatch, len(order))
		final := end == len(order)
		var err error
		if d, err = s.commitBatch(ctx, op, tenant, d, order[start:end], aggs, page, final, final && last, int64(len(page.Events)), lag); err != nil {
			return d, err
		}
		if final {
			return d, s.applyMerges(ctx, op, tenant, d.Name)
		}
	}
}

// commitBatch writes the groups of ids and, when final, the deployment's
// cursor and counters, in one transaction conditional on every version
// read; a lost race (a tool changed the deployment) is retried.
func (s *Service) commitBatch(ctx context.Context, op, tenant string, d Deployment, ids []string, aggs map[string]*aggregate,
	page source.Page, final, release bool, scanned, lag int64) (Deployment, error) {
	var done Deployment
	var kicks []outbox.Pending
	err := table.Conflicts{Op: op, Unmapped: true, Exhausted: func() error {
		return vp.Errorf(op, vp.KindConflict, "name", "deployment %s kept changing during its scan", d.Name)
	}}.Retry(ctx, func() error {
		cur, dit, err := Deployments.Get(ctx, s.o.Store, op, "name", d.Name, deploymentKey(tenant, d.Name))
		if err != nil {
			return err
		}
		// The page was read from d's cursor under d's lease: if either moved
		// (another scan took over after the lease ran out), these counts are
		// not ours to add.
		if cur.Cursor != d.Cursor || cur.LeaseUntil != d.LeaseUntil {
			return vp.Errorf(op, vp.KindConflict, "name", "deployment %s: the scan lost its lease; the next one reads on from the committed cursor", d.Name)
		}
		now := s.nowMS()
		if hour := now - now%3_600_000; cur.IssueHour != hour {
			cur.IssueHour, cur.IssuesHour = hour, 0
		}
		var ops []store.Op
		kicks = kicks[:0]
		for _, id := range ids {
			gops, job, err := s.groupOps(ctx, op, tenant, &cur, pageKey(d.Cursor), id, aggs[id])
			if err != nil {
				return err
			}
			ops = append(ops, gops...)
			if job != nil {
				ops = append(ops, job.Ops()...)
				kicks = append(kicks, *job)
			}
		}
		if final {
			cur.Cursor, cur.EventsScanned, cur.LastScanAt = page.Cursor, cur.EventsScanned+scanned, now
			cur.Failures, cur.LastError, cur.NextScanAt, cur.NeedsKey, cur.KeyElsewhere = 0, "", 0, false, false
			cur.LagSeconds = lag
			if release {
				cur.LeaseUntil = 0
			}
		}
		cur.UpdatedAt = now
		dnext, err := Deployments.Item(op, tenant, cur)
		if err != nil {
			return err
		}
		ops = append(ops, store.Put(dnext, store.IfVersion(dit.Version)))
		done = cur
		return records.Err(op, s.o.Store.Write(ctx, ops...))
	})
	if err != nil {
		return d, err
	}
	s.o.Jobs.Kick(kicks...)
	return done, nil
}

// groupOps returns the write of one group's new count and, for a new or
// regressed group, the job of its GitHub write; none when the group has
// counted all its events of this page already. pageFrom is the page's
// pageKey.
//
// The cursor moves only with a page's last batch, so a scan that died
// between two batches leaves the earlier batches' groups counted and the
// page to be read again from the same cursor: a group remembers the page
// it last counted from (its start cursor: cursors only move forward, so
// the same start is the same page, longer at most) and how many of its
// events it counted, and adds only the ones after those.
func (s *Service) groupOps(ctx context.Context, op, tenant string, d *Deployment, pageFrom, id string, a *aggregate) ([]store.Op, *outbox.Pending, error) {
	g, it, err := Groups.Get(ctx, s.o.Store, op, "errorId", id, groupKey(tenant, id))
	counted := int64(0)
	if err == nil && g.PageFrom == pageFrom {
		counted = g.PageCounted
	}
	if counted >= int64(len(a.events)) {
		return nil, nil, nil
	}
	keep, _ := d.threshold()
	a = a.fold(a.events[counted:], keep)
	cond := store.IfNotExists
	now := s.nowMS()
	var topic, dedup string
	switch {
	case vp.IsKind(err, vp.KindNotFound):
		e := a.sample
		g = Group{ID: id, CreationTime: now, Deployment: d.Name, Fingerprint: a.fp.Hash, Algorithm: a.fp.Version,
			Function: a.fp.Function, Type: a.fp.Type, Message: a.fp.Message, Frame: a.fp.Frame,
			Sample: e.Message, Stack: e.Stack, Raw: e.Raw, FirstSeen: a.first, LastSeen: a.last, Status: StatusPending}
		// An error known before the upgrade (fp1) keeps its issue and its
		// status, never pending: nothing is filed for it below.
		if _, err := s.continueFP1(ctx, op, tenant, &g, e); err != nil {
			return nil, nil, err
		}
	case err != nil:
		return nil, nil, err
	default:
		cond = store.IfVersion(it.Version)
		g.FirstSeen, g.LastSeen = min(g.FirstSeen, a.first), max(g.LastSeen, a.last)
		if g.Algorithm == a.fp.Version {
			g.Message = a.fp.Message // a learned template generalises
		}
		if topic, dedup, err = s.regression(ctx, tenant, d, &g, a); err != nil {
			return nil, nil, err
		}
		if g.Summarised {
			d.holdBack(g.summaryHour(), 0, a.count)
		}
	}
	g.Count += a.count
	g.PageFrom, g.PageCounted = pageFrom, int64(len(a.events))
	countHours(&g, a, now)
	if g.Status == StatusPending && reached(*d, &g, a) {
		topic, dedup = s.fileOrSummarise(d, &g, now)
	}
	if topic == "" {
		topic, dedup = s.escalate(&g, now)
	}
	g.UpdatedAt = now
	item, err := Groups.Item(op, tenant, g)
	if err != nil {
		return nil, nil, err
	}
	ops := []store.Op{store.Put(item, cond)}
	if topic == "" {
		return ops, nil, nil
	}
	gj := groupJob{GroupID: id, Regression: g.Regressions}
	if topic == TopicEscalation {
		gj.Escalation = g.Escalation.Hour
	}
	b, err := json.Marshal(gj)
	if err != nil {
		return nil, nil, vp.Wrap(op, vp.KindInternal, err)
	}
	job, err := s.o.Jobs.Enqueue(ctx, tenant, topic, dedup, b)
	if err != nil {
		return nil, nil, err
	}
	return ops, &job, nil
}

type groupJob struct {
	GroupID    string `json:"groupId"`
	Regression int    `json:"regression,omitempty"`
	Escalation int64  `json:"escalation,omitempty"` // the escalation's hour
}
