// Package table declares where each entity lives in the single table.
//
// An entity's keys are written once, as Go values: a partition-key and a
// sort-key template for the table and for each secondary index it is in,
// with the access pattern each one serves. Items, keys, gets, queries and
// version-checked updates are built from that declaration, and
// shared/store/KEYS.md is generated from the declarations of every package
// (shared/store/keysdoc), so the documentation cannot drift from the code.
//
// A template is literal text with {field} placeholders, for example
// "TASGN#{assignedTo}#{status}". The entity's Fields function supplies the
// values. Tenant data is prefixed with "T#<tenant>#" by the table itself,
// which is what keeps tenant isolation structural: domain code never writes
// a partition key by hand. An index whose key would have an empty
// placeholder is left out of the item (a sparse index), unless the
// placeholder is optional ("{instance?}": it may be empty). {tenant} is the
// tenant the item is written for, unless Fields sets it: the entries of a
// Global index name their tenant with it.
package table

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/records"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Values names the placeholder values of one key.
type Values map[string]string

// Key is one declared key: the table's primary key or an index entry.
type Key struct {
	// Index is store.Primary or the secondary index slot.
	Index store.Index
	// PK and SK are templates. An empty SK template makes a key whose sort
	// key is whatever the caller queries by (a partition read only).
	PK, SK string
	// Pattern is the access pattern this key serves, as KEYS.md shows it.
	Pattern string
	// Note says anything a reader of KEYS.md must know (sparse, moved on
	// update, TTL ...).
	Note string
	// Global marks a secondary index of tenant data whose partition key has
	// no tenant prefix: an index read only by server-side jobs that serve
	// every tenant (due recurring templates, queued jobs). Its entries must
	// name their tenant (a placeholder of the sort key, or the item read
	// back). Ignored on the primary key and in a Global schema.
	Global bool
}

// Schema declares an entity.
type Schema[T any] struct {
	// Entity is its name in errors and in KEYS.md.
	Entity string
	// Global marks keys without a tenant prefix: credentials looked up
	// before the tenant is known, and server-side job indexes whose entries
	// name their tenant. Everything else is tenant data.
	Global bool
	// Primary is the table key; Indexes are the secondary index entries.
	Primary Key
	Indexes []Key
	// Fields returns the placeholder values of v.
	Fields func(v T) Values
	// Encode, when set, serialises v instead of JSON (an entity stored with
	// extra data, such as a receipt carrying its message).
	Encode func(v T) ([]byte, error)
	// Expires, when set, returns the Unix time in seconds after which v's
	// item is gone from every read (store.Item.ExpiresAt; 0 = never).
	Expires func(v T) int64
}

// Table is a declared entity. It is immutable and safe for concurrent use.
type Table[T any] struct {
	s              Schema[T]
	primPK, primSK tmpl
	pk, sk         [store.NumGSI]tmpl
	has            [store.NumGSI]bool
	global         [store.NumGSI]bool
}

// Declare checks a schema and returns its table. A malformed declaration
// is a programming error caught by the package's tests, so it panics.
func Declare[T any](s Schema[T]) *Table[T] {
	t := &Table[T]{s: s}
	if s.Entity == "" || s.Fields == nil {
		panic("table: a schema needs an Entity and a Fields function")
	}
	if s.Primary.Index != store.Primary || s.Primary.PK == "" || s.Primary.SK == "" {
		panic("table " + s.Entity + ": the primary key needs PK and SK templates")
	}
	t.primPK, t.primSK = parse(s.Primary.PK), parse(s.Primary.SK)
	for _, k := range s.Indexes {
		if k.Index < store.GSI1 || k.Index > store.GSI4 || k.PK == "" || k.SK == "" {
			panic(fmt.Sprintf("table %s: index %v needs a slot gsi1..gsi4 and PK and SK templates", s.Entity, k.Index))
		}
		g := int(k.Index) - 1
		if t.has[g] {
			panic(fmt.Sprintf("table %s: %v declared twice", s.Entity, k.Index))
		}
		t.has[g], t.global[g] = true, k.Global
		t.pk[g], t.sk[g] = parse(k.PK), parse(k.SK)
	}
	return t
}

// Doc describes the table for KEYS.md.
func (t *Table[T]) Doc() Doc {
	return Doc{Entity: t.s.Entity, Global: t.s.Global, Keys: append([]Key{t.s.Primary}, t.s.Indexes...)}
}

// Doc is a declaration as documentation.
type Doc struct {
	Entity string
	Global bool
	Keys   []Key
}

// Entity returns the declared name.
func (t *Table[T]) Entity() string { return t.s.Entity }

func (t *Table[T]) prefix(tenant string) string {
	if t.s.Global {
		return ""
	}
	return TenantPrefix(tenant)
}

