// Package store is the single-table storage port of VantagePeers. The domain
// is written once against it; store/sqlite (embedded) and store/dynamo (AWS)
// implement it and pass the same conformance suite (store/storetest).
//
// The model is DynamoDB's: items addressed by a partition key and a sort key,
// up to four sparse global secondary indexes, conditional writes,
// all-or-nothing transactions and a TTL attribute. Every partition key the
// domain builds starts with the tenant (see KEYS.md), which is what makes
// tenant isolation structural rather than a filter someone can forget.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Index selects the primary key or one of the secondary indexes.
type Index int

const (
	Primary Index = iota
	GSI1
	GSI2
	GSI3
	GSI4
)

// NumGSI is the number of secondary indexes every backend provides.
const NumGSI = 4

// MaxTransactOps is the most operations one Write may carry (DynamoDB's
// TransactWriteItems limit).
const MaxTransactOps = 100

// MaxItemBytes bounds an item's Data; DynamoDB's item limit is 400 KB and
// the keys need some of it.
const MaxItemBytes = 380 * 1024

// MaxTransactBytes bounds the total Data of one Write (DynamoDB refuses
// transactions over 4 MB).
const MaxTransactBytes = 4_000_000

// Key length limits (DynamoDB's: 2048 bytes for a partition key, 1024 for a
// sort key).
const (
	MaxPKBytes = 2048
	MaxSKBytes = 1024
)

func (i Index) String() string {
	if i == Primary {
		return "primary"
	}
	return fmt.Sprintf("gsi%d", int(i))
}

// Key addresses an item in the table or an entry in an index.
type Key struct {
	PK, SK string
}

// IsZero reports whether k is unset (the item is absent from that index).
func (k Key) IsZero() bool { return k.PK == "" && k.SK == "" }

// Item is one stored row. Data is the entity, serialised by the domain (JSON).
type Item struct {
	Key Key
	// GSI[i] is the item's key in secondary index i+1; a zero Key leaves the
	// item out of that index (sparse indexes).
	GSI [NumGSI]Key
	// ExpiresAt is a Unix time in seconds after which the item is treated as
	// absent by every read, whether or not the backend has purged it yet.
	// Zero means never.
	ExpiresAt int64
	// Version is maintained by the store: 1 when the item is created, +1 on
	// every put. Callers use it for optimistic concurrency (IfVersion).
	Version int64
	Data    []byte
}

// IndexKey returns the item's key in idx.
func (it Item) IndexKey(idx Index) Key {
	if idx == Primary {
		return it.Key
	}
	return it.GSI[idx-1]
}

// Position is where a query stopped: the table key of the last item read and,
// for a secondary index, its key there. Pass it back as Query.After.
type Position struct {
	Key   Key
	Index Key
}

// PositionOf returns the position just after it in a query on idx.
func PositionOf(it Item, idx Index) Position {
	p := Position{Key: it.Key}
	if idx != Primary {
		p.Index = it.GSI[idx-1]
	}
	return p
}

// Query reads the items of one partition of the table or of an index, in
// sort-key order. At most one of SKPrefix and the SKFrom/SKTo range is used.
type Query struct {
	Index Index
	PK    string
	// SKPrefix restricts to sort keys that start with it.
	SKPrefix string
	// SKFrom and SKTo bound the sort key, both inclusive; either may be empty.
	SKFrom, SKTo string
	// Reverse reads in descending sort-key order.
	Reverse bool
	// Limit is the most items returned; it must be positive.
	Limit int
	// After resumes a previous query just past this position.
	After *Position
}

// CondKind is the kind of precondition attached to a write.
type CondKind uint8

const (
	CondNone CondKind = iota
	CondNotExists
	CondExists
	CondVersion
)

// Cond is a write precondition. Expired items count as absent.
type Cond struct {
	Kind    CondKind
	Version int64
}

var (
	// Always imposes no precondition.
	Always = Cond{}
	// IfNotExists succeeds only when no live item has the key.
	IfNotExists = Cond{Kind: CondNotExists}
	// IfExists succeeds only when a live item has the key.
	IfExists = Cond{Kind: CondExists}
)

