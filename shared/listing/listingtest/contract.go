package listingtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Contract checks the list contract on a listing whose filters match
// exactly n seeded rows: drained 20 at a time it yields n distinct rows and
// ends without a cursor; limit 500 is clamped to at most 200 rows; a
// tampered cursor is refused naming "cursor". It returns the rows in order.
func Contract(t *testing.T, n int, list func(listing.Params) (listing.Page[any], error)) []any {
	t.Helper()
	limit := 20
	var all []any
	seen := map[string]bool{}
	cursor, firstCursor := "", ""
	for page := 0; ; page++ {
		if page > n/limit+2 {
			t.Fatalf("pagination does not end after %d pages", page)
		}
		p, err := list(listing.Params{Limit: &limit, Cursor: cursor})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Items) > limit {
			t.Fatalf("page of %d rows with limit %d", len(p.Items), limit)
		}
		for _, it := range p.Items {
			id := RowID(t, it)
			if seen[id] {
				t.Fatalf("row %s listed twice", id)
			}
			seen[id] = true
		}
		all = append(all, p.Items...)
		if page == 0 {
			firstCursor = p.NextCursor
		}
		if p.NextCursor == "" {
			break
		}
		cursor = p.NextCursor
	}
	if len(all) != n {
		t.Fatalf("drained %d rows, want %d", len(all), n)
	}
	big := 500
	p, err := list(listing.Params{Limit: &big})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Items) > listing.MaxLimit || (n <= listing.MaxLimit && (len(p.Items) != n || p.NextCursor != "")) {
		t.Fatalf("limit 500: %d rows, cursor %q (n=%d)", len(p.Items), p.NextCursor, n)
	}
	if firstCursor != "" {
		_, err := list(listing.Params{Cursor: Tamper(firstCursor)})
		if err == nil || vp.KindOf(err) != vp.KindInvalid || !strings.Contains(err.Error(), "cursor") {
			t.Fatalf("tampered cursor: got %v, want %s naming %q", err, vp.KindInvalid, "cursor")
		}
	}
	return all
}

// RowID returns the _id of a listed row (full entity or lite map).
func RowID(t *testing.T, row any) string {
	t.Helper()
	m := RowFields(t, row)
	var id string
	if err := json.Unmarshal(m["_id"], &id); err != nil || id == "" {
		t.Fatalf("row without _id: %v", m)
	}
	return id
}

// RowFields returns a listed row's JSON fields.
func RowFields(t *testing.T, row any) map[string]json.RawMessage {
	t.Helper()
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// LiteKeys asserts a lite row has only the given keys, and _id and
// _creationTime.
func LiteKeys(t *testing.T, row any, keys ...string) {
	t.Helper()
	m := RowFields(t, row)
	for k := range m {
		if !strings.Contains(" "+strings.Join(keys, " ")+" ", " "+k+" ") {
			t.Fatalf("lite row has %q; want only %v: %v", k, keys, m)
		}
	}
	for _, k := range []string{"_id", "_creationTime"} {
		if _, ok := m[k]; !ok {
			t.Fatalf("lite row lacks %q: %v", k, m)
		}
	}
}
