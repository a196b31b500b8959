// Package memory is the domain service of what the team knows: typed,
// namespaced memories (store_memory, recall, text_search, hybrid_search...),
// episodes (memories of type "episode" with a structured payload) and fix
// patterns with their attempts.
//
// The store is the source of truth; the search index (search.Index) is a
// derived view. Writes index the text first and then write the store, so a
// memory is found by text_search the moment store_memory returns; vectors
// come later from an "embed" job (queue port) run by shared/jobs. Every
// search hit is read back from the store by primary key and dropped when it
// is missing, deleted, superseded, expired or in a namespace the caller may
// not read: the index narrows, the store decides.
package memory

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Options configures a Service. Store, Index, Embedder, Queue and Cursors
// are required.
type Options struct {
	Store    store.Store
	Index    search.Index
	Embedder embed.Embedder
	Queue    queue.Queue
	Cursors  *listing.Signer
	Now      func() time.Time
	Logger   *slog.Logger
}

// Service is the memory domain.
type Service struct {
	st      store.Store
	idx     search.Index
	emb     embed.Embedder
	q       queue.Queue
	cursors *listing.Signer
	now     func() time.Time
	ids     *vp.IDs
	log     *slog.Logger

	// markers caches, per tenant, that the tenant's embedder marker names
	// the current embedder (see ensureEmbedderMarker).
	markers sync.Map
}

// New returns a Service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Store == nil || o.Index == nil || o.Embedder == nil || o.Queue == nil || o.Cursors == nil {
		panic("memory.New: Store, Index, Embedder, Queue and Cursors are required")
	}
	return &Service{st: o.Store, idx: o.Index, emb: o.Embedder, q: o.Queue, cursors: o.Cursors,
		now: o.Now, ids: vp.NewIDs(o.Now), log: o.Logger}
}

// EmbedderName is the name of the embedder vectors are made and compared with.
func (s *Service) EmbedderName() string { return s.emb.Name() }

func (s *Service) nowMS() int64 { return s.now().UnixMilli() }

// ---- helpers ----

// tenantOf returns the principal's tenant, refusing a principal without one.
func tenantOf(op string, p vp.Principal) (string, error) {
	if !vp.ValidTenant(p.Tenant) {
		return "", vp.E(op, vp.KindUnauthorized, "", "the credential carries no valid tenant")
	}
	return p.Tenant, nil
}

// memoryItem builds m's item; fixItem and attemptItem likewise.
func memoryItem(op, tenant string, m vp.Memory) (store.Item, error) {
	it, err := memoryTable(m).Item(op, tenant, m)
	return fits(op, it, err)
}

func fixItem(op, tenant string, f vp.FixPattern) (store.Item, error) {
	it, err := fixPatterns.Item(op, tenant, f)
	return fits(op, it, err)
}

func attemptItem(op, tenant string, a vp.FixAttempt) (store.Item, error) {
	it, err := fixAttempts.Item(op, tenant, a)
	return fits(op, it, err)
}

// fits refuses an item too large for the store in words the caller can act
// on (the store would only call it invalid): texts here are long (100 KB of
// memory content), and escaping makes some take several times their length
// once encoded.
func fits(op string, it store.Item, err error) (store.Item, error) {
	if err == nil && len(it.Data) > store.MaxItemBytes {
		err = vp.Errorf(op, vp.KindTooLarge, "content", "the entity encodes to %d bytes; the stored limit is %d bytes — shorten the text", len(it.Data), store.MaxItemBytes)
	}
	return it, err
}

// get reads one entity. Memories expire, so a missing one is "no memory
// %q in this tenant (it may have expired)": unlike records.Get's message it
// names the kind of entity, not the argument, and says why it may be gone.
func get[T any](ctx context.Context, s *Service, op, field, what, id string, k store.Key) (T, store.Item, error) {
	v, it, err := records.Get[T](ctx, s.st, op, field, id, k)
	if vp.IsKind(err, vp.KindNotFound) {
		return v, it, vp.Errorf(op, vp.KindNotFound, field, "no %s %q in this tenant (it may have expired)", what, id)
	}
	return v, it, err
}

// checkID validates an entity id argument.
func checkID(op, field, id string) error { return vp.CheckName(op, field, id, true) }

func describePrefixes(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", ps)
}
