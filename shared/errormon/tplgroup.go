package errormon

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
	"github.com/vantagepeers/vantagepeers/shared/errormon/templates"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// A deployment's events are grouped by the templates learned from its
// own events (templates, version tpl1). The learner's state lives in the
// store, one item per bucket (scope and token count), so that every
// scan, wherever it runs, starts from the same templates: a page reads
// the buckets its events fall in, learns, and writes the buckets it
// changed on the condition that their versions are still those it read;
// a scan that loses that race reads them again and groups the page again
// before it counts anything. When a template generalises and takes other
// groups in, a merge record (the group taken in, the group it joins) is
// written in the same transaction as the bucket, because the learner
// keeps its merges only in memory; the records are applied to the groups
// after the page's counts (applyMerges) and deleted, so that a crash
// anywhere leaves them to the next scan.

// TemplateBucket is one stored bucket of a deployment's learned
// templates.
type TemplateBucket struct {
	Deployment string           `json:"deployment"`
	Bucket     templates.Bucket `json:"bucket"`
	UpdatedAt  int64            `json:"updatedAt"`
}

// TemplateBuckets declares the learned templates.
var TemplateBuckets = table.Declare(table.Schema[TemplateBucket]{
	Entity: "learned error templates",
	Primary: table.Key{PK: "ERRTPL#{deployment}", SK: "{version}#{scope}#{length}",
		Pattern: "a deployment's learned templates of one scope and token count",
		Note:    "version tpl1 (another version's items are never read); put conditional on the version read"},
	Fields: func(b TemplateBucket) table.Values {
		return table.Values{"deployment": b.Deployment, "version": templates.Version, "scope": b.Bucket.Scope,
			"length": fmt.Sprintf("%04d", b.Bucket.Length)}
	},
})

// groupMerge is a merge not yet applied to the groups' counts.
type groupMerge struct {
	Deployment string `json:"deployment"`
	From       string `json:"from"` // the group taken in
	Into       string `json:"into"` // the group it joins (the older)
	At         int64  `json:"at"`
}

var groupMerges = table.Declare(table.Schema[groupMerge]{
	Entity: "error group merge",
	Primary: table.Key{PK: "ERRMERGE#{deployment}", SK: "{from}", Pattern: "a deployment's group merges not yet applied",
		Note: "written with the template bucket that merged; deleted once the counts are added"},
	Fields: func(m groupMerge) table.Values { return table.Values{"deployment": m.Deployment, "from": m.From} },
})

func bucketKey(tenant, dep, scope string, length int) store.Key {
	return TemplateBuckets.Key(tenant, TemplateBucket{Deployment: dep, Bucket: templates.Bucket{Scope: scope, Length: length}})
}

type bucketRef struct {
	scope  string
	length int
}

// maxMergeChain bounds how many "merged into" links are followed.
const maxMergeChain = 16

