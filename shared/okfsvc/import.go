package okfsvc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Import modes.
const (
	ModeDryRun  = "dry-run"
	ModeMerge   = "merge"
	ModeReplace = "replace"
)

// Modes lists the import modes, the default first.
var Modes = []string{ModeDryRun, ModeMerge, ModeReplace}

// ImportResult reports an import (or, in dry-run, what it would do).
type ImportResult struct {
	Mode      string         `json:"mode"`
	Namespace string         `json:"namespace"`
	Foreign   bool           `json:"foreign,omitempty"`
	Created   map[string]int `json:"created"`
	Updated   map[string]int `json:"updated"`
	Skipped   map[string]int `json:"skipped"`
	// Deleted counts what replace removed from the namespace.
	Deleted map[string]int `json:"deleted,omitempty"`
	// IDMap maps each source id to its id in the target namespace.
	IDMap    map[string]string `json:"idMap"`
	Warnings []string          `json:"warnings,omitempty"`
	// ResumedReplace: an interrupted replace of the namespace was finished
	// first (dry-run: one is pending).
	ResumedReplace bool `json:"resumedReplace,omitempty"`
	// Reauthored maps each author named in the bundle whom the token may
	// not act as to who authors their records instead (see authorship).
	Reauthored map[string]string `json:"reauthored,omitempty"`
}

const (
	actCreate = "create"
	actUpdate = "update"
	actSkip   = "skip"
)

// unit is one entity to import, already remapped.
type unit struct {
	kind, srcID, digest, action string
	memory                      *vp.Memory
	note                        *vp.BriefingNote
	task                        *vp.Task
	// authors holds, by field, the bundle's authors the import replaced
	// (kept in the provenance record).
	authors map[string]string
}

func (u unit) id() string {
	switch {
	case u.memory != nil:
		return u.memory.ID
	case u.note != nil:
		return u.note.ID
	default:
		return u.task.ID
	}
}

// source is a bundle's entities with their origin.
type source struct {
	origin, namespace string
	memories          []vp.Memory
	notes             []vp.BriefingNote
	tasks             []vp.Task
	foreign           bool
	// authors are the authors a foreign bundle's concepts name, by id.
	authors map[string]string
}

// Import imports a bundle into namespace target, read with the Service's
// limits (those of a file).
func (s *Service) Import(ctx context.Context, p vp.Principal, target, mode string, data []byte) (ImportResult, error) {
	return s.ImportReceived(ctx, p, target, mode, Received{Data: data, Limits: s.lim})
}

// ImportReceived imports a bundle as received (with the limits of its
// transport) into namespace target.
func (s *Service) ImportReceived(ctx context.Context, p vp.Principal, target, mode string, in Received) (ImportResult, error) {
	const op = "import_okf_bundle"
	tenant, err := vp.TenantOf(op, p)
	if err != nil {
		return ImportResult{}, err
	}
	if mode == "" {
		mode = ModeDryRun
	}
	if err := vp.CheckEnum(op, "mode", mode, Modes, true); err != nil {
		return ImportResult{}, err
	}
	if err := vp.CheckNamespace(op, "namespace", target, true); err != nil {
		return ImportResult{}, err
	}
	if err := p.MayWrite(op, "namespace", target); err != nil {
		return ImportResult{}, err
	}
	// The import holds the bundle and a remapped copy of its records until
	// it ends.
	b, release, err := s.read(ctx, op, in, true)
	if err != nil {
		return ImportResult{}, err
	}
	defer release()
	src := s.sourceOf(p, b)
	res := ImportResult{Mode: mode, Namespace: target, Foreign: src.foreign, Created: counts(), Updated: counts(), Skipped: counts(), IDMap: map[string]string{}}

	if j, ok, err := s.pending(ctx, op, tenant, target); err != nil {
		return ImportResult{}, err
	} else if ok {
		res.ResumedReplace = true
		if mode != ModeDryRun {
			if _, err := s.applyReplace(ctx, op, tenant, j); err != nil {
				return ImportResult{}, err
			}
		}
	}
	units, err := s.plan(ctx, op, tenant, p, src, target, mode, &res)
	if err != nil {
		return ImportResult{}, err
	}
	a := authorship{op: op, p: p}
	if err := a.attribute(units, src.authors, &res); err != nil {
		return ImportResult{}, err
	}
	if err := s.check(op, tenant, units); err != nil {
		return ImportResult{}, err
	}
	for _, u := range units {
		res.IDMap[u.srcID] = u.id()
		switch u.action {
		case actCreate:
			res.Created[u.kind]++
		case actUpdate:
			res.Updated[u.kind]++
		default:
			res.Skipped[u.kind]++
		}
	}
	switch mode {
	case ModeReplace:
		if res.Deleted, err = s.replace(ctx, op, tenant, target, src.origin, units); err != nil {
			return ImportResult{}, err
		}
	case ModeMerge:
		for _, u := range units {
			if err := s.writeUnit(ctx, op, tenant, target, src.origin, u); err != nil {
				return ImportResult{}, err
			}
		}
	}
	return res, nil
}

