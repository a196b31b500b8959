package search

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/outbox"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Keyword documents: messages, tasks, briefing notes and components are
// indexed next to memories, each kind in its own partition
// "<tenant>/<kind>" (a tenant id cannot contain "/", so no partition is
// another tenant's). BM25 statistics then describe one corpus — chat
// volume does not skew task ranking — and a query only scores its own
// kind's postings.

// KindPartition is the search tenant of a kind's documents.
func KindPartition(tenant, kind string) string { return tenant + "/" + kind }

// IsKindPartition reports whether a search tenant is a keyword partition
// rather than a tenant's memories.
func IsKindPartition(searchTenant string) bool { return strings.Contains(searchTenant, "/") }

// IndexTopic is the outbox topic of keyword index jobs. Its handler
// (keyword.Service.IndexJob) is registered in wiring.
const IndexTopic = "search.index"

// IndexJob is the payload of an index job: which entities changed, not
// their documents. The handler reads each one back from the store and
// indexes what is there now (or removes the document of one that is
// gone), so a job is idempotent and a late or repeated one cannot bring
// back text that was since changed or deleted.
type IndexJob struct {
	Kind string   `json:"kind"`
	IDs  []string `json:"ids"` // document ids (search.Doc.ID)
}

// Writer keeps an aggregate's documents in step with its committed writes.
// An aggregate asks it for the ops of an index job before its Write
// (Prepare), commits them with its change, and runs the job right after
// the commit (Done), so a search right after the write finds it; when the
// run fails or the process dies first, the outbox job retries it.
//
// Without an Outbox the Writer indexes the documents Done is given
// directly, after the commit, logging a failure (tests, tools that build
// services by hand). A nil Writer or one without an index does nothing.
type Writer struct {
	Index  Index
	Logger *slog.Logger
	// Outbox, when set, carries the index writes; IndexTopic's handler
	// must be registered on it.
	Outbox *outbox.Outbox
}

// Pending is an index write prepared for a transaction.
type Pending struct {
	job    outbox.Pending
	queued bool // the job is in an outbox (its ops, or committed ahead)
	tenant string
	kind   string
	ids    []string
}

// Ops are the writes to commit with the change (none without an outbox).
func (p Pending) Ops() []store.Op {
	if !p.queued {
		return nil
	}
	return p.job.Ops()
}

// Prepare returns the index job of the documents ids of kind, to commit
// with the change that makes them stale (upserts and deletes alike).
func (w *Writer) Prepare(ctx context.Context, tenant, kind string, ids ...string) (Pending, error) {
	p := Pending{tenant: tenant, kind: kind, ids: ids}
	if w == nil || w.Index == nil || len(ids) == 0 || w.Outbox == nil {
		return p, nil
	}
	b, err := json.Marshal(IndexJob{Kind: kind, IDs: ids})
	if err != nil {
		return p, vp.Wrap("search.Prepare", vp.KindInternal, err)
	}
	if p.job, err = w.Outbox.EnqueueInline(ctx, tenant, IndexTopic, b); err != nil {
		return p, err
	}
	p.queued = true
	return p, nil
}

// Add appends p's ops to a transaction's ops. When they do not fit
// (store.MaxTransactOps: a message to 99 recipients is already 100 ops),
// it commits the job alone first instead. That is as safe as one
// transaction, because the handler re-reads the store: the job is leased
// to this caller until its lease ends, so nothing runs it before the
// change commits, and a job whose change never committed finds nothing to
// index and only removes a document that does not exist.
func (w *Writer) Add(ctx context.Context, st store.Store, ops []store.Op, p Pending) ([]store.Op, error) {
	jops := p.Ops()
	if len(ops)+len(jops) <= store.MaxTransactOps {
		return append(ops, jops...), nil
	}
	if err := st.Write(ctx, jops...); err != nil {
		return nil, vp.Wrap("search.Add", vp.KindOf(err), err)
	}
	return ops, nil
}

// Done writes p's documents once the change has committed. docs are the
// current documents of p's ids (none for a deleted entity), as the writer
// holds them. With an outbox the job then ends (Settle): removed when the
// index took them, else rescheduled for the worker, whose handler reads
// the entities back from the store — so a retry, however late, indexes
// what is stored then.
func (w *Writer) Done(ctx context.Context, op string, p Pending, docs ...Doc) {
	if w == nil || w.Index == nil || len(p.ids) == 0 {
		return
	}
	has := make(map[string]bool, len(docs))
	for _, d := range docs {
		has[d.ID] = true
	}
	var gone []string
	for _, id := range p.ids {
		if !has[id] {
			gone = append(gone, id)
		}
	}
	var failed error
	if len(docs) > 0 {
		if err := w.Index.Upsert(ctx, docs...); err != nil {
			failed = err
			w.log().WarnContext(ctx, "search index not updated; the write stands", "op", op, "docs", len(docs), "err", err, "retried", p.queued)
		}
	}
	if len(gone) > 0 {
		if err := w.Index.Delete(ctx, KindPartition(p.tenant, p.kind), gone...); err != nil {
			failed = err
			w.log().WarnContext(ctx, "search index not updated after a delete; the delete stands", "op", op, "kind", p.kind, "err", err, "retried", p.queued)
		}
	}
	if p.queued {
		w.Outbox.Settle(ctx, failed, p.job)
	}
}

func (w *Writer) log() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}
