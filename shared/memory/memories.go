package memory

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Search document kinds written by this package.
const (
	KindMemory     = "memory"
	KindFixPattern = "fixpattern"
)

// StoreInput is a memory to store.
type StoreInput struct {
	Namespace string
	Type      string
	Content   string
	CreatedBy string
	Relations []vp.Relation
	// IsLatest defaults to true; false stores the memory already archived.
	IsLatest *bool
	// TTL is an RFC 3339 instant ("2026-07-01T00:00:00Z") after which the
	// memory is gone from every read.
	TTL     string
	Episode *vp.Episode
}

// StoreResult reports what store_memory wrote.
type StoreResult struct {
	MemoryID     string `json:"memoryId"`
	CreationTime int64  `json:"_creationTime"`
	// Superseded lists the memories this one marked isLatest=false through
	// an "updates" relation.
	Superseded []string `json:"superseded,omitempty"`
	ExpiresAt  int64    `json:"expiresAt,omitempty"`
}

// StoreMemory stores a memory. Order of writes (text is searchable at once,
// vectors follow from a job):
//
//  1. the text is indexed (search.Index.Upsert), so that text_search finds
//     the memory the moment this returns;
//  2. the memory, the superseding of every "updates" target (IfVersion on
//     each) and — with a queue that lives in the store — the embed job are
//     one store transaction;
//  3. superseded targets are removed from the index; with another queue
//     (SQS) the embed job is enqueued now.
//
// If step 2 fails, the document indexed in step 1 is an orphan: harmless,
// because every search reads hits back from the store and drops what is not
// there. Nothing is written when validation fails.
func (s *Service) StoreMemory(ctx context.Context, p vp.Principal, in StoreInput) (StoreResult, error) {
	return s.storeMemory(ctx, "store_memory", p, in)
}

func (s *Service) storeMemory(ctx context.Context, op string, p vp.Principal, in StoreInput) (StoreResult, error) {
	tenant, err := tenantOf(op, p)
	if err != nil {
		return StoreResult{}, err
	}
	if err := vp.CheckNamespace(op, "namespace", in.Namespace, true); err != nil {
		return StoreResult{}, err
	}
	if err := checkMemoryType(op, "type", in.Type, true); err != nil {
		return StoreResult{}, err
	}
	if err := in.Limits().Content.Text(op, in.Content, true); err != nil {
		return StoreResult{}, err
	}
	if err := vp.CheckName(op, "createdBy", in.CreatedBy, false); err != nil {
		return StoreResult{}, err
	}
	createdBy, err := p.ActAs(op, "createdBy", in.CreatedBy)
	if err != nil {
		return StoreResult{}, err
	}
	if err := p.MayWrite(op, "namespace", in.Namespace); err != nil {
		return StoreResult{}, err
	}
	now := s.now()
	var expiresAt int64
	if in.TTL != "" {
		if expiresAt, err = parseTTL(op, in.TTL, now); err != nil {
			return StoreResult{}, err
		}
	}
	var episode *vp.Episode
	if in.Episode != nil {
		if in.Type != vp.MemoryTypeEpisode {
			return StoreResult{}, vp.Errorf(op, vp.KindInvalid, "episode", "is only allowed with type %q (got type %q)", vp.MemoryTypeEpisode, in.Type)
		}
		e, err := checkEpisode(op, *in.Episode)
		if err != nil {
			return StoreResult{}, err
		}
		episode = &e
	}
	rels, err := checkRelations(op, in.Relations)
	if err != nil {
		return StoreResult{}, err
	}
	latest := in.IsLatest == nil || *in.IsLatest

	nowMS := now.UnixMilli()
	m := vp.Memory{
		ID: s.ids.New("mem"), CreationTime: nowMS, Namespace: in.Namespace, Type: in.Type, Content: in.Content,
		CreatedBy: createdBy, Relations: rels, IsLatest: latest, TTL: in.TTL, ExpiresAt: expiresAt,
		Episode: episode, UpdatedAt: nowMS,
	}
	mi, err := memoryItem(op, tenant, m)
	if err != nil {
		return StoreResult{}, err
	}
	var job *queue.Job
	if latest {
		j := s.embedJob(tenant, RefMemory, m.ID)
		job = &j
		if err := s.idx.Upsert(ctx, memoryDoc(tenant, m)); err != nil {
			return StoreResult{}, vp.Wrap(op, vp.KindInternal, err)
		}
	}
	// A relation target changed between its read and the write: read the
	// targets again.
	var superseded []string
	inTx := false
	err = table.Retry(ctx, op, "relations", m.ID, func() error {
		ops := []store.Op{store.Put(mi, store.IfNotExists)}
		var targetOps []store.Op
		var err error
		superseded, targetOps, err = s.relationOps(ctx, op, tenant, p, m, rels)
		if err != nil {
			return err
		}
		ops = append(ops, targetOps...)
		if job != nil {
			jobOps, ok, err := s.jobOps(*job)
			if err != nil {
				return vp.Wrap(op, vp.KindInternal, err)
			}
			ops, inTx = append(ops, jobOps...), ok
		}
		return s.st.Write(ctx, ops...)
	})
	if err != nil {
		return StoreResult{}, err
	}
	if len(superseded) > 0 {
		if err := s.idx.Delete(ctx, tenant, superseded...); err != nil {
			s.log.WarnContext(ctx, "removing superseded memories from the index (searches drop them anyway)", "ids", superseded, "err", err)
		}
	}
	if job != nil {
		s.afterCommit(ctx, *job, inTx)
	}
	return StoreResult{MemoryID: m.ID, CreationTime: m.CreationTime, Superseded: superseded, ExpiresAt: expiresAt}, nil
}

