package listing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestClampLimit(t *testing.T) {
	n := func(v int) *int { return &v }
	for _, c := range []struct {
		in   *int
		want int
	}{{nil, 20}, {n(0), 1}, {n(-5), 1}, {n(1), 1}, {n(57), 57}, {n(200), 200}, {n(201), 200}, {n(1 << 30), 200}} {
		if got := listing.ClampLimit(c.in); got != c.want {
			t.Errorf("ClampLimit(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}

func signer(t *testing.T, seed byte) *listing.Signer {
	key := make([]byte, 32)
	for i := range key {
		key[i] = seed
	}
	s, err := listing.NewSigner(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestCursorSigning(t *testing.T) {
	s := signer(t, 1)
	pos := store.Position{Key: store.Key{PK: "T#a#X", SK: "1"}, Index: store.Key{PK: "T#a#G", SK: "g"}}
	c := s.Encode("a", "list_x", pos)
	got, err := s.Decode("a", "list_x", c)
	if err != nil || got != pos {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	tampered := []byte(c)
	tampered[3] ^= 1
	for name, try := range map[string]func() error{
		"other tenant":  func() error { _, err := s.Decode("b", "list_x", c); return err },
		"other binding": func() error { _, err := s.Decode("a", "list_y", c); return err },
		"other key":     func() error { _, err := signer(t, 2).Decode("a", "list_x", c); return err },
		"tampered":      func() error { _, err := s.Decode("a", "list_x", string(tampered)); return err },
		"garbage":       func() error { _, err := s.Decode("a", "list_x", "!!!"); return err },
		"empty body":    func() error { _, err := s.Decode("a", "list_x", "AAAA"); return err },
	} {
		if err := try(); err == nil {
			t.Errorf("%s: cursor accepted", name)
		}
	}
	if _, err := listing.NewSigner([]byte("short")); err == nil {
		t.Error("short key accepted")
	}
}

type row struct {
	ID      string `json:"_id"`
	Created int64  `json:"_creationTime"`
	Title   string `json:"title"`
	Body    string `json:"body"`
}

func seeded(t *testing.T, n int, body int) store.Store {
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "l.db"), Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	for i := 0; i < n; i++ {
		b, _ := json.Marshal(row{ID: fmt.Sprintf("r%04d", i), Created: int64(i), Title: fmt.Sprint("t", i), Body: strings.Repeat("x", body)})
		if err := st.Write(context.Background(), store.Put(store.Item{Key: store.Key{PK: "T#a#R", SK: fmt.Sprintf("r%04d", i)}, Data: b}, store.Always)); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

func list(t *testing.T, st store.Store, s *listing.Signer, p listing.Params, keep func(row) bool) (listing.Page[any], error) {
	return listing.List(context.Background(), st, s, listing.Request{
		Op: "list_rows", Tenant: "a", Binding: "list_rows", Params: p,
		Query: store.Query{PK: "T#a#R"}, LiteKeys: []string{"title"},
	}, func(it store.Item) (row, bool, error) {
		var r row
		err := json.Unmarshal(it.Data, &r)
		return r, err == nil && (keep == nil || keep(r)), err
	})
}

func walk(t *testing.T, st store.Store, s *listing.Signer, p listing.Params, keep func(row) bool) (rows int, pages int) {
	for {
		page, err := list(t, st, s, p, keep)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(page)
		if len(b) >= listing.MaxEnvelopeBytes {
			t.Fatalf("page of %d bytes, the cap is %d", len(b), listing.MaxEnvelopeBytes)
		}
		if page.NextCursor == "" && strings.Contains(string(b), "nextCursor") {
			t.Fatal("nextCursor present but empty")
		}
		rows += len(page.Items)
		pages++
		if page.NextCursor == "" {
			return rows, pages
		}
		p.Cursor = page.NextCursor
	}
}

func TestListWalksEveryRowOnce(t *testing.T) {
	st := seeded(t, 137, 10)
	s := signer(t, 1)
	for _, c := range []struct {
		limit, wantPages int
	}{{20, 7}, {137, 1}, {136, 2}, {200, 1}, {1, 137}} {
		limit := c.limit
		rows, pages := walk(t, st, s, listing.Params{Limit: &limit}, nil)
		if rows != 137 || pages != c.wantPages {
			t.Errorf("limit %d: %d rows in %d pages, want 137 in %d", c.limit, rows, pages, c.wantPages)
		}
	}
	// An exact multiple must not end on an empty page with a cursor.
	limit := 137
	page, _ := list(t, st, s, listing.Params{Limit: &limit}, nil)
	if page.NextCursor != "" {
		t.Error("nextCursor on the page that holds the last row")
	}
}

func TestListFilterSkipsAcrossPages(t *testing.T) {
	st := seeded(t, 300, 10)
	rows, _ := walk(t, st, signer(t, 1), listing.Params{}, func(r row) bool { return r.Created%7 == 0 })
	if rows != 43 {
		t.Fatalf("filtered walk: %d rows, want 43", rows)
	}
}

func TestListHalvesUnderTheByteCap(t *testing.T) {
	st := seeded(t, 60, 4000) // 60 rows of ~4 kB: 200 of them would be ~240 kB
	limit := 200
	rows, pages := walk(t, st, signer(t, 1), listing.Params{Limit: &limit}, nil)
	if rows != 60 || pages < 5 {
		t.Fatalf("%d rows in %d pages; want all 60 rows in several capped pages", rows, pages)
	}
	// lite drops the body: one page holds them all.
	rows, pages = walk(t, st, signer(t, 1), listing.Params{Limit: &limit, Fields: "lite"}, nil)
	if rows != 60 || pages != 1 {
		t.Fatalf("lite: %d rows in %d pages, want 60 in 1", rows, pages)
	}
	page, _ := list(t, st, signer(t, 1), listing.Params{Fields: "lite"}, nil)
	b, _ := json.Marshal(page.Items[0])
	if string(b) != `{"_creationTime":0,"_id":"r0000","title":"t0"}` {
		t.Fatalf("lite projection: %s", b)
	}
}

func TestListRefusesBadArguments(t *testing.T) {
	st := seeded(t, 3, 1)
	_, err := list(t, st, signer(t, 1), listing.Params{Fields: "everything"}, nil)
	if vp.KindOf(err) != vp.KindInvalid || !strings.Contains(err.Error(), "fields") {
		t.Errorf("bad fields: %v", err)
	}
	_, err = list(t, st, signer(t, 1), listing.Params{Cursor: "bm9wZQ"}, nil)
	if vp.KindOf(err) != vp.KindInvalid || !strings.Contains(err.Error(), "cursor") {
		t.Errorf("bad cursor: %v", err)
	}
}
