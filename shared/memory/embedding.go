package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Job kinds this package enqueues and handles (EmbedJobs).
const (
	// JobEmbed computes the vector of one memory or fix pattern.
	JobEmbed = "embed"
	// JobReembed enqueues JobEmbed for every live entity of a tenant whose
	// vector was made by another embedder (or is missing).
	JobReembed = "reembed"
)

// Entities an embed job refers to.
const (
	RefMemory     = "memory"
	RefFixPattern = "fixpattern"
)

// EmbedPayload is the payload of a JobEmbed job.
type EmbedPayload struct {
	Ref string `json:"ref"`
	ID  string `json:"id"`
}

// MaxEmbedTextBytes bounds the text sent to the embedder: the models take
// about 8,000 tokens (Titan v2: 50,000 characters), so longer content is
// embedded from its beginning.
const MaxEmbedTextBytes = 24_000

// TxQueue is implemented by queues that live in the same store as the
// domain (queue/storequeue): EnqueueOps returns the writes that enqueue jobs,
// so they commit in the same transaction as the memory — or returns an error
// when st is not the queue's store.
type TxQueue interface {
	EnqueueOps(st store.Store, jobs ...queue.Job) ([]store.Op, error)
}

// Waker is implemented by queues whose consumers can be woken at once after
// a commit (the in-process queue), instead of waiting for their next poll.
type Waker interface{ Wake() }

func (s *Service) embedJob(tenant, ref, id string) queue.Job {
	payload, _ := json.Marshal(EmbedPayload{Ref: ref, ID: id})
	return queue.Job{ID: s.ids.New("job"), Kind: JobEmbed, Tenant: tenant, Payload: payload}
}

// jobOps returns the store writes enqueueing job when the queue can take
// part in the domain's transaction.
func (s *Service) jobOps(job queue.Job) ([]store.Op, bool, error) {
	tq, ok := s.q.(TxQueue)
	if !ok {
		return nil, false, nil
	}
	ops, err := tq.EnqueueOps(s.st, job)
	if err != nil {
		return nil, false, nil // another store: enqueue after the commit instead
	}
	return ops, true, nil
}

// afterCommit enqueues job unless it committed with the write, and wakes
// the in-process worker. A job that cannot be enqueued is logged, not
// returned: the entity is stored and text-searchable, and ReembedAll (run
// by the "reembed" job) finds every entity without a current vector.
func (s *Service) afterCommit(ctx context.Context, job queue.Job, inTx bool) {
	if !inTx {
		var err error
		for try := 0; try < 3; try++ {
			if err = s.q.Enqueue(ctx, job); err == nil {
				break
			}
			time.Sleep(time.Duration(try+1) * 50 * time.Millisecond)
		}
		if err != nil {
			s.log.ErrorContext(ctx, "embed job not enqueued; the entity stays text-searchable until a reembed job runs",
				"tenant", job.Tenant, "payload", string(job.Payload), "err", err)
			return
		}
	}
	if w, ok := s.q.(Waker); ok {
		w.Wake()
	}
}

// embedTarget is one entity an embed job resolved to.
type embedTarget struct {
	job  int // index in the batch
	ref  string
	key  store.Key
	doc  search.Doc
	text string
}

// EmbedJobs handles a batch of jobs of kinds JobEmbed and JobReembed and
// returns one error per job (nil = done, ack it). Embed jobs are idempotent:
// an entity that is gone, deleted, superseded, expired or already embedded
// by the current embedder is skipped. Texts are embedded in one call; each
// vector is attached to the entity's index document and the embedder's name
// recorded on the entity.
func (s *Service) EmbedJobs(ctx context.Context, jobs []queue.Job) []error {
	errs := make([]error, len(jobs))
	var targets []embedTarget
	tenants := map[string]bool{}
	for i, j := range jobs {
		switch j.Kind {
		case JobReembed:
			_, errs[i] = s.ReembedAll(ctx, j.Tenant)
		case JobEmbed:
			t, ok, err := s.resolveEmbed(ctx, i, j)
			if err != nil {
				errs[i] = err
			} else if ok {
				targets = append(targets, t)
				tenants[j.Tenant] = true
			}
		default:
			errs[i] = fmt.Errorf("memory: job %s has unknown kind %q", j.ID, j.Kind)
		}
	}
	for tenant := range tenants {
		if err := s.ensureEmbedderMarker(ctx, tenant); err != nil {
			s.log.WarnContext(ctx, "checking the tenant's embedder marker", "tenant", tenant, "err", err)
		}
	}
	if len(targets) == 0 {
		return errs
	}
	texts := make([]string, len(targets))
	for i, t := range targets {
		texts[i] = t.text
	}
	vecs, err := s.emb.Embed(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("memory: embedder %s returned %d vectors for %d texts", s.emb.Name(), len(vecs), len(texts))
	}
	if err != nil {
		for _, t := range targets {
			errs[t.job] = err
		}
		return errs
	}
	name := s.emb.Name()
	for i, t := range targets {
		errs[t.job] = s.attachVector(ctx, t, search.Vector{Embedder: name, Values: vecs[i]})
	}
	return errs
}