// TenantPrefix is the start of every partition key of a tenant's data.
func TenantPrefix(tenant string) string { return "T#" + tenant + "#" }

// Key returns v's primary key.
func (t *Table[T]) Key(tenant string, v T) store.Key { return t.KeyOf(tenant, t.s.Fields(v)) }

// KeyOf returns the primary key with the given values (an id, usually).
func (t *Table[T]) KeyOf(tenant string, vals Values) store.Key {
	pk, _ := t.primPK.render(t.prefix(tenant), vals)
	sk, _ := t.primSK.render("", vals)
	return store.Key{PK: pk, SK: sk}
}

// PK returns the partition key of idx (store.Primary or a GSI) with vals.
func (t *Table[T]) PK(tenant string, idx store.Index, vals Values) string {
	if idx == store.Primary {
		pk, _ := t.primPK.render(t.prefix(tenant), vals)
		return pk
	}
	t.mustHave(idx)
	pk, _ := t.pk[idx-1].render(t.indexPrefix(idx, tenant), vals)
	return pk
}

// indexPrefix is the tenant prefix of idx's partition keys ("" for a
// global index).
func (t *Table[T]) indexPrefix(idx store.Index, tenant string) string {
	if t.global[idx-1] {
		return ""
	}
	return t.prefix(tenant)
}

// SK renders the sort key of idx with vals (for range bounds).
func (t *Table[T]) SK(idx store.Index, vals Values) string {
	if idx == store.Primary {
		sk, _ := t.primSK.render("", vals)
		return sk
	}
	t.mustHave(idx)
	sk, _ := t.sk[idx-1].render("", vals)
	return sk
}

// Query starts a query of one partition of idx.
func (t *Table[T]) Query(tenant string, idx store.Index, vals Values) store.Query {
	return store.Query{Index: idx, PK: t.PK(tenant, idx, vals)}
}

func (t *Table[T]) mustHave(idx store.Index) {
	if idx < store.GSI1 || idx > store.GSI4 || !t.has[idx-1] {
		panic(fmt.Sprintf("table %s: %v is not declared", t.s.Entity, idx))
	}
}

// Item builds v's stored item: its key, its index entries (an entry with an
// empty placeholder is left out) and its data.
func (t *Table[T]) Item(op, tenant string, v T) (store.Item, error) {
	vals := t.s.Fields(v)
	var data []byte
	var err error
	if t.s.Encode != nil {
		data, err = t.s.Encode(v)
		if err != nil {
			err = vp.Wrap(op, vp.KindInternal, err)
		}
	} else {
		data, err = records.Encode(op, v)
	}
	if err != nil {
		return store.Item{}, err
	}
	if _, set := vals["tenant"]; !set {
		vals = maps.Clone(vals)
		if vals == nil {
			vals = Values{}
		}
		vals["tenant"] = tenant
	}
	it := store.Item{Key: t.KeyOf(tenant, vals), Data: data}
	if t.s.Expires != nil {
		it.ExpiresAt = t.s.Expires(v)
	}
	for g := range store.NumGSI {
		if !t.has[g] {
			continue
		}
		pk, ok1 := t.pk[g].render(t.indexPrefix(store.Index(g+1), tenant), vals)
		sk, ok2 := t.sk[g].render("", vals)
		if ok1 && ok2 {
			it.GSI[g] = store.Key{PK: pk, SK: sk}
		}
	}
	return it, nil
}

// Get reads and decodes the entity at k. A missing item is a NotFound error
// naming field and id, as every tool reports it.
func (t *Table[T]) Get(ctx context.Context, st store.Store, op, field, id string, k store.Key) (T, store.Item, error) {
	return records.Get[T](ctx, st, op, field, id, k)
}

// MaxUpdateAttempts is how often Update rereads an entity another writer
// changed under it before it reports a conflict.
const MaxUpdateAttempts = 8

// Change is what an update does to the entity just read: it edits v in
// place and returns the operations that must commit with it.
type Change[T any] func(v *T, it store.Item) ([]store.Op, error)

// Update is the one read-modify-write of the domain: it reads the entity at
// k, applies change, and writes it back under IfVersion with change's
// operations in one transaction, starting again from the read when another
// writer got there first (up to MaxUpdateAttempts). It returns the entity
// as written and as it was.
func (t *Table[T]) Update(ctx context.Context, st store.Store, op, tenant, field, id string, k store.Key, change Change[T]) (now, was T, err error) {
	err = Retry(ctx, op, field, id, func() error {
		var it store.Item
		was, it, err = t.Get(ctx, st, op, field, id, k)
		if err != nil {
			return err
		}
		now = was
		extra, err := change(&now, it)
		if err != nil {
			return err
		}
		item, err := t.Item(op, tenant, now)
		if err != nil {
			return err
		}
		return st.Write(ctx, append([]store.Op{store.Put(item, store.IfVersion(it.Version))}, extra...)...)
	})
	return now, was, err
}