// relationOps reads every relation target and returns the writes that
// supersede the "updates" targets. A missing, deleted or expired target, one
// in a namespace the caller cannot read, or (for updates) cannot write, or
// one already superseded, is refused.
func (s *Service) relationOps(ctx context.Context, op, tenant string, p vp.Principal, m vp.Memory, rels []vp.Relation) ([]string, []store.Op, error) {
	var superseded []string
	var ops []store.Op
	seen := map[string]bool{}
	for _, r := range rels {
		t, it, err := get[vp.Memory](ctx, s, op, "relations", "memory", r.TargetID, memoryKey(tenant, r.TargetID))
		if err != nil {
			return nil, nil, err
		}
		if t.DeletedAt != 0 || (t.ExpiresAt != 0 && t.ExpiresAt <= m.CreationTime) {
			return nil, nil, vp.Errorf(op, vp.KindNotFound, "relations", "memory %q was deleted or has expired", r.TargetID)
		}
		if !p.CanRead(t.Namespace) {
			return nil, nil, vp.Errorf(op, vp.KindForbidden, "relations", "memory %q is in namespace %q, which this token may not read", r.TargetID, t.Namespace).WithScope(vp.ReadScope(t.Namespace))
		}
		if r.Type != vp.RelationUpdates || seen[r.TargetID] {
			continue
		}
		seen[r.TargetID] = true
		if !p.CanWrite(t.Namespace) {
			return nil, nil, vp.Errorf(op, vp.KindForbidden, "relations", "an updates relation supersedes memory %q in namespace %q, which this token may not write", r.TargetID, t.Namespace).WithScope(vp.WriteScope(t.Namespace))
		}
		if !t.IsLatest {
			msg := "memory %q is not the latest version"
			if t.SupersededBy != "" {
				msg += " (it was superseded by " + t.SupersededBy + "): update that one instead"
			}
			return nil, nil, vp.Errorf(op, vp.KindConflict, "relations", msg, r.TargetID)
		}
		t.IsLatest, t.SupersededBy, t.SupersededAt, t.UpdatedAt = false, m.ID, m.CreationTime, m.CreationTime
		ti, err := memoryItem(op, tenant, t)
		if err != nil {
			return nil, nil, err
		}
		ops = append(ops, store.Put(ti, store.IfVersion(it.Version)))
		superseded = append(superseded, t.ID)
	}
	return superseded, ops, nil
}

func checkMemoryType(op, field, t string, required bool) error {
	if t == "" && !required {
		return nil
	}
	if !slices.Contains(vp.MemoryTypes, t) {
		if t == "" {
			return vp.Errorf(op, vp.KindInvalid, field, "is required: one of %s", strings.Join(vp.MemoryTypes, ", "))
		}
		return vp.Errorf(op, vp.KindInvalid, field, "%q is not a memory type; use one of %s", t, strings.Join(vp.MemoryTypes, ", "))
	}
	return nil
}