// resolveEmbed reads the entity of an embed job; ok is false when there is
// nothing to do.
func (s *Service) resolveEmbed(ctx context.Context, i int, j queue.Job) (embedTarget, bool, error) {
	var pl EmbedPayload
	if err := json.Unmarshal(j.Payload, &pl); err != nil || pl.ID == "" || !vp.ValidTenant(j.Tenant) {
		// A malformed job never succeeds: drop it (ack) rather than retry.
		s.log.ErrorContext(ctx, "dropping a malformed embed job", "job", j.ID, "tenant", j.Tenant, "payload", string(j.Payload))
		return embedTarget{}, false, nil
	}
	name := s.emb.Name()
	switch pl.Ref {
	case RefMemory:
		k := memoryKey(j.Tenant, pl.ID)
		m, err := s.readForEmbed(ctx, k)
		if err != nil || m == nil {
			return embedTarget{}, false, err
		}
		var mem vp.Memory
		if err := json.Unmarshal(m, &mem); err != nil {
			return embedTarget{}, false, err
		}
		if !mem.Live(s.nowMS()) || mem.Embedder == name {
			return embedTarget{}, false, nil
		}
		return embedTarget{job: i, ref: pl.Ref, key: k, doc: memoryDoc(j.Tenant, mem), text: clip(mem.Content)}, true, nil
	case RefFixPattern:
		k := fixKey(j.Tenant, pl.ID)
		m, err := s.readForEmbed(ctx, k)
		if err != nil || m == nil {
			return embedTarget{}, false, err
		}
		var f vp.FixPattern
		if err := json.Unmarshal(m, &f); err != nil {
			return embedTarget{}, false, err
		}
		if f.Embedder == name {
			return embedTarget{}, false, nil
		}
		return embedTarget{job: i, ref: pl.Ref, key: k, doc: fixDoc(j.Tenant, f), text: clip(f.Symptom)}, true, nil
	}
	s.log.ErrorContext(ctx, "dropping an embed job for an unknown entity", "job", j.ID, "ref", pl.Ref)
	return embedTarget{}, false, nil
}

func (s *Service) readForEmbed(ctx context.Context, k store.Key) ([]byte, error) {
	it, err := s.st.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return it.Data, nil
}

// attachVector sets the vector on the index document and records the
// embedder on the entity.
func (s *Service) attachVector(ctx context.Context, t embedTarget, v search.Vector) error {
	// SetVector ignores a document that is not indexed (deleted since).
	if err := s.idx.SetVector(ctx, t.doc.Tenant, t.doc.ID, v); err != nil {
		return err
	}
	// Another writer (a supersede, a delete) changed the entity since the
	// read: read it again.
	return table.Retry(ctx, "embed", "id", t.doc.ID, func() error {
		it, err := s.st.Get(ctx, t.key)
		if errors.Is(err, store.ErrNotFound) {
			return s.idx.Delete(ctx, t.doc.Tenant, t.doc.ID) // deleted or expired meanwhile
		}
		if err != nil {
			return err
		}
		var next store.Item
		switch t.ref {
		case RefMemory:
			var m vp.Memory
			if err := json.Unmarshal(it.Data, &m); err != nil {
				return err
			}
			if !m.Live(s.nowMS()) {
				// Deleted or superseded while we embedded: make sure the
				// vector does not outlive it in the index.
				return s.idx.Delete(ctx, t.doc.Tenant, t.doc.ID)
			}
			if m.Embedder == v.Embedder {
				return nil
			}
			m.Embedder = v.Embedder
			if next, err = memoryItem("embed", t.doc.Tenant, m); err != nil {
				return err
			}
		case RefFixPattern:
			var f vp.FixPattern
			if err := json.Unmarshal(it.Data, &f); err != nil {
				return err
			}
			if f.Embedder == v.Embedder {
				return nil
			}
			f.Embedder = v.Embedder
			if next, err = fixItem("embed", t.doc.Tenant, f); err != nil {
				return err
			}
		default:
			return nil
		}
		return s.st.Write(ctx, store.Put(next, store.IfVersion(it.Version)))
	})
}

