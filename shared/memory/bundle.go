package memory

import (
	"context"
	"slices"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/records"
	"github.com/vantagepeers/vantagepeers/shared/store"
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
	if !p.CanRead(ns) {
		return nil, vp.Errorf(op, vp.KindForbidden, "namespace", "this token may not read namespace %q (read prefixes: %s)", ns, describePrefixes(p.ReadPrefixes))
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
	if err := checkMemoryType(op, "type", m.Type, true); err != nil {
		return err
	}
	if err := vp.CheckNamespace(op, "namespace", m.Namespace, true); err != nil {
		return err
	}
	if err := vp.CheckText(op, "content", m.Content, vp.MaxMemoryContentBytes, true); err != nil {
		return err
	}
	m.Embedder = ""
	mi, err := memoryItem(op, tenant, m)
	if err != nil {
		return err
	}
	ops := append([]store.Op{store.Put(mi, cond)}, extra...)
	var job *queue.Job
	inTx := false
	if m.Live(s.nowMS()) {
		j := s.embedJob(tenant, RefMemory, m.ID)
		job = &j
		if err := s.idx.Upsert(ctx, memoryDoc(tenant, m)); err != nil {
			return vp.Wrap(op, vp.KindInternal, err)
		}
		jobOps, ok, err := s.jobOps(j)
		if err != nil {
			return vp.Wrap(op, vp.KindInternal, err)
		}
		ops, inTx = append(ops, jobOps...), ok
	} else if err := s.idx.Delete(ctx, tenant, m.ID); err != nil {
		s.log.WarnContext(ctx, "removing an imported superseded memory from the index (searches drop it anyway)", "id", m.ID, "err", err)
	}
	if err := s.st.Write(ctx, ops...); err != nil {
		return records.Err(op, err)
	}
	if job != nil {
		s.afterCommit(ctx, *job, inTx)
	}
	return nil
}

// RemoveMemory soft-deletes memory id (as soft_delete_memory does, without
// a principal: the importer checked the namespace) with extra in the same
// transaction. A missing or already deleted memory is not an error.
func (s *Service) RemoveMemory(ctx context.Context, op, tenant, id string, extra ...store.Op) error {
	err := table.Retry(ctx, op, "memoryId", id, func() error {
		m, it, err := records.Get[vp.Memory](ctx, s.st, op, "memoryId", id, memoryKey(tenant, id))
		if vp.IsKind(err, vp.KindNotFound) {
			if len(extra) == 0 {
				return nil
			}
			return s.st.Write(ctx, extra...)
		}
		if err != nil {
			return err
		}
		ops := extra
		if m.DeletedAt == 0 {
			now := s.nowMS()
			m.IsLatest, m.DeletedAt, m.UpdatedAt = false, now, now
			next, err := memoryItem(op, tenant, m)
			if err != nil {
				return err
			}
			ops = append([]store.Op{store.Put(next, store.IfVersion(it.Version))}, extra...)
		}
		if len(ops) == 0 {
			return nil
		}
		return s.st.Write(ctx, ops...)
	})
	if err != nil {
		return err
	}
	if err := s.idx.Delete(ctx, tenant, id); err != nil {
		s.log.WarnContext(ctx, "removing a replaced memory from the index (searches drop it anyway)", "id", id, "err", err)
	}
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
