package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// Partitions returns st itself for one partition, else a view of st that
// reads the given partitions of an index as one (mergedPartitions).
func Partitions(st Store, pks []string) Store {
	if len(pks) == 1 {
		return st
	}
	m := mergedPartitions{Store: st, pks: pks}
	if lt, ok := AsLargeTransactor(st); ok {
		return mergedLarge{mergedPartitions: m, lt: lt}
	}
	return m
}

// mergedLarge is a mergedPartitions over a store with large transactions,
// which it keeps offering (a view that hid them would send its callers to
// their multi-write path without a word).
type mergedLarge struct {
	mergedPartitions
	lt LargeTransactor
}

func (m mergedLarge) TransactLarge(ctx context.Context, ops []Op) error {
	return m.lt.TransactLarge(ctx, ops)
}

// mergedPartitions reads several partitions of one secondary index, which
// share a sort-key order, as if they were one partition — so listing.List
// pages through "one partition per status" with its ordinary cursors. A
// page reads up to Limit+1 rows from every partition, bounded by the sort
// key of the last row returned (the cursor's position), and keeps the
// first Limit in sort-key order. Sort keys must be unique across the
// partitions (they end with the entity id).
type mergedPartitions struct {
	Store
	pks []string
}

func (m mergedPartitions) Query(ctx context.Context, q Query) ([]Item, error) {
	if q.Index == Primary {
		return nil, fmt.Errorf("%w: merged partitions are for secondary indexes", ErrInvalid)
	}
	g := int(q.Index) - 1
	bound := ""
	if q.After != nil {
		bound = q.After.Index.SK
	}
	if q.SKPrefix != "" {
		return nil, fmt.Errorf("%w: merged partitions take a sort-key range, not a prefix", ErrInvalid)
	}
	var rows []Item
	for _, pk := range m.pks {
		sub := Query{Index: q.Index, PK: pk, SKFrom: q.SKFrom, SKTo: q.SKTo, Reverse: q.Reverse, Limit: q.Limit + 1}
		if bound != "" {
			if q.Reverse {
				if sub.SKTo == "" || bound < sub.SKTo {
					sub.SKTo = bound
				}
			} else if bound > sub.SKFrom {
				sub.SKFrom = bound
			}
		}
		got, err := m.Store.Query(ctx, sub)
		if err != nil {
			return nil, err
		}
		for _, it := range got {
			if bound == "" || it.GSI[g].SK != bound {
				rows = append(rows, it)
			}
		}
	}
	slices.SortFunc(rows, func(a, b Item) int {
		c := strings.Compare(a.GSI[g].SK, b.GSI[g].SK)
		if c == 0 {
			c = strings.Compare(a.Key.PK, b.Key.PK)
		}
		if q.Reverse {
			return -c
		}
		return c
	})
	// An index that lags (DynamoDB) may briefly show one item in two
	// partitions; keep its first occurrence.
	seen := map[Key]bool{}
	out := rows[:0]
	for _, it := range rows {
		if !seen[it.Key] {
			seen[it.Key] = true
			out = append(out, it)
		}
	}
	if len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, nil
}
