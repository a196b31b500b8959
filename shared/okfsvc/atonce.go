package okfsvc

import (
	"context"
	"errors"
	"slices"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// replaced marks the last replace of a namespace committed at once.
type replaced struct {
	Namespace string `json:"namespace"`
	Origin    string `json:"origin"`
	Entities  int    `json:"entities"`
	At        int64  `json:"at"`
}

var replacements = table.Declare(table.Schema[replaced]{
	Entity:  "okf replace marker",
	Primary: table.Key{PK: "OKFGEN#{ns}", SK: "GEN", Pattern: "the last replace of a namespace made in one transaction", Note: "written under its version by every such replace: of two concurrent ones, the second fails"},
	Fields:  func(r replaced) table.Values { return table.Values{"ns": r.Namespace} },
})

// indexChunk bounds the ids of one index job (their payload stays far
// below outbox.MaxPayloadBytes).
const indexChunk = 1000

// replaceAtOnce is replace on a store with large transactions (SQLite):
// the new generation with its provenance, the removal of everything else
// of the namespace with its provenance, and their embed and index jobs
// are one transaction. Readers see the old namespace until it commits and
// the new one after, never a mix; a failure leaves nothing (the only
// thing done ahead, indexing the memories, is undone: memory.Abandoned).
//
// The transaction also checks that no journal of the multi-write path is
// pending and rewrites the namespace's marker under the version read
// first, so that of two replaces racing the second fails as a conflict
// instead of leaving the first one's entities behind; the soft-deletes
// are conditional on the versions read, so a memory edited meanwhile
// fails it too. ts are the namespace's tasks, as replace read them.
func (s *Service) replaceAtOnce(ctx context.Context, op, tenant, ns, orig string, units []unit, ts []vp.Task, lt store.LargeTransactor) (map[string]int, error) {
	mk := replacements.KeyOf(tenant, table.Values{"ns": ns})
	_, mit, err := records.Get[replaced](ctx, s.st, op, "namespace", ns, mk)
	markCond := store.IfVersion(mit.Version)
	if vp.IsKind(err, vp.KindNotFound) {
		markCond = store.IfNotExists
	} else if err != nil {
		return nil, err
	}
	mark, err := replacements.Item(op, tenant, replaced{Namespace: ns, Origin: orig, Entities: len(units), At: s.now().UnixMilli()})
	if err != nil {
		return nil, err
	}
	ops := []store.Op{store.Check(journals.KeyOf(tenant, table.Values{"ns": ns}), store.IfNotExists), store.Put(mark, markCond)}

	keep := map[string]bool{}
	rewritten := map[store.Key]bool{} // provenance records written below
	var mems []memory.Pending
	var notes []vp.BriefingNote
	var tasks []vp.Task
	for _, u := range units {
		keep[u.id()] = true
		cond := store.IfNotExists
		if u.action != actCreate {
			cond = store.Always
		}
		provOp, err := s.provenanceOp(op, tenant, ns, orig, u)
		if err != nil {
			return nil, err
		}
		switch {
		case u.memory != nil:
			w, err := s.mem.PrepareImport(ctx, op, tenant, *u.memory, cond)
			if err != nil {
				return nil, err
			}
			mems = append(mems, w)
			ops = append(ops, w.Ops...)
		case u.note != nil:
			it, err := noteItem(op, tenant, u)
			if err != nil {
				return nil, err
			}
			notes = append(notes, *u.note)
			ops = append(ops, store.Put(it, cond))
		default:
			t, it, err := s.taskItem(op, tenant, u)
			if err != nil {
				return nil, err
			}
			tasks = append(tasks, t)
			ops = append(ops, store.Put(it, cond))
		}
		ops, rewritten[provOp.Key] = append(ops, provOp), true
	}

	deleted := counts()
	internal := vp.Principal{Tenant: tenant, Admin: true} // the caller's write access was checked
	ms, err := s.mem.NamespaceMemories(ctx, op, internal, ns)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if keep[m.ID] {
			continue
		}
		w, err := s.mem.PrepareRemoval(ctx, op, tenant, m.ID)
		if err != nil {
			return nil, err
		}
		mems = append(mems, w)
		ops = append(ops, w.Ops...)
		deleted[okf.KindMemory]++
	}
	oldNotes, err := s.notesOf(ctx, op, tenant, ns)
	if err != nil {
		return nil, err
	}
	var goneNotes, goneTasks []string
	for _, n := range oldNotes {
		if !keep[n.ID] {
			goneNotes = append(goneNotes, n.ID)
			ops = append(ops, store.Delete(briefing.Notes.KeyOf(tenant, table.Values{"id": n.ID}), store.Always))
		}
	}
	for _, t := range ts {
		if !keep[t.ID] {
			goneTasks = append(goneTasks, t.ID)
			ops = append(ops, store.Delete(task.Key(tenant, t.ID), store.Always))
		}
	}
	deleted[okf.KindBriefing], deleted[okf.KindTask] = len(goneNotes), len(goneTasks)
	provs, err := queryAll[provenance](ctx, s.st, op, provenances.Query(tenant, store.Primary, table.Values{"ns": ns}))
	if err != nil {
		return nil, err
	}
	for _, p := range provs {
		// A record of an entity deleted since its import names an id that
		// is gone, and is rewritten above with the new one.
		if !keep[p.NewID] && !rewritten[provenances.Key(tenant, p)] {
			ops = append(ops, store.Delete(provenances.Key(tenant, p), store.Always))
		}
	}

	// Index jobs of every note and task written or removed, committed
	// with them and run right after (search.Writer), in runs of
	// indexChunk ids.
	type job struct {
		ix    search.Pending
		ids   []string
		tasks []vp.Task
	}
	var jobs []job
	for _, kind := range []string{briefing.Kind, task.Kind} {
		ids := goneTasks
		if kind == briefing.Kind {
			ids = goneNotes
			for _, n := range notes {
				ids = append(ids, n.ID)
			}
		}
		for c := range slices.Chunk(ids, indexChunk) {
			ix, err := s.search.Prepare(ctx, tenant, kind, c...)
			if err != nil {
				return nil, err
			}
			jobs, ops = append(jobs, job{ix: ix, ids: c}), append(ops, ix.Ops()...)
		}
	}
	for c := range slices.Chunk(tasks, indexChunk) {
		ix, err := s.tasks.Creating(ctx, tenant, c...)
		if err != nil {
			return nil, err
		}
		jobs, ops = append(jobs, job{ix: ix, tasks: c}), append(ops, ix.Ops()...)
	}

	if err := lt.TransactLarge(ctx, ops); err != nil {
		s.mem.Abandoned(ctx, op, mems...)
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, vp.Errorf(op, vp.KindConflict, "namespace", "%q changed while it was being replaced (another replace, or an edit of one of its memories); nothing was changed — retry", ns)
		}
		return nil, records.Err(op, err)
	}

	s.mem.Committed(ctx, mems...)
	docs := map[string]search.Doc{}
	for _, n := range notes {
		docs[n.ID] = briefing.Doc(tenant, n)
	}
	for _, j := range jobs {
		if j.tasks != nil {
			s.tasks.Created(ctx, op, tenant, j.ix, j.tasks...)
			continue
		}
		var ds []search.Doc // none for a removed note or task: its document goes
		for _, id := range j.ids {
			if d, ok := docs[id]; ok {
				ds = append(ds, d)
			}
		}
		s.search.Done(ctx, op, j.ix, ds...)
	}
	return deleted, nil
}