// groupPage groups a page's events by the deployment's stored templates
// and stores what they taught. It returns, per event, the group's
// description (Hash: the tpl1 key; zero for the monitor's own events).
func (s *Service) groupPage(ctx context.Context, op, tenant, dep string, events []source.Event) ([]fingerprint.Fingerprint, error) {
	preps := make([]templates.Prepared, len(events))
	skip := make([]bool, len(events))
	need := map[bucketRef]bool{}
	for i, e := range events {
		if skip[i] = ownPipeline(e); skip[i] {
			continue
		}
		preps[i] = templates.Prepare(e)
		sc, n := preps[i].Bucket()
		need[bucketRef{sc, n}] = true
	}
	refs := make([]bucketRef, 0, len(need))
	for r := range need {
		refs = append(refs, r)
	}
	slices.SortFunc(refs, func(a, b bucketRef) int {
		if c := strings.Compare(a.scope, b.scope); c != 0 {
			return c
		}
		return a.length - b.length
	})
	var fps []fingerprint.Fingerprint
	err := table.Conflicts{Op: op, Exhausted: func() error {
		return vp.Errorf(op, vp.KindConflict, "deployment", "deployment %s: its learned templates kept changing during the scan", dep)
	}}.Retry(ctx, func() error {
		l := templates.New(templates.Options{})
		read := map[bucketRef]int64{}
		for _, r := range refs {
			b, it, err := TemplateBuckets.Get(ctx, s.o.Store, op, "deployment", dep, bucketKey(tenant, dep, r.scope, r.length))
			if vp.IsKind(err, vp.KindNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if err := l.Load(b.Bucket); err != nil {
				// A damaged item must not stop the deployment's scans: its
				// templates are learned again (groups may split, never merge).
				s.log.WarnContext(ctx, "error monitor: a stored template bucket is refused; learning it again", "tenant", tenant, "deployment", dep, "err", err.Error())
			}
			read[r] = it.Version
		}
		results := make([]templates.Result, len(events))
		var merged []string
		mergedIn := map[string]bucketRef{}
		for i := range events {
			if skip[i] {
				continue
			}
			results[i] = l.LearnPrepared(preps[i])
			for _, m := range results[i].Merged {
				sc, n := preps[i].Bucket()
				merged, mergedIn[m] = append(merged, m), bucketRef{sc, n}
			}
		}
		ok, err := s.saveTemplates(ctx, op, tenant, dep, l, read, merged, mergedIn)
		if err != nil {
			return err
		}
		if !ok {
			return store.ErrConditionFailed // another scan learned first: learn again from what it stored
		}
		// Keys as the page ends: an event learned before a merge counts in
		// the group that took its own in.
		fps = make([]fingerprint.Fingerprint, len(events))
		for i, r := range results {
			if skip[i] {
				continue
			}
			k := l.Resolve(r.Key)
			tpl := l.Template(k)
			if tpl == "" {
				tpl = r.Template // not learned (a cap): its own message
			}
			fps[i] = fingerprint.Fingerprint{Hash: k, Version: templates.Version,
				Function: r.Scope.Function, Type: r.Scope.Type, Frame: r.Scope.Frame, Message: tpl}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return fps, nil
}

// saveTemplates writes the buckets l changed, each conditional on the
// version read (0: absent), with the merge records of its merges; ok is
// false when another writer changed one first.
func (s *Service) saveTemplates(ctx context.Context, op, tenant, dep string, l *templates.Learner, read map[bucketRef]int64,
	merged []string, mergedIn map[string]bucketRef) (bool, error) {
	now := s.nowMS()
	var ops []store.Op
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		err := s.o.Store.Write(ctx, ops...)
		ops, size = ops[:0], 0
		return err
	}
	for _, b := range l.Changed() {
		r := bucketRef{b.Scope, b.Length}
		it, err := TemplateBuckets.Item(op, tenant, TemplateBucket{Deployment: dep, Bucket: b, UpdatedAt: now})
		if err != nil {
			return false, err
		}
		cond := store.IfNotExists
		if v := read[r]; v > 0 {
			cond = store.IfVersion(v)
		}
		bops := []store.Op{store.Put(it, cond)}
		bsize := len(it.Data)
		for _, m := range merged {
			if mergedIn[m] != r {
				continue
			}
			mit, err := groupMerges.Item(op, tenant, groupMerge{Deployment: dep, From: GroupID(dep, m), Into: GroupID(dep, l.Resolve(m)), At: now})
			if err != nil {
				return false, err
			}
			bops = append(bops, store.Put(mit, store.Always))
			bsize += len(mit.Data)
		}
		if len(ops)+len(bops) > store.MaxTransactOps || size+bsize > store.MaxTransactBytes/2 {
			if err := flush(); err != nil {
				return conditionLost(op, err)
			}
		}
		ops, size = append(ops, bops...), size+bsize
	}
	if err := flush(); err != nil {
		return conditionLost(op, err)
	}
	return true, nil
}

func conditionLost(op string, err error) (bool, error) {
	if errors.Is(err, store.ErrConditionFailed) {
		return false, nil
	}
	return false, records.Err(op, err)
}

// applyMerges adds the counts of the groups taken in by a merge to the
// group they joined, and marks them merged. Each record is applied at
// most once (a group already marked is not counted again) and deleted.
func (s *Service) applyMerges(ctx context.Context, op, tenant, dep string) error {
	rows, err := records.QueryAll(ctx, s.o.Store, groupMerges.Query(tenant, store.Primary, table.Values{"deployment": dep}), 1000)
	if err != nil {
		return records.Err(op, err)
	}
	for _, it := range rows {
		m, err := records.Decode[groupMerge](op, it)
		if err != nil {
			return err
		}
		if err := table.Retry(ctx, op, "errorId", m.From, func() error { return s.mergeGroup(ctx, op, tenant, m) }); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) mergeGroup(ctx context.Context, op, tenant string, m groupMerge) error {
	done := store.Delete(groupMerges.Key(tenant, m), store.Always)
	from, fit, err := Groups.Get(ctx, s.o.Store, op, "errorId", m.From, groupKey(tenant, m.From))
	if vp.IsKind(err, vp.KindNotFound) {
		return s.o.Store.Write(ctx, done) // a template learned and taken in before it was ever counted
	}
	if err != nil {
		return err
	}
	if from.MergedInto != "" {
		return s.o.Store.Write(ctx, done)
	}
	into, iit, err := s.survivor(ctx, op, tenant, m.Into)
	if vp.IsKind(err, vp.KindNotFound) {
		// Its counts are not committed yet (a crash between the templates
		// and the counts): the record waits for the next scan.
		s.log.WarnContext(ctx, "error monitor: a merge waits for its group", "tenant", tenant, "from", m.From, "into", m.Into)
		return nil
	}
	if err != nil {
		return err
	}
	if into.ID == from.ID {
		return s.o.Store.Write(ctx, done)
	}
	now := s.nowMS()
	into.Count += from.Count
	into.FirstSeen, into.LastSeen = min(into.FirstSeen, from.FirstSeen), max(into.LastSeen, from.LastSeen)
	if into.IssueNumber == 0 && from.IssueNumber > 0 {
		// The group taken in was filed first (its job ran before the older
		// group's): its issue becomes the group's, and none is filed again.
		into.IssueRepo, into.IssueNumber, into.IssueURL, into.IssueFrom = from.IssueRepo, from.IssueNumber, from.IssueURL, from.ID
		into.Summarised = from.Summarised
		if into.Status == StatusNew {
			into.Status = StatusOngoing
		}
	}
	into.UpdatedAt = now
	from.MergedInto, from.UpdatedAt = into.ID, now
	fitem, err := Groups.Item(op, tenant, from)
	if err != nil {
		return err
	}
	iitem, err := Groups.Item(op, tenant, into)
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "error monitor: groups merged", "tenant", tenant, "deployment", m.Deployment, "from", from.ID, "into", into.ID, "count", into.Count)
	return s.o.Store.Write(ctx, store.Put(fitem, store.IfVersion(fit.Version)), store.Put(iitem, store.IfVersion(iit.Version)), done)
}

// survivor reads the group id stands for now, following "merged into".
func (s *Service) survivor(ctx context.Context, op, tenant, id string) (Group, store.Item, error) {
	for range maxMergeChain {
		g, it, err := Groups.Get(ctx, s.o.Store, op, "errorId", id, groupKey(tenant, id))
		if err != nil || g.MergedInto == "" {
			return g, it, err
		}
		id = g.MergedInto
	}
	return Group{}, store.Item{}, vp.Errorf(op, vp.KindInternal, "errorId", "group %s: more than %d merges in a chain", id, maxMergeChain)
}

// nothingToFile: a group taken in by another, or one that took the issue
// of a group it took in, files no issue of its own.
func nothingToFile(g Group) bool { return g.MergedInto != "" || g.IssueFrom != "" && g.IssueNumber > 0 }

// continueFP1 lets a new tpl1 group carry on the issue of the group the
// monitor kept for the same event before tpl1 (fp1): on upgrade, a known
// error is not filed again. The fp1 group is looked up by the event's
// own fp1 id, never compared with a tpl1 key, and stays as it was.
func (s *Service) continueFP1(ctx context.Context, op, tenant string, g *Group, sample source.Event) (bool, error) {
	if g.Algorithm != templates.Version {
		return false, nil
	}
	id := GroupID(g.Deployment, fingerprint.Of(sample).Hash)
	prev, _, err := Groups.Get(ctx, s.o.Store, op, "errorId", id, groupKey(tenant, id))
	if vp.IsKind(err, vp.KindNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if prev.Algorithm != fingerprint.Version || prev.IssueNumber < 1 {
		return false, nil
	}
	g.IssueRepo, g.IssueNumber, g.IssueURL, g.IssueFrom, g.Summarised = prev.IssueRepo, prev.IssueNumber, prev.IssueURL, prev.ID, prev.Summarised
	g.Status = prev.Status
	if g.Status == StatusNew {
		g.Status = StatusOngoing
	}
	return true, nil
}

// maxStoredBuckets bounds what is read of one deployment's templates.
const maxStoredBuckets = 100_000

// StoredLearner is a learner that starts from the templates the monitor
// stored for deployment name of tenant (`vantagepeers errors group
// --deployment`): what a scan would match new lines against.
func StoredLearner(ctx context.Context, st store.Store, tenant, name string) (*templates.Learner, error) {
	const op = "errors group"
	if _, _, err := Deployments.Get(ctx, st, op, "deployment", name, Deployments.KeyOf(tenant, table.Values{"name": name})); err != nil {
		return nil, err
	}
	q := TemplateBuckets.Query(tenant, store.Primary, table.Values{"deployment": name})
	q.SKPrefix = templates.Version + "#" // another version's templates are never read
	rows, err := records.QueryAll(ctx, st, q, maxStoredBuckets)
	if err != nil {
		return nil, records.Err(op, err)
	}
	stt := templates.State{Version: templates.Version}
	for _, it := range rows {
		b, err := records.Decode[TemplateBucket](op, it)
		if err != nil {
			return nil, err
		}
		stt.Buckets = append(stt.Buckets, b.Bucket)
	}
	return templates.Restore(templates.Options{}, stt)
}