// IfVersion succeeds only when the live item's Version equals v.
func IfVersion(v int64) Cond { return Cond{Kind: CondVersion, Version: v} }

// OpKind is the kind of one write operation.
type OpKind uint8

const (
	OpPut OpKind = iota + 1
	OpDelete
	OpCheck
)

// Op is one write, or a check that takes part in a transaction's condition.
type Op struct {
	Kind OpKind
	Item Item // for OpPut
	Key  Key  // for OpDelete and OpCheck
	Cond Cond
}

// Put writes it whole (replacing any item with its key) when cond holds.
func Put(it Item, cond Cond) Op { return Op{Kind: OpPut, Item: it, Key: it.Key, Cond: cond} }

// Delete removes the item at k when cond holds. Deleting an absent item with
// Always succeeds.
func Delete(k Key, cond Cond) Op { return Op{Kind: OpDelete, Key: k, Cond: cond} }

// Check makes a transaction conditional on another item without writing it.
func Check(k Key, cond Cond) Op { return Op{Kind: OpCheck, Key: k, Cond: cond} }

// Store is the port. Implementations are safe for concurrent use.
//
// Reads through a secondary index are eventually consistent on DynamoDB
// (usually well under a second behind) while SQLite reads its own writes;
// and the order of items with equal index sort keys is not specified. The
// domain must not rely on either: it reads by primary key whenever it must
// see its own write.
type Store interface {
	// Get returns the live item at k, or an error wrapping ErrNotFound.
	Get(ctx context.Context, k Key) (Item, error)
	// Query returns up to q.Limit live items of a partition.
	Query(ctx context.Context, q Query) ([]Item, error)
	// Write applies ops atomically: one op is a single conditional write,
	// several are a transaction where all apply or none does. A failed
	// precondition returns a *ConditionError. Two ops may not address the
	// same key, and at most MaxTransactOps are allowed.
	Write(ctx context.Context, ops ...Op) error
	// Close releases the backend's resources.
	Close() error
}

var (
	// ErrNotFound: no live item has the key.
	ErrNotFound = errors.New("store: item not found")
	// ErrConditionFailed is matched by every *ConditionError.
	ErrConditionFailed = errors.New("store: condition failed")
	// ErrInvalid: the request itself is malformed (empty key, duplicate
	// keys in a transaction, too many ops, oversize data).
	ErrInvalid = errors.New("store: invalid request")
)

// ConditionError reports which operation of a Write failed its precondition.
type ConditionError struct {
	Index int // position in the ops slice
	Key   Key
}

func (e *ConditionError) Error() string {
	return fmt.Sprintf("store: condition failed on op %d (%s / %s)", e.Index, e.Key.PK, e.Key.SK)
}

func (e *ConditionError) Is(target error) bool { return target == ErrConditionFailed }

// LargeTransactor is an optional capability of a Store: one all-or-nothing
// write of more than MaxTransactOps operations. SQLite puts no cap on a
// transaction, so its backend offers it; DynamoDB caps TransactWriteItems
// at 100 items and 4 MB, so its adapter does not, and a caller that needs
// more than one Write's worth of atomicity there must build it itself
// (okfsvc's replace keeps a journal). Discover it with AsLargeTransactor;
// a decorator of a Store that has it must offer it too (Partitions does),
// or callers silently take their slower path.
type LargeTransactor interface {
	// TransactLarge applies ops as Write does — preconditions checked, all
	// apply or none does, no two on one key — up to MaxLargeTransactOps
	// operations and MaxLargeTransactBytes of data. It holds the single
	// writer for its whole length: other writes wait until it ends.
	TransactLarge(ctx context.Context, ops []Op) error
}

// Bounds of one TransactLarge: far above any single import (an OKF bundle
// holds at most 50,000 entities of a few ops each, 256 MB), low enough
// that a runaway caller is refused before it builds a transaction that
// holds the writer for minutes.
const (
	MaxLargeTransactOps   = 1_000_000
	MaxLargeTransactBytes = 512 << 20
)

