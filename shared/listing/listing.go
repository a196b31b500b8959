// Package listing is the one implementation of the list contract every
// list_* tool follows: the {items, nextCursor?} envelope,
// limit clamping, lite/full projection, the 50,000-byte cap and signed,
// tenant-bound cursors.
package listing

import (
	"context"
	"encoding/json"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

const (
	DefaultLimit = 20
	MaxLimit     = 200
	// MaxEnvelopeBytes is the size the serialised envelope must stay under.
	MaxEnvelopeBytes = 50_000
	// maxScan bounds how many stored rows one page may read while skipping
	// rows a filter rejects, so that a rare filter cannot turn one call into
	// a scan of the partition. The page then ends early with a cursor.
	maxScan = 5_000
)

// Params are the paging arguments every list_* tool accepts. What they
// mean is said once, in the MCP server's instructions (ListConvention),
// not in each of the twenty tools/list entries that embed them.
type Params struct {
	Limit  *int   `json:"limit,omitempty"`
	Cursor string `json:"cursor,omitempty"`
	Fields string `json:"fields,omitempty"`
}

// ListConvention describes Params and the page every list_* tool returns.
const ListConvention = "Every list_* tool returns {items, nextCursor?}: pass nextCursor as cursor for the next page " +
	"(absent on the last page); limit defaults to 20 (max 200); fields lite|full, default full."

// Limits bound the paging arguments: a limit out of 1..MaxLimit is
// clamped (ClampLimit), not refused.
func (Params) Limits() vp.Limit { return vp.Between("limit", 1, MaxLimit) }

// Page is the envelope. NextCursor is absent, never null, on the last page.
type Page[T any] struct {
	Items      []T    `json:"items"`
	NextCursor string `json:"nextCursor,omitempty"`
}

// ClampLimit applies the contract's default and bounds.
func ClampLimit(n *int) int {
	switch {
	case n == nil:
		return DefaultLimit
	case *n < 1:
		return 1
	case *n > MaxLimit:
		return MaxLimit
	}
	return *n
}

// CheckFields validates the projection argument.
func CheckFields(op, fields string) error {
	switch fields {
	case "", "full", "lite":
		return nil
	}
	return vp.Errorf(op, vp.KindInvalid, "fields", "must be \"lite\" or \"full\", got %q", fields)
}

// Request describes one page to read.
type Request struct {
	Op     string
	Tenant string
	// Query is the store query; its Limit and After are set by List.
	Query store.Query
	// Binding names everything that shapes the result (the tool and its
	// filters). A cursor is only accepted back with the same binding.
	Binding string
	Params  Params
	// LiteKeys are the JSON keys kept when fields=lite, besides _id and
	// _creationTime.
	LiteKeys []string
}

// List reads one page: it decodes the cursor, queries the store, decodes
// and filters rows with keep, projects, enforces the byte cap and signs the
// next cursor. keep returns false to skip a row.
func List[T any](ctx context.Context, st store.Store, signer *Signer, r Request, keep func(store.Item) (T, bool, error)) (Page[any], error) {
	if err := CheckFields(r.Op, r.Params.Fields); err != nil {
		return Page[any]{}, err
	}
	limit := ClampLimit(r.Params.Limit)
	q := r.Query
	if r.Params.Cursor != "" {
		pos, err := signer.Decode(r.Tenant, r.Binding, r.Params.Cursor)
		if err != nil {
			return Page[any]{}, vp.Wrap(r.Op, vp.KindInvalid, &vp.Error{Field: "cursor", Kind: vp.KindInvalid, Msg: err.Error()})
		}
		q.After = &pos
	}
	type entry struct {
		v   T
		pos store.Position
	}
	var got []entry
	var resume *store.Position // where the next page starts, when there is one
	scanned := 0
	var lastScanned *store.Position
	for len(got) <= limit && scanned < maxScan {
		q.Limit = min(limit+1-len(got)+16, 500)
		rows, err := st.Query(ctx, q)
		if err != nil {
			return Page[any]{}, vp.Wrap(r.Op, vp.KindInternal, err)
		}
		for _, it := range rows {
			scanned++
			p := store.PositionOf(it, q.Index)
			lastScanned = &p
			v, ok, err := keep(it)
			if err != nil {
				return Page[any]{}, err
			}
			if ok {
				got = append(got, entry{v, p})
				if len(got) > limit {
					break
				}
			}
		}
		if len(got) > limit {
			got = got[:limit]
			resume = &got[limit-1].pos
			break
		}
		if len(rows) < q.Limit {
			break // partition exhausted
		}
		q.After = lastScanned
		if scanned >= maxScan {
			resume = lastScanned // stop scanning; go on after the last row read
		}
	}
	items := make([]any, len(got))
	for i, e := range got {
		items[i] = project(e.v, r.Params.Fields == "lite", r.LiteKeys)
	}
	n := len(items)
	for n > 1 && envelopeSize(items[:n]) >= MaxEnvelopeBytes {
		n /= 2
	}
	page := Page[any]{Items: items[:n]}
	switch {
	case n < len(got):
		page.NextCursor = signer.Encode(r.Tenant, r.Binding, got[n-1].pos)
	case resume != nil:
		page.NextCursor = signer.Encode(r.Tenant, r.Binding, *resume)
	}
	return page, nil
}

func envelopeSize(items []any) int {
	b, _ := json.Marshal(Page[any]{Items: items, NextCursor: "x"})
	return len(b) + 200 // room for the real cursor
}

// project returns v as is (full) or as a map of its lite keys.
func project(v any, lite bool, keys []string) any {
	if !lite {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return v
	}
	out := make(map[string]json.RawMessage, len(keys)+2)
	for _, k := range append([]string{"_id", "_creationTime"}, keys...) {
		if raw, ok := m[k]; ok {
			out[k] = raw
		}
	}
	return out
}