func checkRelations(op string, in []vp.Relation) ([]vp.Relation, error) {
	if l := (StoreInput{}).Limits().Relations; len(in) > l.Items {
		return nil, vp.Errorf(op, vp.KindTooLarge, l.Field, "has %d entries; the limit is %d", len(in), l.Items)
	}
	var out []vp.Relation
	for _, r := range in {
		if err := checkID(op, "relations", r.TargetID); err != nil {
			return nil, vp.Errorf(op, vp.KindInvalid, "relations", "targetId: %s", strings.TrimPrefix(err.Error(), op+": relations: "))
		}
		if !slices.Contains(vp.RelationTypes, r.Type) {
			return nil, vp.Errorf(op, vp.KindInvalid, "relations", "type %q is not a relation type; use one of %s", r.Type, strings.Join(vp.RelationTypes, ", "))
		}
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, nil
}

func checkEpisode(op string, e vp.Episode) (vp.Episode, error) {
	lim := episodeLimits("")
	for _, f := range []struct {
		lim vp.Limit
		v   string
	}{
		{lim.Context, e.Context}, {lim.Goal, e.Goal}, {lim.Action, e.Action}, {lim.Outcome, e.Outcome}, {lim.Insight, e.Insight},
	} {
		if err := f.lim.Text(op, f.v, true); err != nil {
			return e, err
		}
	}
	sev, ok := vp.NormalizeEpisodeSeverity(e.Severity)
	if !ok {
		return e, vp.Errorf(op, vp.KindInvalid, "severity", "%q is not a severity; use one of %s (minor means low, major means high)", e.Severity, strings.Join(vp.EpisodeSeverities, ", "))
	}
	e.Severity = sev
	return e, nil
}

// parseTTL reads an RFC 3339 instant in the future and returns it in Unix ms.
func parseTTL(op, ttl string, now time.Time) (int64, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(ttl))
	if err != nil {
		return 0, vp.Errorf(op, vp.KindInvalid, "ttl", "%q is not an ISO 8601 date-time with a time zone; use e.g. %q", ttl, now.UTC().Add(24*time.Hour).Format(time.RFC3339))
	}
	if !t.After(now) {
		return 0, vp.Errorf(op, vp.KindInvalid, "ttl", "%q is not in the future (now is %s)", ttl, now.UTC().Format(time.RFC3339))
	}
	return t.UnixMilli(), nil
}

func memoryDoc(tenant string, m vp.Memory) search.Doc {
	return search.Doc{
		Tenant: tenant, ID: m.ID, Kind: KindMemory, Namespace: m.Namespace, Type: m.Type, Owner: m.CreatedBy,
		Text: m.Content, CreatedAt: m.CreationTime, ExpiresAt: m.ExpiresAt,
	}
}

// GetMemory returns one memory. A soft-deleted or superseded memory is still
// returned (isLatest false, deletedAt / supersededBy set) for audit; an
// expired one is gone.
func (s *Service) GetMemory(ctx context.Context, p vp.Principal, id string) (vp.Memory, error) {
	return s.getMemory(ctx, "get_memory", "memoryId", p, id)
}

func (s *Service) getMemory(ctx context.Context, op, field string, p vp.Principal, id string) (vp.Memory, error) {
	tenant, err := tenantOf(op, p)
	if err != nil {
		return vp.Memory{}, err
	}
	if err := checkID(op, field, id); err != nil {
		return vp.Memory{}, err
	}
	m, _, err := get[vp.Memory](ctx, s, op, field, "memory", id, memoryKey(tenant, id))
	if err != nil {
		return vp.Memory{}, err
	}
	if m.ExpiresAt != 0 && m.ExpiresAt <= s.nowMS() {
		return vp.Memory{}, vp.Errorf(op, vp.KindNotFound, field, "no memory %q in this tenant (it may have expired)", id)
	}
	if !p.CanRead(m.Namespace) {
		return vp.Memory{}, vp.Errorf(op, vp.KindForbidden, field, "memory %q is in namespace %q, which this token may not read (read prefixes: %s)", id, m.Namespace, describePrefixes(p.ReadPrefixes)).WithScope(vp.ReadScope(m.Namespace))
	}
	return m, nil
}