// Retry runs attempt until it does not lose a conditional write, at most
// MaxUpdateAttempts times: the one retry policy for version conflicts. A
// lost write after the last attempt is a conflict naming field and id;
// other store errors are mapped onto domain kinds. Conflicts says what to
// do when a caller needs another bound or another answer after the last
// attempt.
func Retry(ctx context.Context, op, field, id string, attempt func() error) error {
	return Conflicts{Op: op, Field: field, ID: id}.Retry(ctx, attempt)
}

// Conflicts is the retry policy of one read-modify-write: every loop that
// rereads after losing a conditional write goes through its Retry, so that
// the bound, the mapping of store errors and the cancelled-context check
// are written once (a test of this package refuses hand-written loops).
type Conflicts struct {
	// Op, Field and ID name the write in its errors.
	Op, Field, ID string
	// Max bounds the attempts (0: MaxUpdateAttempts). A row that many
	// writers touch at once (a diary day) may need more.
	Max int
	// Exhausted, when set, is what Retry returns after the last attempt
	// lost its write, instead of a conflict naming Field and ID: the
	// caller's own message, another kind, or nil when the caller answers
	// without an error (it then sets its result in Exhausted).
	Exhausted func() error
	// Pause, when set, runs after a lost write that another attempt
	// follows (n is that attempt, from 1): a jittered wait spreads writers
	// racing on one row. It then answers a cancelled context in Retry's
	// place: its error ends Retry as it is.
	Pause func(ctx context.Context, n int) error
	// Unmapped returns attempt's errors other than a lost write as they
	// are: for a caller whose errors are not the domain's kinds (the job
	// queue's) or are only logged, and for an attempt that passes on the
	// errors of another package as it always did.
	Unmapped bool
}

// Retry runs attempt until it returns anything but store.ErrConditionFailed
// (wrapped or not). Each attempt must read again what it writes
// conditionally: state kept across attempts (an id chosen once) lives in
// the caller's closure. A *vp.Error from attempt is returned unchanged;
// another error is mapped onto a domain kind (unless Unmapped).
func (c Conflicts) Retry(ctx context.Context, attempt func() error) error {
	n := c.Max
	if n <= 0 {
		n = MaxUpdateAttempts
	}
	for i := range n {
		err := attempt()
		if !errors.Is(err, store.ErrConditionFailed) {
			var ve *vp.Error
			if err == nil || c.Unmapped || errors.As(err, &ve) {
				return err
			}
			return records.Err(c.Op, err)
		}
		switch {
		case c.Pause == nil:
			if ctx.Err() != nil {
				return vp.Wrap(c.Op, vp.KindInternal, ctx.Err())
			}
		case i+1 < n:
			if err := c.Pause(ctx, i+1); err != nil {
				return err
			}
		}
	}
	if c.Exhausted != nil {
		return c.Exhausted()
	}
	return vp.Errorf(c.Op, vp.KindConflict, c.Field, "%s kept changing under this call; read it again and retry", c.ID)
}

// ---- templates

// tmpl is a parsed key template: literal parts and placeholders.
type tmpl []part

type part struct {
	lit      string
	field    string // a placeholder when set
	optional bool   // "{field?}": may be empty without leaving the entry out
}

func parse(s string) tmpl {
	var out tmpl
	for s != "" {
		i := strings.IndexByte(s, '{')
		if i < 0 {
			out = append(out, part{lit: s})
			break
		}
		if i > 0 {
			out = append(out, part{lit: s[:i]})
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 2 {
			panic("table: unterminated or empty placeholder in " + s)
		}
		field, optional := strings.CutSuffix(s[i+1:i+j], "?")
		if field == "" {
			panic("table: empty placeholder in " + s)
		}
		out = append(out, part{field: field, optional: optional})
		s = s[i+j+1:]
	}
	return out
}

// render fills the template after prefix; ok is false when a placeholder
// that is not optional is empty (the entry is then left out of a sparse
// index).
func (t tmpl) render(prefix string, vals Values) (string, bool) {
	n := len(prefix)
	for _, p := range t {
		n += len(p.lit) + len(vals[p.field])
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(prefix)
	ok := true
	for _, p := range t {
		if p.field == "" {
			b.WriteString(p.lit)
			continue
		}
		v := vals[p.field]
		if v == "" && !p.optional {
			ok = false
		}
		b.WriteString(v)
	}
	return b.String(), ok
}

// Millis renders a millisecond time so that it sorts as a string (13 digits).
func Millis(ms int64) string { return fmt.Sprintf("%013d", ms) }
