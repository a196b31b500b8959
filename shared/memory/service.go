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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/queue"
	"github.com/vantagepeers/vantagepeers/shared/records"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
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

// ---- keys (shared/store/KEYS.md lists the access patterns) ----

func tp(tenant string) string { return "T#" + tenant + "#" }

// Sort-key prefixes of the namespace indexes: live memories sort after
// archived (superseded) ones, so a reverse query lists live ones first.
const (
	skLive     = "L#"
	skArchived = "A#"
)

func memoryKey(tenant, id string) store.Key {
	return store.Key{PK: tp(tenant) + "MEM#" + id, SK: "MEM"}
}

func fixKey(tenant, id string) store.Key {
	return store.Key{PK: tp(tenant) + "FIX#" + id, SK: "FIX"}
}

func fixAttemptKey(tenant, patternID, id string) store.Key {
	return store.Key{PK: tp(tenant) + "FIX#" + patternID, SK: "ATT#" + id}
}

func markerKey(tenant string) store.Key {
	return store.Key{PK: tp(tenant) + "EMBEDDER", SK: "EMBEDDER"}
}

func memNSPK(tenant, ns string) string        { return tp(tenant) + "MEMNS#" + ns }
func memNSTypePK(tenant, ns, t string) string { return tp(tenant) + "MEMNST#" + ns + "#" + t }
func memsPK(tenant string) string             { return tp(tenant) + "MEMS" }
func episodesPK(tenant string) string         { return tp(tenant) + "EPIS" }
func episodesByPK(tenant, orch string) string { return tp(tenant) + "EPIBY#" + orch }
func fixProjectPK(tenant, p string) string    { return tp(tenant) + "FIXPROJ#" + p }
func fixesPK(tenant string) string            { return tp(tenant) + "FIXES" }

// memoryItem builds the store item of m with its index keys:
//
//	gsi1 MEMNS#<ns>          L#<id> | A#<id>   list_memories
//	gsi2 MEMNST#<ns>#<type>  L#<id> | A#<id>   list_memories with type; list_episodes by namespace
//	gsi3 MEMS | EPIS         <id>              live memories / live episodes (list_episodes, re-embedding)
//	gsi4 EPIBY#<createdBy>   <id>              live episodes by orchestrator
//
// A deleted memory is in no index; a superseded one only in gsi1/gsi2 under
// A#. The TTL attribute makes an expired memory invisible to every read.
func memoryItem(op, tenant string, m vp.Memory) (store.Item, error) {
	it := store.Item{Key: memoryKey(tenant, m.ID)}
	if m.ExpiresAt > 0 {
		it.ExpiresAt = (m.ExpiresAt + 999) / 1000 // round up: the domain checks the ms itself
	}
	if m.DeletedAt == 0 {
		sk := skArchived + m.ID
		if m.IsLatest {
			sk = skLive + m.ID
		}
		it.GSI[0] = store.Key{PK: memNSPK(tenant, m.Namespace), SK: sk}
		it.GSI[1] = store.Key{PK: memNSTypePK(tenant, m.Namespace, m.Type), SK: sk}
		if m.IsLatest {
			if m.Type == vp.MemoryTypeEpisode {
				it.GSI[2] = store.Key{PK: episodesPK(tenant), SK: m.ID}
				it.GSI[3] = store.Key{PK: episodesByPK(tenant, m.CreatedBy), SK: m.ID}
			} else {
				it.GSI[2] = store.Key{PK: memsPK(tenant), SK: m.ID}
			}
		}
	}
	data, err := encode(op, m)
	if err != nil {
		return it, err
	}
	it.Data = data
	return it, nil
}

// gsi1 FIXPROJ#<sourceProject>  <id>   list_fix_patterns by project
// gsi2 FIXES                    <id>   list_fix_patterns; re-embedding
func fixItem(op, tenant string, f vp.FixPattern) (store.Item, error) {
	it := store.Item{Key: fixKey(tenant, f.ID)}
	it.GSI[0] = store.Key{PK: fixProjectPK(tenant, f.SourceProject), SK: f.ID}
	it.GSI[1] = store.Key{PK: fixesPK(tenant), SK: f.ID}
	data, err := encode(op, f)
	if err != nil {
		return it, err
	}
	it.Data = data
	return it, nil
}

// ---- helpers ----

// tenantOf returns the principal's tenant, refusing a principal without one.
func tenantOf(op string, p vp.Principal) (string, error) {
	if !vp.ValidTenant(p.Tenant) {
		return "", vp.E(op, vp.KindUnauthorized, "", "the credential carries no valid tenant")
	}
	return p.Tenant, nil
}

// encode serialises an entity without HTML escaping (which would inflate
// '<', '>' and '&' sixfold) and refuses one too large for a store item.
func encode(op string, v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, vp.Wrap(op, vp.KindInternal, err)
	}
	data := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if len(data) > store.MaxItemBytes {
		return nil, vp.Errorf(op, vp.KindTooLarge, "content", "the entity encodes to %d bytes; the stored limit is %d bytes — shorten the text", len(data), store.MaxItemBytes)
	}
	return data, nil
}

func decode[T any](op string, it store.Item) (T, error) { return records.Decode[T](op, it) }

// storeErr maps store errors onto domain kinds.
func storeErr(op string, err error) error { return records.Err(op, err) }

// get reads and decodes one entity; a missing item is a NotFound naming field.
func get[T any](ctx context.Context, s *Service, op, field, what, id string, k store.Key) (T, store.Item, error) {
	var zero T
	it, err := s.st.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return zero, it, vp.Errorf(op, vp.KindNotFound, field, "no %s %q in this tenant (it may have expired)", what, id)
	}
	if err != nil {
		return zero, it, storeErr(op, err)
	}
	v, err := decode[T](op, it)
	return v, it, err
}

// checkID validates an entity id argument.
func checkID(op, field, id string) error { return vp.CheckName(op, field, id, true) }

// maxRetries bounds optimistic-concurrency loops.
const maxRetries = 8

func conflictErr(op, field, id string) error {
	return vp.Errorf(op, vp.KindConflict, field, "%q kept changing while being updated; retry", id)
}

func describePrefixes(ps []string) string {
	if len(ps) == 0 {
		return "none"
	}
	return fmt.Sprintf("%q", ps)
}