func clip(s string) string {
	if len(s) <= MaxEmbedTextBytes {
		return s
	}
	s = s[:MaxEmbedTextBytes]
	for len(s) > 0 {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1] // a rune cut in the middle
	}
	return s
}

// ReembedAll enqueues an embed job for every live memory, episode and fix
// pattern of tenant whose vector is missing or was made by another embedder
// than the current one. It returns how many jobs it enqueued. It reads the
// tenant's entities page by page (a job, never a request path).
func (s *Service) ReembedAll(ctx context.Context, tenant string) (int, error) {
	if !vp.ValidTenant(tenant) {
		return 0, fmt.Errorf("memory: reembed: invalid tenant %q", tenant)
	}
	name := s.emb.Name()
	n := 0
	var batch []queue.Job
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		if err := s.q.Enqueue(ctx, batch...); err != nil {
			return err
		}
		n += len(batch)
		batch = batch[:0]
		return nil
	}
	type source struct {
		q   store.Query
		ref string
	}
	for _, src := range []source{
		{memories.Query(tenant, store.GSI3, nil), RefMemory},
		{episodes.Query(tenant, store.GSI3, nil), RefMemory},
		{fixPatterns.Query(tenant, store.GSI2, nil), RefFixPattern},
	} {
		q := src.q
		for {
			q.Limit = 200
			rows, err := s.st.Query(ctx, q)
			if err != nil {
				return n, err
			}
			for _, it := range rows {
				var e struct {
					ID       string `json:"_id"`
					Embedder string `json:"embedder"`
				}
				if err := json.Unmarshal(it.Data, &e); err != nil {
					return n, err
				}
				if e.Embedder != name {
					batch = append(batch, s.embedJob(tenant, src.ref, e.ID))
					if len(batch) == 25 {
						if err := flush(); err != nil {
							return n, err
						}
					}
				}
			}
			if len(rows) < q.Limit {
				break
			}
			pos := store.PositionOf(rows[len(rows)-1], q.Index)
			q.After = &pos
		}
	}
	if err := flush(); err != nil {
		return n, err
	}
	if n > 0 {
		if w, ok := s.q.(Waker); ok {
			w.Wake()
		}
	}
	return n, nil
}

// EnsureEmbedder checks that the tenant's vectors were made by the current
// embedder and, when they were not (the configuration changed), enqueues
// their re-embedding. Vector searches and the embedding worker call it
// (once per tenant and process); a server may call it at start.
func (s *Service) EnsureEmbedder(ctx context.Context, tenant string) error {
	if !vp.ValidTenant(tenant) {
		return fmt.Errorf("memory: invalid tenant %q", tenant)
	}
	return s.ensureEmbedderMarker(ctx, tenant)
}

// ensureEmbedderMarker compares the tenant's recorded embedder with the
// current one. When they differ (the embedder was changed) it records the
// current one and enqueues a reembed job, once: vectors of two embedders are
// never mixed, and entities with an old vector are embedded again.
func (s *Service) ensureEmbedderMarker(ctx context.Context, tenant string) error {
	name := s.emb.Name()
	if v, ok := s.markers.Load(tenant); ok && v.(string) == name {
		return nil
	}
	k := embedderRecords.KeyOf(tenant, nil)
	it, err := s.st.Get(ctx, k)
	rec, recErr := embedderRecords.Item("embed", tenant, embedderRecord{Embedder: name, Since: s.nowMS()})
	if recErr != nil {
		return recErr
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		// The tenant's first vector: every entity it has was written by
		// this code, so each has its own embed job and nothing needs
		// re-embedding.
		err := s.st.Write(ctx, store.Put(rec, store.IfNotExists))
		if err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return err
		}
		if err == nil {
			s.markers.Store(tenant, name)
		}
		return nil
	case err != nil:
		return err
	default:
		var m embedderRecord
		if err := json.Unmarshal(it.Data, &m); err != nil {
			return err
		}
		if m.Embedder == name {
			s.markers.Store(tenant, name)
			return nil
		}
	}
	job := queue.Job{ID: s.ids.New("job"), Kind: JobReembed, Tenant: tenant}
	ops := []store.Op{store.Put(rec, store.IfVersion(it.Version))}
	jobOps, inTx, err := s.jobOps(job)
	if err != nil {
		return err
	}
	ops = append(ops, jobOps...)
	err = s.st.Write(ctx, ops...)
	if errors.Is(err, store.ErrConditionFailed) {
		return nil // another worker recorded it (and enqueued the job)
	}
	if err != nil {
		return err
	}
	s.log.InfoContext(ctx, "embedder changed for tenant: re-embedding its entities", "tenant", tenant, "embedder", name)
	s.afterCommit(ctx, job, inTx)
	s.markers.Store(tenant, name)
	return nil
}
