package okfsvc

import (
	"context"
	"errors"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// stagingTTL is how long a staged generation waits for its journal.
const stagingTTL = 7 * 24 * time.Hour

// replace makes namespace ns hold exactly units (all new).
//
// On a store with large transactions (store.LargeTransactor: SQLite) it
// is one transaction (replaceAtOnce). Elsewhere (DynamoDB) a namespace
// holds any number of entities and a transaction at most
// store.MaxTransactOps items, so a replace cannot be one transaction. It
// is made all-or-nothing in effect instead, as a write-ahead journal —
// stage, decide, apply:
//
//  1. Stage: the new generation is written under a fresh generation id in
//     the staging partition (OKFSTAGE#<gen>), which no read of memories,
//     notes or tasks sees, each staged item with a 7-day TTL. A failure
//     here leaves the namespace untouched, and the staged items expire.
//  2. Decide: one conditional write creates the namespace's journal item
//     (OKFREPL#<ns>, IfNotExists) naming the generation. This single item
//     is the commit point — the pointer flip: before it the replace did
//     not happen; after it, it will, whatever fails next. A second
//     replace of the namespace meanwhile gets a conflict.
//  3. Apply (applyReplace): every staged entity is written with its
//     provenance, then every entity of the namespace not in the
//     generation is removed (memories soft-deleted, as
//     soft_delete_memory does; notes and tasks deleted) with its
//     provenance, then the journal and the staging go. Each step is
//     idempotent, so a crash is repaired by running apply again: the next
//     import into the namespace does so before anything else, and export
//     refuses a namespace with a journal. A namespace is therefore never
//     left half replaced; between decide and the end of apply readers may
//     see both generations side by side for the moments apply takes,
//     never a namespace with parts of the old one missing and the new one
//     absent.
//
// Tasks that belong to a mission are refused (their mission's link rows
// would dangle): remove them from their mission first.
func (s *Service) replace(ctx context.Context, op, tenant, ns, orig string, units []unit) (map[string]int, error) {
	if j, ok, err := s.pending(ctx, op, tenant, ns); err != nil {
		return nil, err
	} else if ok {
		return nil, vp.Errorf(op, vp.KindConflict, "namespace", "another replace of %q (generation %s) is being applied; retry", ns, j.Gen)
	}
	ts, err := s.tasksOf(ctx, op, tenant, ns)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if t.MissionID != "" && t.Status != vp.TaskDone && t.Status != vp.TaskCancelled && t.Status != vp.TaskFailed {
			return nil, vp.Errorf(op, vp.KindConflict, "namespace", "task %q of %q belongs to mission %q: replace would leave the mission's link dangling; complete or detach it first, or use merge", t.ID, ns, t.MissionID)
		}
	}
	if lt, ok := store.AsLargeTransactor(s.st); ok {
		return s.replaceAtOnce(ctx, op, tenant, ns, orig, units, ts, lt)
	}
	gen := s.ids.New("gen")
	expires := s.now().Add(stagingTTL).Unix()
	var batch []store.Op
	size := 0
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		err := s.st.Write(ctx, batch...)
		batch, size = nil, 0
		return records.Err(op, err)
	}
	for i, u := range units {
		it, err := staging.Item(op, tenant, stagedEntity{Gen: gen, Seq: i, Kind: u.kind, SourceID: u.srcID, Digest: u.digest,
			Memory: u.memory, Note: u.note, Task: u.task, Authors: u.authors, Expires: expires})
		if err != nil {
			return nil, err
		}
		if len(it.Data) > store.MaxItemBytes {
			return nil, vp.Errorf(op, vp.KindTooLarge, "bundle", "%s %s encodes to %d bytes; the stored limit is %d", u.kind, u.srcID, len(it.Data), store.MaxItemBytes)
		}
		if len(batch) == 25 || size+len(it.Data) > store.MaxTransactBytes/2 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
		batch, size = append(batch, store.Put(it, store.IfNotExists)), size+len(it.Data)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	j := journal{Namespace: ns, Gen: gen, Origin: orig, Staged: len(units), CreatedAt: s.now().UnixMilli()}
	ji, err := journals.Item(op, tenant, j)
	if err != nil {
		return nil, err
	}
	if err := s.st.Write(ctx, store.Put(ji, store.IfNotExists)); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, vp.Errorf(op, vp.KindConflict, "namespace", "another replace of %q started meanwhile; retry", ns)
		}
		return nil, records.Err(op, err)
	}
	return s.applyReplace(ctx, op, tenant, j)
}