// AsLargeTransactor returns st's LargeTransactor, if it offers one.
func AsLargeTransactor(st Store) (LargeTransactor, bool) {
	lt, ok := st.(LargeTransactor)
	return lt, ok
}

// Validate checks the shape of a Write request; adapters call it first so
// that both backends refuse the same things.
func Validate(ops []Op) error {
	return validate(ops, MaxTransactOps, "MaxTransactOps", MaxTransactBytes)
}

// ValidateLarge checks the shape of a TransactLarge request: Validate's
// rules with the bounds of a large transaction.
func ValidateLarge(ops []Op) error {
	return validate(ops, MaxLargeTransactOps, "MaxLargeTransactOps", MaxLargeTransactBytes)
}

func validate(ops []Op, maxOps int, limitName string, maxBytes int) error {
	if len(ops) == 0 {
		return fmt.Errorf("%w: no operations", ErrInvalid)
	}
	if len(ops) > maxOps {
		return fmt.Errorf("%w: %d operations, the limit is %d (store.%s)", ErrInvalid, len(ops), maxOps, limitName)
	}
	seen := make(map[Key]struct{}, len(ops))
	total := 0
	for i, op := range ops {
		if op.Kind < OpPut || op.Kind > OpCheck {
			return fmt.Errorf("%w: op %d has unknown kind %d", ErrInvalid, i, op.Kind)
		}
		if op.Cond.Kind > CondVersion {
			return fmt.Errorf("%w: op %d has unknown condition %d", ErrInvalid, i, op.Cond.Kind)
		}
		if op.Key.PK == "" || op.Key.SK == "" {
			return fmt.Errorf("%w: op %d has an empty key", ErrInvalid, i)
		}
		if len(op.Key.PK) > MaxPKBytes || len(op.Key.SK) > MaxSKBytes {
			return fmt.Errorf("%w: op %d key is too long", ErrInvalid, i)
		}
		total += len(op.Item.Data)
		if total > maxBytes {
			return fmt.Errorf("%w: the write carries over %d bytes", ErrInvalid, maxBytes)
		}
		if op.Kind == OpPut && op.Item.Key != op.Key {
			return fmt.Errorf("%w: op %d key does not match its item", ErrInvalid, i)
		}
		if op.Kind == OpPut && len(op.Item.Data) > MaxItemBytes {
			return fmt.Errorf("%w: op %d data is %d bytes, the limit is %d", ErrInvalid, i, len(op.Item.Data), MaxItemBytes)
		}
		if op.Kind == OpPut {
			for g, k := range op.Item.GSI {
				if (k.PK == "") != (k.SK == "") {
					return fmt.Errorf("%w: op %d gsi%d needs both keys or neither", ErrInvalid, i, g+1)
				}
			}
		}
		if _, dup := seen[op.Key]; dup {
			return fmt.Errorf("%w: two operations on %s / %s", ErrInvalid, op.Key.PK, op.Key.SK)
		}
		seen[op.Key] = struct{}{}
	}
	return nil
}

// ValidateQuery checks the shape of a Query.
func ValidateQuery(q Query) error {
	if q.PK == "" {
		return fmt.Errorf("%w: query without a partition key", ErrInvalid)
	}
	if q.Limit <= 0 {
		return fmt.Errorf("%w: query limit must be positive", ErrInvalid)
	}
	if q.Index < Primary || q.Index > GSI4 {
		return fmt.Errorf("%w: unknown index %d", ErrInvalid, q.Index)
	}
	if q.SKPrefix != "" && (q.SKFrom != "" || q.SKTo != "") {
		return fmt.Errorf("%w: use a prefix or a range, not both", ErrInvalid)
	}
	return nil
}

// Live reports whether an item with expiry exp is visible at now.
func Live(exp int64, now time.Time) bool { return exp == 0 || exp > now.Unix() }