// DeleteResult reports soft_delete_memory.
type DeleteResult struct {
	MemoryID string `json:"memoryId"`
	Deleted  bool   `json:"deleted"`
	// AlreadyDeleted is true when the memory was deleted before this call.
	AlreadyDeleted bool `json:"alreadyDeleted,omitempty"`
}

// SoftDeleteMemory marks a memory deleted (isLatest false, deletedAt set):
// it leaves every search and list at once; the row stays for audit.
func (s *Service) SoftDeleteMemory(ctx context.Context, p vp.Principal, id string) (DeleteResult, error) {
	const op = "soft_delete_memory"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return DeleteResult{}, err
	}
	if err := checkID(op, "memoryId", id); err != nil {
		return DeleteResult{}, err
	}
	var already bool
	err = table.Retry(ctx, op, "memoryId", id, func() error {
		m, it, err := get[vp.Memory](ctx, s, op, "memoryId", "memory", id, memoryKey(tenant, id))
		if err != nil {
			return err
		}
		if !p.CanWrite(m.Namespace) {
			return vp.Errorf(op, vp.KindForbidden, "memoryId", "memory %q is in namespace %q, which this token may not write (write prefixes: %s)", id, m.Namespace, describePrefixes(p.WritePrefixes)).WithScope(vp.WriteScope(m.Namespace))
		}
		if already = m.DeletedAt != 0; already {
			return nil
		}
		now := s.nowMS()
		m.IsLatest, m.DeletedAt, m.UpdatedAt = false, now, now
		next, err := memoryItem(op, tenant, m)
		if err != nil {
			return err
		}
		return s.st.Write(ctx, store.Put(next, store.IfVersion(it.Version)))
	})
	if err != nil {
		return DeleteResult{}, err
	}
	if already {
		return DeleteResult{MemoryID: id, Deleted: true, AlreadyDeleted: true}, nil
	}
	if err := s.idx.Delete(ctx, tenant, id); err != nil {
		s.log.WarnContext(ctx, "removing a deleted memory from the index (searches drop it anyway)", "id", id, "err", err)
	}
	return DeleteResult{MemoryID: id, Deleted: true}, nil
}

// ListInput selects memories.
type ListInput struct {
	Namespace         string
	Type              string
	IncludeSuperseded bool
	Params            listing.Params
}

// memoryLiteKeys are kept by fields=lite.
var memoryLiteKeys = []string{"namespace", "type", "createdBy", "isLatest"}

// ListMemories lists a namespace's memories, newest first: the latest ones
// only, or (includeSuperseded) the latest ones then the superseded ones.
// Deleted and expired memories never appear.
func (s *Service) ListMemories(ctx context.Context, p vp.Principal, in ListInput) (listing.Page[any], error) {
	const op = "list_memories"
	tenant, err := tenantOf(op, p)
	if err != nil {
		return listing.Page[any]{}, err
	}
	if err := vp.CheckNamespace(op, "namespace", in.Namespace, true); err != nil {
		return listing.Page[any]{}, err
	}
	if err := checkMemoryType(op, "type", in.Type, false); err != nil {
		return listing.Page[any]{}, err
	}
	if err := p.MayRead(op, "namespace", in.Namespace); err != nil {
		return listing.Page[any]{}, err
	}
	q := memories.Query(tenant, store.GSI1, table.Values{"ns": in.Namespace})
	if in.Type != "" {
		q = memories.Query(tenant, store.GSI2, table.Values{"ns": in.Namespace, "type": in.Type})
	}
	q.Reverse = true
	if !in.IncludeSuperseded {
		q.SKPrefix = liveOnly(q.Index)
	}
	binding := op + "\x00" + in.Namespace + "\x00" + in.Type + "\x00" + boolStr(in.IncludeSuperseded)
	now := s.nowMS()
	return listing.List(ctx, s.st, s.cursors, listing.Request{
		Op: op, Tenant: tenant, Binding: binding, Params: in.Params, Query: q, LiteKeys: memoryLiteKeys,
	}, func(it store.Item) (vp.Memory, bool, error) {
		m, err := records.Decode[vp.Memory](op, it)
		if err != nil {
			return m, false, err
		}
		keep := m.DeletedAt == 0 && (m.ExpiresAt == 0 || m.ExpiresAt > now) && (m.IsLatest || in.IncludeSuperseded)
		return m, keep, nil
	})
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