// ReplacesAtOnce reports whether a replace is one transaction here: the
// store offers large transactions (store.LargeTransactor). Otherwise it
// goes through the journal (see replace).
func (s *Service) ReplacesAtOnce() bool {
	_, ok := store.AsLargeTransactor(s.st)
	return ok
}

// pending returns the journal of a replace of ns being applied.
func (s *Service) pending(ctx context.Context, op, tenant, ns string) (journal, bool, error) {
	j, _, err := records.Get[journal](ctx, s.st, op, "namespace", ns, journals.KeyOf(tenant, table.Values{"ns": ns}))
	if vp.IsKind(err, vp.KindNotFound) {
		return journal{}, false, nil
	}
	return j, err == nil, err
}

// applyReplace carries out a decided replace (see replace); running it
// again after a failure finishes the same replace. It returns what it
// removed from the namespace.
func (s *Service) applyReplace(ctx context.Context, op, tenant string, j journal) (map[string]int, error) {
	staged, err := queryAll[stagedEntity](ctx, s.st, op, staging.Query(tenant, store.Primary, table.Values{"gen": j.Gen}))
	if err != nil {
		return nil, err
	}
	if len(staged) != j.Staged {
		return nil, vp.Errorf(op, vp.KindInternal, "namespace", "the replace of %q (generation %s) staged %d entities but %d remain (the staging expired?); delete nothing and import again",
			j.Namespace, j.Gen, j.Staged, len(staged))
	}
	keep := map[string]bool{}
	for _, e := range staged {
		u := unit{kind: e.Kind, srcID: e.SourceID, digest: e.Digest, action: actCreate, memory: e.Memory, note: e.Note, task: e.Task, authors: e.Authors}
		keep[u.id()] = true
		if err := s.put(ctx, op, tenant, j.Namespace, j.Origin, u, store.Always); err != nil {
			return nil, err
		}
	}
	deleted := counts()
	internal := vp.Principal{Tenant: tenant, Admin: true} // the caller's write access was checked
	ms, err := s.mem.NamespaceMemories(ctx, op, internal, j.Namespace)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if !keep[m.ID] {
			if err := s.mem.RemoveMemory(ctx, op, tenant, m.ID); err != nil {
				return nil, err
			}
			deleted[okf.KindMemory]++
		}
	}
	notes, err := s.notesOf(ctx, op, tenant, j.Namespace)
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		if !keep[n.ID] {
			if err := s.remove(ctx, op, tenant, briefing.Kind, n.ID, briefing.Notes.KeyOf(tenant, table.Values{"id": n.ID})); err != nil {
				return nil, err
			}
			deleted[okf.KindBriefing]++
		}
	}
	ts, err := s.tasksOf(ctx, op, tenant, j.Namespace)
	if err != nil {
		return nil, err
	}
	for _, t := range ts {
		if !keep[t.ID] {
			if err := s.remove(ctx, op, tenant, task.Kind, t.ID, task.Key(tenant, t.ID)); err != nil {
				return nil, err
			}
			deleted[okf.KindTask]++
		}
	}
	provs, err := queryAll[provenance](ctx, s.st, op, provenances.Query(tenant, store.Primary, table.Values{"ns": j.Namespace}))
	if err != nil {
		return nil, err
	}
	var dels []store.Op
	for _, p := range provs {
		if !keep[p.NewID] {
			dels = append(dels, store.Delete(provenances.Key(tenant, p), store.Always))
		}
	}
	for _, e := range staged {
		dels = append(dels, store.Delete(staging.Key(tenant, e), store.Always))
	}
	for len(dels) > 0 {
		n := min(len(dels), store.MaxTransactOps)
		if err := s.st.Write(ctx, dels[:n]...); err != nil {
			return nil, records.Err(op, err)
		}
		dels = dels[n:]
	}
	if err := s.st.Write(ctx, store.Delete(journals.Key(tenant, j), store.Always)); err != nil {
		return nil, records.Err(op, err)
	}
	return deleted, nil
}

// remove deletes a note or task and takes it out of the keyword index.
func (s *Service) remove(ctx context.Context, op, tenant, kind, id string, k store.Key) error {
	ix, err := s.search.Prepare(ctx, tenant, kind, id)
	if err != nil {
		return err
	}
	if err := s.st.Write(ctx, append([]store.Op{store.Delete(k, store.Always)}, ix.Ops()...)...); err != nil {
		return records.Err(op, err)
	}
	s.search.Done(ctx, op, ix)
	return nil
}
