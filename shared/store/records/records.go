// Package records is the small bridge between the store port and the domain
// services: it decodes stored entities and maps store errors onto domain
// error kinds, so that every service reports them the same way.
package records

import (
	"context"
	"errors"

	// Entities are decoded on every read of every tool; this decoder, which
	// the MCP SDK already uses for its own messages, does it 2.4x faster than
	// encoding/json (4.7 -> 2.0 us for a message receipt) with the same
	// semantics.
	"github.com/segmentio/encoding/json"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Decode unmarshals an item's entity.
func Decode[T any](op string, it store.Item) (T, error) {
	var v T
	if err := json.Unmarshal(it.Data, &v); err != nil {
		return v, vp.Wrap(op, vp.KindInternal, err)
	}
	return v, nil
}

// Err maps a store error onto a domain kind: not found, conflict (a lost
// conditional write), invalid, or internal.
func Err(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNotFound):
		return vp.Wrap(op, vp.KindNotFound, err)
	case errors.Is(err, store.ErrConditionFailed):
		return vp.Wrap(op, vp.KindConflict, err)
	case errors.Is(err, store.ErrInvalid):
		return vp.Wrap(op, vp.KindInvalid, err)
	}
	return vp.Wrap(op, vp.KindInternal, err)
}

// Encode serialises an entity for its item. Entities are plain structs, so
// a failure is a bug, reported as an internal error rather than a panic.
func Encode(op string, v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, vp.Wrap(op, vp.KindInternal, err)
	}
	return b, nil
}

// Get reads and decodes one entity; a missing item is a NotFound naming
// field and id ("no taskId \"tsk_…\" in this tenant").
func Get[T any](ctx context.Context, st store.Store, op, field, id string, k store.Key) (T, store.Item, error) {
	var zero T
	it, err := st.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return zero, it, vp.Errorf(op, vp.KindNotFound, field, "no %s %q in this tenant", field, id)
	}
	if err != nil {
		return zero, it, Err(op, err)
	}
	v, err := Decode[T](op, it)
	return v, it, err
}

// QueryAll reads a whole (small) partition, up to max items, in pages of 200.
func QueryAll(ctx context.Context, st store.Store, q store.Query, max int) ([]store.Item, error) {
	var out []store.Item
	for len(out) < max {
		q.Limit = min(200, max-len(out))
		rows, err := st.Query(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
		if len(rows) < q.Limit {
			break
		}
		p := store.PositionOf(rows[len(rows)-1], q.Index)
		q.After = &p
	}
	return out, nil
}

// Scan walks a partition in pages of 100, calling fn on each item until it
// returns false or an error.
func Scan(ctx context.Context, st store.Store, q store.Query, fn func(store.Item) (bool, error)) error {
	for {
		q.Limit = 100
		rows, err := st.Query(ctx, q)
		if err != nil {
			return err
		}
		for _, it := range rows {
			if more, err := fn(it); err != nil || !more {
				return err
			}
		}
		if len(rows) < q.Limit {
			return nil
		}
		pos := store.PositionOf(rows[len(rows)-1], q.Index)
		q.After = &pos
	}
}
