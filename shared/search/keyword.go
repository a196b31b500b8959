package search

import (
	"context"
	"log/slog"
	"strings"
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

// Writer keeps an aggregate's documents in step with its committed writes.
// The store is the source of truth: a failed index write is logged and the
// write stands, and searches read every hit back from the store. A nil
// Writer or one without an index does nothing.
type Writer struct {
	Index  Index
	Logger *slog.Logger
}

// Upsert indexes documents after a committed write.
func (w *Writer) Upsert(ctx context.Context, op string, docs ...Doc) {
	if w == nil || w.Index == nil || len(docs) == 0 {
		return
	}
	if err := w.Index.Upsert(ctx, docs...); err != nil {
		w.log().WarnContext(ctx, "search index not updated; the write stands", "op", op, "docs", len(docs), "err", err)
	}
}

// Delete removes the documents of deleted entities (same failure rule).
func (w *Writer) Delete(ctx context.Context, op, tenant, kind string, ids ...string) {
	if w == nil || w.Index == nil || len(ids) == 0 {
		return
	}
	if err := w.Index.Delete(ctx, KindPartition(tenant, kind), ids...); err != nil {
		w.log().WarnContext(ctx, "search index not updated after a delete; the delete stands", "op", op, "kind", kind, "err", err)
	}
}

func (w *Writer) log() *slog.Logger {
	if w.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Logger
}