func counts() map[string]int {
	return map[string]int{okf.KindMemory: 0, okf.KindBriefing: 0, okf.KindTask: 0}
}

// sourceOf turns a bundle into entities. A foreign bundle's concepts
// become memories: type from the front matter (okf.ForeignMemoryType),
// the title as a heading, the body as content, its path as source id.
func (s *Service) sourceOf(p vp.Principal, b *okf.Bundle) source {
	if !b.Foreign() {
		m := b.Manifest
		return source{origin: m.Origin, namespace: m.Namespace, memories: b.Memories, notes: b.Notes, tasks: b.Tasks}
	}
	who := p.DefaultOrchestrator()
	if who == "" {
		who = "okf-import"
	}
	now := s.now().UnixMilli()
	src := source{origin: "foreign", foreign: true, authors: map[string]string{}}
	for _, d := range b.Docs {
		content := strings.TrimSpace(d.Body)
		if d.Title != "" && content != d.Title {
			content = "# " + d.Title + "\n\n" + content
		}
		h := sha256.Sum256([]byte(d.Path))
		id := "doc_" + hex.EncodeToString(h[:12])
		if a := d.Meta["author"]; a != "" {
			src.authors[id] = a
		}
		src.memories = append(src.memories, vp.Memory{ID: id, CreationTime: now, Type: okf.ForeignMemoryType(d.Type),
			Content: content, CreatedBy: who, IsLatest: d.Meta["status"] != "deprecated", UpdatedAt: now})
	}
	return src
}

