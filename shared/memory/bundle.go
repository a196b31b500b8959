package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// What OKF bundles (shared/okfsvc) need of memories: every memory of a
// namespace as stored, and writes of memories as they come in a bundle —
// with their own ids, times and states — that keep the search index and
// the embed jobs in step as store_memory does. The keys stay declared here.

// NamespaceMemories returns every memory of namespace ns that is neither
// deleted nor expired — latest and superseded, episodes included — in id
// order (creation order).
func (s *Service) NamespaceMemories(ctx context.Context, op string, p vp.Principal, ns string) ([]vp.Memory, error) {
	tenant, err := tenantOf(op, p)
	if err != nil {
		return nil, err
	}
	if err := p.MayRead(op, "namespace", ns); err != nil {
		return nil, err
	}
	q := memories.Query(tenant, store.GSI1, table.Values{"ns": ns})
	q.Limit = 500
	now := s.nowMS()
	var out []vp.Memory
	for {
		items, err := s.st.Query(ctx, q)
		if err != nil {
			return nil, records.Err(op, err)
		}
		for _, it := range items {
			m, err := records.Decode[vp.Memory](op, it)
			if err != nil {
				return nil, err
			}
			if m.DeletedAt == 0 && (m.ExpiresAt == 0 || m.ExpiresAt > now) {
				out = append(out, m)
			}
		}
		if len(items) < q.Limit {
			break
		}
		pos := store.PositionOf(items[len(items)-1], q.Index)
		q.After = &pos
	}
	// The index sorts by state then id: put them back in id order.
	slices.SortFunc(out, func(a, b vp.Memory) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// ImportMemory writes m as given (an imported memory: its id, times,
// relations and state are the importer's) under cond, with extra in the
// same transaction (the importer's provenance record). A live memory is
// indexed first and gets an embed job, as with store_memory; relations
// are not re-applied (the bundle carries the superseded states already).
// Vectors never travel: Embedder is cleared and the job makes them.
func (s *Service) ImportMemory(ctx context.Context, op, tenant string, m vp.Memory, cond store.Cond, extra ...store.Op) error {
	w, err := s.PrepareImport(ctx, op, tenant, m, cond)
	if err != nil {
		return err
	}
	if err := s.st.Write(ctx, append(w.Ops, extra...)...); err != nil {
		s.Abandoned(ctx, op, w)
		return records.Err(op, err)
	}
	s.Committed(ctx, w)
	return nil
}

// Pending is a memory write prepared for the caller's transaction
// (PrepareImport, PrepareRemoval), for an importer that commits many
// entities at once (store.LargeTransactor): commit Ops, then pass it to
// Committed; if the transaction fails, to Abandoned, which puts back the
// index document written ahead.
type Pending struct {
	Ops     []store.Op
	tenant  string
	job     *queue.Job
	inTx    bool
	indexed string // the memory indexed ahead of the commit
	unindex string // the memory to take out of the index after the commit
}

// PrepareImport is ImportMemory without its Write: the ops of m (and of
// its embed job when the queue shares the store), after indexing a live
// m — before the commit, as store_memory does, so that a crash between
// the two cannot leave a committed memory unsearchable.
func (s *Service) PrepareImport(ctx context.Context, op, tenant string, m vp.Memory, cond store.Cond) (Pending, error) {
	if err := checkMemoryType(op, "type", m.Type, true); err != nil {
		return Pending{}, err
	}
	if err := vp.CheckNamespace(op, "namespace", m.Namespace, true); err != nil {
		return Pending{}, err
	}
	if err := vp.CheckText(op, "content", m.Content, vp.MaxMemoryContentBytes, true); err != nil {
		return Pending{}, err
	}
	m.Embedder = ""
	mi, err := memoryItem(op, tenant, m)
	if err != nil {
		return Pending{}, err
	}
	w := Pending{Ops: []store.Op{store.Put(mi, cond)}, tenant: tenant}
	if !m.Live(s.nowMS()) {
		w.unindex = m.ID
		return w, nil
	}
	j := s.embedJob(tenant, RefMemory, m.ID)
	w.job, w.indexed = &j, m.ID
	if err := s.idx.Upsert(ctx, memoryDoc(tenant, m)); err != nil {
		return Pending{}, vp.Wrap(op, vp.KindInternal, err)
	}
	jobOps, ok, err := s.jobOps(j)
	if err != nil {
		return Pending{}, vp.Wrap(op, vp.KindInternal, err)
	}
	w.Ops, w.inTx = append(w.Ops, jobOps...), ok
	return w, nil
}

// PrepareRemoval returns the ops soft-deleting memory id (as
// soft_delete_memory does, without a principal: the importer checked the
// namespace), conditional on the version read now: none for a missing or
// already deleted memory.
func (s *Service) PrepareRemoval(ctx context.Context, op, tenant, id string) (Pending, error) {
	w := Pending{tenant: tenant, unindex: id}
	m, it, err := records.Get[vp.Memory](ctx, s.st, op, "memoryId", id, memoryKey(tenant, id))
	if vp.IsKind(err, vp.KindNotFound) {
		return w, nil
	}
	if err != nil {
		return Pending{}, err
	}
	if m.DeletedAt == 0 {
		now := s.nowMS()
		m.IsLatest, m.DeletedAt, m.UpdatedAt = false, now, now
		next, err := memoryItem(op, tenant, m)
		if err != nil {
			return Pending{}, err
		}
		w.Ops = []store.Op{store.Put(next, store.IfVersion(it.Version))}
	}
	return w, nil
}

// Committed does what follows the commit of prepared writes: embed jobs
// enqueued (unless they committed with the writes) and the worker woken;
// removed and superseded memories taken out of the index.
func (s *Service) Committed(ctx context.Context, ws ...Pending) {
	for _, w := range ws {
		if w.job != nil {
			s.afterCommit(ctx, *w.job, w.inTx)
		}
		if w.unindex != "" {
			if err := s.idx.Delete(ctx, w.tenant, w.unindex); err != nil {
				s.log.WarnContext(ctx, "removing a replaced or superseded memory from the index (searches drop it anyway)", "id", w.unindex, "err", err)
			}
		}
	}
}

// Abandoned undoes what prepared writes did ahead of a transaction that
// failed: each memory indexed ahead gets the document of what the store
// holds (none when it holds nothing live). A new memory's document would
// be dropped by every search anyway (hits are read back from the store),
// but an updated one's would find the stored memory by the words of the
// update that did not happen.
func (s *Service) Abandoned(ctx context.Context, op string, ws ...Pending) {
	for _, w := range ws {
		if w.indexed == "" {
			continue
		}
		m, _, err := records.Get[vp.Memory](ctx, s.st, op, "memoryId", w.indexed, memoryKey(w.tenant, w.indexed))
		switch {
		case err == nil && m.Live(s.nowMS()):
			err = s.idx.Upsert(ctx, memoryDoc(w.tenant, m))
		case err == nil || vp.IsKind(err, vp.KindNotFound):
			err = s.idx.Delete(ctx, w.tenant, w.indexed)
		}
		if err != nil {
			s.log.WarnContext(ctx, "restoring the index document of a memory whose import failed", "id", w.indexed, "err", err)
		}
	}
}

// RemoveMemory soft-deletes memory id (PrepareRemoval) with extra in the
// same transaction. A missing or already deleted memory is not an error.
func (s *Service) RemoveMemory(ctx context.Context, op, tenant, id string, extra ...store.Op) error {
	var w Pending
	err := table.Retry(ctx, op, "memoryId", id, func() error {
		var err error
		if w, err = s.PrepareRemoval(ctx, op, tenant, id); err != nil {
			return err
		}
		ops := append(w.Ops, extra...)
		if len(ops) == 0 {
			return nil
		}
		return s.st.Write(ctx, ops...)
	})
	if err != nil {
		return err
	}
	s.Committed(ctx, w)
	return nil
}

// MemoryExists reports whether memory id is stored in the tenant and not
// deleted (an import keeps a reference to it).
func (s *Service) MemoryExists(ctx context.Context, op, tenant, id string) (bool, error) {
	if vp.CheckName(op, "id", id, true) != nil {
		return false, nil
	}
	m, _, err := records.Get[vp.Memory](ctx, s.st, op, "id", id, memoryKey(tenant, id))
	if vp.IsKind(err, vp.KindNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return m.DeletedAt == 0, nil
}