func digestOf(v any) string {
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// plan decides, entity by entity, what an import does, and remaps ids and
// references. Every mode reuses the id an entity got from an earlier
// import of the same origin (provenance), so ids are stable across
// imports; the others get new ids.
func (s *Service) plan(ctx context.Context, op, tenant string, p vp.Principal, src source, target, mode string, res *ImportResult) ([]unit, error) {
	prov := map[string]provenance{}
	q := provenances.Query(tenant, store.Primary, table.Values{"ns": target})
	q.SKPrefix = src.origin + "#"
	ps, err := queryAll[provenance](ctx, s.st, op, q)
	if err != nil {
		return nil, err
	}
	for _, pr := range ps {
		prov[pr.Kind+"#"+pr.SourceID] = pr
	}
	idMap := map[string]string{}
	decide := func(kind, srcID, digest, prefix string, exists func(id string) (bool, error)) (string, string, error) {
		if pr, ok := prov[kind+"#"+srcID]; ok {
			live, err := exists(pr.NewID)
			if err != nil {
				return "", "", err
			}
			if live {
				idMap[srcID] = pr.NewID
				// merge keeps an entity whose source did not change (and
				// any local edit of it); replace rewrites it, with its id.
				if pr.Digest == digest && mode != ModeReplace {
					return pr.NewID, actSkip, nil
				}
				return pr.NewID, actUpdate, nil
			}
		}
		id := s.ids.New(prefix)
		idMap[srcID] = id
		return id, actCreate, nil
	}
	var units []unit
	for _, m := range src.memories {
		d := digestOf(m)
		if src.foreign { // its times are the import's: not part of what changed
			st := m
			st.CreationTime, st.UpdatedAt = 0, 0
			d = digestOf(st)
		}
		id, act, err := decide(okf.KindMemory, m.ID, d, "mem", func(id string) (bool, error) { return s.mem.MemoryExists(ctx, op, tenant, id) })
		if err != nil {
			return nil, err
		}
		c := m
		c.ID = id
		units = append(units, unit{kind: okf.KindMemory, srcID: m.ID, digest: d, action: act, memory: &c})
	}
	for _, n := range src.notes {
		d := digestOf(n)
		id, act, err := decide(okf.KindBriefing, n.ID, d, "brf", func(id string) (bool, error) {
			return exists(ctx, s.st, op, briefing.Notes.KeyOf(tenant, table.Values{"id": id}))
		})
		if err != nil {
			return nil, err
		}
		c := n
		c.ID = id
		units = append(units, unit{kind: okf.KindBriefing, srcID: n.ID, digest: d, action: act, note: &c})
	}
	for _, t := range src.tasks {
		d := digestOf(t)
		id, act, err := decide(okf.KindTask, t.ID, d, "tsk", func(id string) (bool, error) { return exists(ctx, s.st, op, task.Key(tenant, id)) })
		if err != nil {
			return nil, err
		}
		c := t
		c.ID = id
		units = append(units, unit{kind: okf.KindTask, srcID: t.ID, digest: d, action: act, task: &c})
	}
	// References: to an entity of the bundle → its new id; to one outside
	// it that the tenant has → kept; else dropped, with a warning.
	warn := func(f string, a ...any) { res.Warnings = append(res.Warnings, fmt.Sprintf(f, a...)) }
	outside := func(kind, id string) (bool, error) {
		if kind == okf.KindTask {
			return exists(ctx, s.st, op, task.Key(tenant, id))
		}
		return s.mem.MemoryExists(ctx, op, tenant, id)
	}
	remap := func(kind, from, field string, ids []string) ([]string, error) {
		var out []string
		for _, id := range ids {
			if n, ok := idMap[id]; ok {
				out = append(out, n)
				continue
			}
			ok, err := outside(kind, id)
			if err != nil {
				return nil, err
			}
			if ok {
				out = append(out, id)
			} else {
				warn("%s %s: %s %q is neither in the bundle nor in this tenant; dropped", kind, from, field, id)
			}
		}
		return out, nil
	}
	for _, u := range units {
		var err error
		switch {
		case u.memory != nil:
			m := u.memory
			m.Namespace, m.Embedder = target, ""
			var rels []vp.Relation
			for _, r := range m.Relations {
				got, err := remap(okf.KindMemory, u.srcID, "relation target", []string{r.TargetID})
				if err != nil {
					return nil, err
				}
				if len(got) == 1 {
					rels = append(rels, vp.Relation{Type: r.Type, TargetID: got[0]})
				}
			}
			m.Relations = rels
			if m.SupersededBy != "" {
				n, ok := idMap[m.SupersededBy]
				if !ok {
					warn("memory %s: supersededBy %q is not in the bundle; cleared (the memory stays superseded)", u.srcID, m.SupersededBy)
				}
				m.SupersededBy = n
			}
		case u.note != nil:
			n := u.note
			if n.Topic == src.namespace || src.namespace == "" {
				n.Topic = target
			}
			if n.LinkedMemoryIDs, err = remap(okf.KindMemory, u.srcID, "linked memory", n.LinkedMemoryIDs); err != nil {
				return nil, err
			}
		default:
			t := u.task
			if t.Project == src.namespace || src.namespace == "" {
				t.Project = target
			}
			if t.DependsOn, err = remap(okf.KindTask, u.srcID, "dependsOn", t.DependsOn); err != nil {
				return nil, err
			}
			// Who waits on a task is derived from the dependents' dependsOn:
			// keep the bundle's own tasks, renamed; another entry would be
			// a claim about tasks this import does not write.
			var waiters []string
			for _, w := range t.WaitedOnBy {
				if n, ok := idMap[w]; ok {
					waiters = append(waiters, n)
				}
			}
			t.WaitedOnBy = waiters
			if t.MissionID != "" {
				warn("task %s: missionId %q is not carried by bundles; cleared", u.srcID, t.MissionID)
				t.MissionID = ""
			}
		}
	}
	return units, nil
}

func exists(ctx context.Context, st store.Store, op string, k store.Key) (bool, error) {
	_, err := st.Get(ctx, k)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	}
	return false, records.Err(op, err)
}

// writeUnit writes one entity with its provenance in one transaction.
// Skipped units write nothing.
func (s *Service) writeUnit(ctx context.Context, op, tenant, ns, orig string, u unit) error {
	if u.action == actSkip {
		return nil
	}
	cond := store.IfNotExists
	if u.action == actUpdate {
		cond = store.Always
	}
	return s.put(ctx, op, tenant, ns, orig, u, cond)
}

// put writes u under cond with its provenance.
func (s *Service) put(ctx context.Context, op, tenant, ns, orig string, u unit, cond store.Cond) error {
	provOp, err := s.provenanceOp(op, tenant, ns, orig, u)
	if err != nil {
		return err
	}
	switch {
	case u.memory != nil:
		return s.mem.ImportMemory(ctx, op, tenant, *u.memory, cond, provOp)
	case u.note != nil:
		it, err := noteItem(op, tenant, u)
		if err != nil {
			return err
		}
		ix, err := s.search.Prepare(ctx, tenant, briefing.Kind, u.note.ID)
		if err != nil {
			return err
		}
		if err := s.st.Write(ctx, append([]store.Op{store.Put(it, cond), provOp}, ix.Ops()...)...); err != nil {
			return records.Err(op, err)
		}
		s.search.Done(ctx, op, ix, briefing.Doc(tenant, *u.note))
		return nil
	default:
		t, it, err := s.taskItem(op, tenant, u)
		if err != nil {
			return err
		}
		ix, err := s.tasks.Creating(ctx, tenant, t)
		if err != nil {
			return err
		}
		if err := s.st.Write(ctx, append([]store.Op{store.Put(it, cond), provOp}, ix.Ops()...)...); err != nil {
			return records.Err(op, err)
		}
		s.tasks.Created(ctx, op, tenant, ix, t)
		return nil
	}
}

// provenanceOp is the write of u's provenance record.
func (s *Service) provenanceOp(op, tenant, ns, orig string, u unit) (store.Op, error) {
	pi, err := provenances.Item(op, tenant, provenance{Namespace: ns, Origin: orig, Kind: u.kind, SourceID: u.srcID,
		NewID: u.id(), Digest: u.digest, Authors: u.authors, ImportedAt: s.now().UnixMilli()})
	return store.Put(pi, store.Always), err
}

// noteItem is the stored item of briefing note unit u.
func noteItem(op, tenant string, u unit) (store.Item, error) {
	if err := checkNote(op, u.srcID, *u.note); err != nil {
		return store.Item{}, err
	}
	return briefing.Notes.Item(op, tenant, *u.note)
}

// taskItem is the task of unit u as stored, with its item.
func (s *Service) taskItem(op, tenant string, u unit) (vp.Task, store.Item, error) {
	t, _, err := s.tasks.Build(op, tenant, *u.task, u.task.CreationTime)
	if err != nil {
		return vp.Task{}, store.Item{}, vp.Errorf(op, vp.KindInvalid, "bundle", "task %s: %v", u.srcID, err)
	}
	t.UpdatedAt = u.task.UpdatedAt // Build stamps both times; keep the bundle's
	it, err := task.Table.Item(op, tenant, t)
	return t, it, err
}

func checkNote(op, src string, n vp.BriefingNote) error {
	var errs vp.Errs
	errs.Add(vp.CheckText(op, "title", n.Title, vp.MaxShortTextBytes, true))
	errs.Add(vp.CheckText(op, "content", n.Content, vp.MaxBriefingContentBytes, true))
	errs.Add(vp.CheckKeyText(op, "topic", n.Topic, vp.MaxShortTextBytes, true))
	if err := errs.First(); err != nil {
		return vp.Errorf(op, vp.KindInvalid, "bundle", "briefing note %s: %v", src, err)
	}
	if len(n.LinkedMemoryIDs) > vp.MaxBriefingListItems || slices.Contains(n.LinkedMemoryIDs, "") {
		return vp.Errorf(op, vp.KindInvalid, "bundle", "briefing note %s: linkedMemoryIds has %d entries; the limit is %d", src, len(n.LinkedMemoryIDs), vp.MaxBriefingListItems)
	}
	return nil
}

// check validates every entity before anything is written, so that a
// bundle with one bad record imports nothing (and dry-run reports it).
func (s *Service) check(op, tenant string, units []unit) error {
	for _, u := range units {
		var err error
		switch {
		case u.memory != nil:
			m := u.memory
			var errs vp.Errs
			if !slices.Contains(vp.MemoryTypes, m.Type) {
				errs.Add(vp.Errorf(op, vp.KindInvalid, "type", "%q is not a memory type", m.Type))
			}
			errs.Add(vp.CheckText(op, "content", m.Content, vp.MaxMemoryContentBytes, true))
			errs.Add(vp.CheckName(op, "createdBy", m.CreatedBy, true))
			if len(m.Relations) > vp.MaxRelations {
				errs.Add(vp.Errorf(op, vp.KindTooLarge, "relations", "has %d entries; the limit is %d", len(m.Relations), vp.MaxRelations))
			}
			if e := errs.First(); e != nil {
				err = vp.Errorf(op, vp.KindOf(e), "bundle", "memory %s: %v", u.srcID, e)
			}
		case u.note != nil:
			err = checkNote(op, u.srcID, *u.note)
		default:
			if _, _, e := s.tasks.Build(op, tenant, *u.task, u.task.CreationTime); e != nil {
				err = vp.Errorf(op, vp.KindOf(e), "bundle", "task %s: %v", u.srcID, e)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
