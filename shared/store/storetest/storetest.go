// Package storetest is the conformance suite of the store port. Every
// backend runs it; a behaviour the domain relies on belongs here, not in an
// adapter's own tests.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/store"
)

// Clock is a settable time source shared by the suite and the store under test.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock starts a clock at a fixed instant.
func NewClock() *Clock { return &Clock{t: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

// Advance moves the clock forward.
func (c *Clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// Factory opens a fresh, empty store reading time from clock.
type Factory func(t *testing.T, clock *Clock) store.Store

// Run runs the whole suite against the backend made by open.
func Run(t *testing.T, open Factory) {
	tests := []struct {
		name string
		fn   func(*testing.T, store.Store, *Clock)
	}{
		{"GetMissing", testGetMissing},
		{"PutGetRoundTrip", testPutGet},
		{"VersionIncrements", testVersion},
		{"IfNotExists", testIfNotExists},
		{"IfExistsAndIfVersion", testIfExistsIfVersion},
		{"Delete", testDelete},
		{"TransactionAllOrNothing", testTransaction},
		{"TransactionCheck", testTransactionCheck},
		{"LargeTransactionAllOrNothing", testLargeTransaction},
		{"InvalidRequests", testInvalid},
		{"QueryPrefixRangeOrder", testQuery},
		{"QueryPagination", testPagination},
		{"SecondaryIndexSparse", testGSI},
		{"SecondaryIndexPagination", testGSIPagination},
		{"TTLExpiry", testTTL},
		{"ConcurrentClaimExactlyOneWins", testRaceIfVersion},
		{"ConcurrentCreateExactlyOneWins", testRaceIfNotExists},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clock := NewClock()
			s := open(t, clock)
			t.Cleanup(func() { _ = s.Close() })
			tc.fn(t, s, clock)
		})
	}
}

func item(pk, sk, data string) store.Item {
	return store.Item{Key: store.Key{PK: pk, SK: sk}, Data: []byte(data)}
}

func mustWrite(t *testing.T, s store.Store, ops ...store.Op) {
	t.Helper()
	if err := s.Write(context.Background(), ops...); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

func testGetMissing(t *testing.T, s store.Store, _ *Clock) {
	_, err := s.Get(context.Background(), store.Key{PK: "T#a#X", SK: "1"})
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get missing: got %v, want ErrNotFound", err)
	}
}

func testPutGet(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	it := item("T#a#X", "1", `{"v":"é\u0000 bytes"}`)
	it.GSI[0] = store.Key{PK: "T#a#G", SK: "s1"}
	mustWrite(t, s, store.Put(it, store.Always))
	got, err := s.Get(ctx, it.Key)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.Data) != string(it.Data) || got.GSI[0] != it.GSI[0] || got.Version != 1 {
		t.Fatalf("round trip: got %+v", got)
	}
	// Same SK in another partition (another tenant) is a different item.
	if _, err := s.Get(ctx, store.Key{PK: "T#b#X", SK: "1"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other partition leaked: %v", err)
	}
}

func testVersion(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	k := store.Key{PK: "T#a#V", SK: "1"}
	for want := int64(1); want <= 3; want++ {
		mustWrite(t, s, store.Put(item(k.PK, k.SK, fmt.Sprint(want)), store.Always))
		got, err := s.Get(ctx, k)
		if err != nil || got.Version != want {
			t.Fatalf("after put %d: version %d err %v", want, got.Version, err)
		}
	}
}

func testIfNotExists(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	it := item("T#a#U", "name", "first")
	mustWrite(t, s, store.Put(it, store.IfNotExists))
	err := s.Write(ctx, store.Put(item("T#a#U", "name", "second"), store.IfNotExists))
	var ce *store.ConditionError
	if !errors.As(err, &ce) || ce.Index != 0 || !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("second create: got %v, want ConditionError at 0", err)
	}
	got, _ := s.Get(ctx, it.Key)
	if string(got.Data) != "first" {
		t.Fatalf("losing write changed the item: %q", got.Data)
	}
}

func testIfExistsIfVersion(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	if err := s.Write(ctx, store.Put(item("T#a#E", "1", "x"), store.IfExists)); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("IfExists on missing: %v", err)
	}
	mustWrite(t, s, store.Put(item("T#a#E", "1", "v1"), store.Always))
	mustWrite(t, s, store.Put(item("T#a#E", "1", "v2"), store.IfExists))
	if err := s.Write(ctx, store.Put(item("T#a#E", "1", "stale"), store.IfVersion(1))); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("stale version accepted: %v", err)
	}
	mustWrite(t, s, store.Put(item("T#a#E", "1", "v3"), store.IfVersion(2)))
	got, _ := s.Get(ctx, store.Key{PK: "T#a#E", SK: "1"})
	if string(got.Data) != "v3" || got.Version != 3 {
		t.Fatalf("got %q v%d", got.Data, got.Version)
	}
	if err := s.Write(ctx, store.Put(item("T#a#E", "2", "x"), store.IfVersion(0))); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("IfVersion on missing item: %v", err)
	}
}

func testDelete(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	k := store.Key{PK: "T#a#D", SK: "1"}
	mustWrite(t, s, store.Delete(k, store.Always)) // absent: fine
	if err := s.Write(ctx, store.Delete(k, store.IfExists)); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("delete IfExists on missing: %v", err)
	}
	it := item(k.PK, k.SK, "x")
	it.GSI[1] = store.Key{PK: "T#a#DG", SK: "1"}
	mustWrite(t, s, store.Put(it, store.Always))
	if err := s.Write(ctx, store.Delete(k, store.IfVersion(7))); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("delete with wrong version: %v", err)
	}
	mustWrite(t, s, store.Delete(k, store.IfVersion(1)))
	if _, err := s.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("deleted item still there: %v", err)
	}
	rows, err := s.Query(ctx, store.Query{Index: store.GSI2, PK: "T#a#DG", Limit: 10})
	if err != nil || len(rows) != 0 {
		t.Fatalf("deleted item still in index: %d rows, %v", len(rows), err)
	}
}

func testTransaction(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	mustWrite(t, s, store.Put(item("T#a#TX", "taken", "x"), store.Always))
	err := s.Write(ctx,
		store.Put(item("T#a#TX", "1", "a"), store.IfNotExists),
		store.Put(item("T#a#TX", "2", "b"), store.Always),
		store.Put(item("T#a#TX", "taken", "c"), store.IfNotExists),
	)
	var ce *store.ConditionError
	if !errors.As(err, &ce) || ce.Index != 2 {
		t.Fatalf("got %v, want ConditionError at index 2", err)
	}
	for _, sk := range []string{"1", "2"} {
		if _, err := s.Get(ctx, store.Key{PK: "T#a#TX", SK: sk}); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("half-written transaction: %s present (%v)", sk, err)
		}
	}
	got, _ := s.Get(ctx, store.Key{PK: "T#a#TX", SK: "taken"})
	if string(got.Data) != "x" {
		t.Fatalf("failed transaction changed an item: %q", got.Data)
	}
	mustWrite(t, s,
		store.Put(item("T#a#TX", "1", "a"), store.IfNotExists),
		store.Delete(store.Key{PK: "T#a#TX", SK: "taken"}, store.IfExists),
	)
	rows, err := s.Query(ctx, store.Query{PK: "T#a#TX", Limit: 10})
	if err != nil || len(rows) != 1 || rows[0].Key.SK != "1" {
		t.Fatalf("after committed transaction: %v %v", rows, err)
	}
}

func testTransactionCheck(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	mustWrite(t, s, store.Put(item("T#a#P", "parent", "p"), store.Always))
	err := s.Write(ctx,
		store.Check(store.Key{PK: "T#a#P", SK: "parent"}, store.IfVersion(5)),
		store.Put(item("T#a#P", "child", "c"), store.Always),
	)
	var ce *store.ConditionError
	if !errors.As(err, &ce) || ce.Index != 0 {
		t.Fatalf("got %v, want ConditionError at 0", err)
	}
	if _, err := s.Get(ctx, store.Key{PK: "T#a#P", SK: "child"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("child written despite failed check")
	}
	mustWrite(t, s,
		store.Check(store.Key{PK: "T#a#P", SK: "parent"}, store.IfVersion(1)),
		store.Put(item("T#a#P", "child", "c"), store.Always),
	)
	if _, err := s.Get(ctx, store.Key{PK: "T#a#P", SK: "child"}); err != nil {
		t.Fatalf("child missing after passing check: %v", err)
	}
}

// testLargeTransaction runs on backends offering store.LargeTransactor:
// a transaction of several times MaxTransactOps is all-or-nothing, with
// Write's preconditions and shape rules.
func testLargeTransaction(t *testing.T, s store.Store, _ *Clock) {
	lt, ok := store.AsLargeTransactor(s)
	if !ok {
		t.Skip("this backend has no large transactions")
	}
	ctx := context.Background()
	const n = 3*store.MaxTransactOps + 7
	mustWrite(t, s, store.Put(item("T#a#LTX", "taken", "x"), store.Always))
	ops := make([]store.Op, 0, n+1)
	for i := range n {
		ops = append(ops, store.Put(item("T#a#LTX", fmt.Sprintf("%04d", i), "d"), store.IfNotExists))
	}
	// The last op fails its precondition: nothing before it may remain.
	err := lt.TransactLarge(ctx, append(ops, store.Put(item("T#a#LTX", "taken", "y"), store.IfNotExists)))
	var ce *store.ConditionError
	if !errors.As(err, &ce) || ce.Index != n {
		t.Fatalf("got %v, want ConditionError at index %d", err, n)
	}
	rows, err := s.Query(ctx, store.Query{PK: "T#a#LTX", Limit: n + 10})
	if err != nil || len(rows) != 1 || string(rows[0].Data) != "x" {
		t.Fatalf("a failed large transaction left %d items (%v)", len(rows), err)
	}
	if err := lt.TransactLarge(ctx, append(ops, store.Put(item("T#a#LTX", fmt.Sprintf("%04d", 0), "dup"), store.Always))); !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("two ops on one key: got %v, want ErrInvalid", err)
	}
	if err := lt.TransactLarge(ctx, append(ops, store.Delete(store.Key{PK: "T#a#LTX", SK: "taken"}, store.IfExists))); err != nil {
		t.Fatalf("TransactLarge: %v", err)
	}
	rows, err = s.Query(ctx, store.Query{PK: "T#a#LTX", Limit: n + 10})
	if err != nil || len(rows) != n {
		t.Fatalf("after a committed large transaction: %d items, want %d (%v)", len(rows), n, err)
	}
}

func testInvalid(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	cases := map[string][]store.Op{
		"none":      nil,
		"empty key": {store.Put(item("", "x", "d"), store.Always)},
		"duplicate": {store.Put(item("T#a#I", "1", "a"), store.Always), store.Delete(store.Key{PK: "T#a#I", SK: "1"}, store.Always)},
		"oversize":  {store.Put(store.Item{Key: store.Key{PK: "T#a#I", SK: "big"}, Data: make([]byte, store.MaxItemBytes+1)}, store.Always)},
	}
	tooMany := make([]store.Op, store.MaxTransactOps+1)
	for i := range tooMany {
		tooMany[i] = store.Put(item("T#a#I", fmt.Sprint(i), "d"), store.Always)
	}
	cases["too many"] = tooMany
	for name, ops := range cases {
		if err := s.Write(ctx, ops...); !errors.Is(err, store.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
	if _, err := s.Query(ctx, store.Query{PK: "T#a#I"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("query without limit: %v", err)
	}
	if rows, _ := s.Query(ctx, store.Query{PK: "T#a#I", Limit: 200}); len(rows) != 0 {
		t.Errorf("refused writes left %d items", len(rows))
	}
}

func seed(t *testing.T, s store.Store, pk string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		mustWrite(t, s, store.Put(item(pk, fmt.Sprintf("k#%03d", i), fmt.Sprint(i)), store.Always))
	}
}

func sks(rows []store.Item) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.Key.SK
	}
	return out
}

func testQuery(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	seed(t, s, "T#a#Q", 10)
	mustWrite(t, s, store.Put(item("T#a#Q", "other", "o"), store.Always))
	mustWrite(t, s, store.Put(item("T#a#Q2", "k#000", "elsewhere"), store.Always))
	rows, err := s.Query(ctx, store.Query{PK: "T#a#Q", SKPrefix: "k#", Limit: 100})
	if err != nil || len(rows) != 10 || rows[0].Key.SK != "k#000" || rows[9].Key.SK != "k#009" {
		t.Fatalf("prefix: %v %v", sks(rows), err)
	}
	rows, _ = s.Query(ctx, store.Query{PK: "T#a#Q", SKPrefix: "k#", Reverse: true, Limit: 3})
	if got := fmt.Sprint(sks(rows)); got != "[k#009 k#008 k#007]" {
		t.Fatalf("reverse: %s", got)
	}
	rows, _ = s.Query(ctx, store.Query{PK: "T#a#Q", SKFrom: "k#003", SKTo: "k#005", Limit: 100})
	if got := fmt.Sprint(sks(rows)); got != "[k#003 k#004 k#005]" {
		t.Fatalf("range: %s", got)
	}
	rows, _ = s.Query(ctx, store.Query{PK: "T#a#Q", SKFrom: "k#008", Limit: 100})
	if got := fmt.Sprint(sks(rows)); got != "[k#008 k#009 other]" {
		t.Fatalf("from: %s", got)
	}
	rows, _ = s.Query(ctx, store.Query{PK: "T#a#Q", SKTo: "k#001", Reverse: true, Limit: 100})
	if got := fmt.Sprint(sks(rows)); got != "[k#001 k#000]" {
		t.Fatalf("to reverse: %s", got)
	}
	rows, _ = s.Query(ctx, store.Query{PK: "T#a#Q", Limit: 100})
	if len(rows) != 11 {
		t.Fatalf("whole partition: %d rows, want 11", len(rows))
	}
}

func testPagination(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	const n = 57
	seed(t, s, "T#a#PG", n)
	for _, reverse := range []bool{false, true} {
		var all []string
		var after *store.Position
		for pages := 0; ; pages++ {
			if pages > n {
				t.Fatal("pagination does not end")
			}
			rows, err := s.Query(ctx, store.Query{PK: "T#a#PG", Reverse: reverse, Limit: 10, After: after})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, sks(rows)...)
			if len(rows) < 10 {
				break
			}
			p := store.PositionOf(rows[len(rows)-1], store.Primary)
			after = &p
		}
		if len(all) != n {
			t.Fatalf("reverse=%v: paged %d items, want %d", reverse, len(all), n)
		}
		seen := map[string]bool{}
		for i, sk := range all {
			if seen[sk] {
				t.Fatalf("duplicate %s", sk)
			}
			seen[sk] = true
			if i > 0 && (sk < all[i-1]) != reverse {
				t.Fatalf("reverse=%v: out of order at %d: %s after %s", reverse, i, sk, all[i-1])
			}
		}
	}
}

func testGSI(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	for i := 0; i < 6; i++ {
		it := item("T#a#M#"+fmt.Sprint(i), "M", fmt.Sprint(i))
		if i%2 == 0 { // sparse: only even items are "unread"
			it.GSI[0] = store.Key{PK: "T#a#UNREAD#bob", SK: fmt.Sprintf("%02d", i)}
		}
		it.GSI[3] = store.Key{PK: "T#a#ALL", SK: fmt.Sprintf("%02d", i)}
		mustWrite(t, s, store.Put(it, store.Always))
	}
	rows, err := s.Query(ctx, store.Query{Index: store.GSI1, PK: "T#a#UNREAD#bob", Limit: 100})
	if err != nil || len(rows) != 3 {
		t.Fatalf("sparse index: %d rows (%v), want 3", len(rows), err)
	}
	// Moving an item out of the index: put it again without the key.
	first := rows[0]
	first.GSI[0] = store.Key{}
	mustWrite(t, s, store.Put(first, store.IfVersion(first.Version)))
	rows, _ = s.Query(ctx, store.Query{Index: store.GSI1, PK: "T#a#UNREAD#bob", Limit: 100})
	if len(rows) != 2 {
		t.Fatalf("after removing the index key: %d rows, want 2", len(rows))
	}
	rows, _ = s.Query(ctx, store.Query{Index: store.GSI4, PK: "T#a#ALL", SKPrefix: "0", Reverse: true, Limit: 100})
	if len(rows) != 6 || rows[0].GSI[3].SK != "05" || string(rows[0].Data) != "5" {
		t.Fatalf("gsi4 reverse: %d rows", len(rows))
	}
}

func testGSIPagination(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	const n = 25
	for i := 0; i < n; i++ {
		it := item(fmt.Sprintf("T#a#R#%02d", i), "R", "")
		// Equal index sort keys in pairs: pagination must neither skip nor repeat.
		it.GSI[1] = store.Key{PK: "T#a#BYDAY", SK: fmt.Sprintf("day%02d", i/2)}
		mustWrite(t, s, store.Put(it, store.Always))
	}
	seen := map[string]bool{}
	var after *store.Position
	for pages := 0; pages <= n; pages++ {
		rows, err := s.Query(ctx, store.Query{Index: store.GSI2, PK: "T#a#BYDAY", Reverse: true, Limit: 4, After: after})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if seen[r.Key.PK] {
				t.Fatalf("repeated %s", r.Key.PK)
			}
			seen[r.Key.PK] = true
		}
		if len(rows) < 4 {
			break
		}
		p := store.PositionOf(rows[len(rows)-1], store.GSI2)
		after = &p
	}
	if len(seen) != n {
		t.Fatalf("paged %d items, want %d", len(seen), n)
	}
}

func testTTL(t *testing.T, s store.Store, clock *Clock) {
	ctx := context.Background()
	it := item("T#a#TTL", "1", "soon gone")
	it.ExpiresAt = clock.Now().Add(time.Minute).Unix()
	it.GSI[0] = store.Key{PK: "T#a#TTLG", SK: "1"}
	mustWrite(t, s, store.Put(it, store.Always))
	mustWrite(t, s, store.Put(item("T#a#TTL", "2", "stays"), store.Always))
	if _, err := s.Get(ctx, it.Key); err != nil {
		t.Fatalf("live item: %v", err)
	}
	clock.Advance(2 * time.Minute)
	if _, err := s.Get(ctx, it.Key); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired item visible to Get: %v", err)
	}
	rows, _ := s.Query(ctx, store.Query{PK: "T#a#TTL", Limit: 1})
	if len(rows) != 1 || rows[0].Key.SK != "2" {
		t.Fatalf("query with limit 1 should skip the expired item: %v", sks(rows))
	}
	rows, _ = s.Query(ctx, store.Query{Index: store.GSI1, PK: "T#a#TTLG", Limit: 10})
	if len(rows) != 0 {
		t.Fatalf("expired item visible in index")
	}
	if err := s.Write(ctx, store.Put(item("T#a#TTL", "1", "x"), store.IfExists)); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("IfExists over an expired item: %v", err)
	}
	// An expired item is absent: a unique key can be taken again.
	mustWrite(t, s, store.Put(item("T#a#TTL", "1", "reborn"), store.IfNotExists))
	got, err := s.Get(ctx, it.Key)
	if err != nil || string(got.Data) != "reborn" {
		t.Fatalf("re-created item: %q %v", got.Data, err)
	}
}

// testRaceIfVersion is the shape of checkout_task: many callers read the
// same version and race a conditional write; exactly one may win.
func testRaceIfVersion(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	k := store.Key{PK: "T#a#TASK#1", SK: "T"}
	mustWrite(t, s, store.Put(item(k.PK, k.SK, "todo"), store.Always))
	const racers = 32
	var wins, losses atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			err := s.Write(ctx, store.Put(item(k.PK, k.SK, fmt.Sprintf("claimed by %d", i)), store.IfVersion(1)))
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, store.ErrConditionFailed):
				losses.Add(1)
			default:
				t.Errorf("racer %d: %v", i, err)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	if wins.Load() != 1 || losses.Load() != racers-1 {
		t.Fatalf("wins=%d losses=%d, want 1 and %d", wins.Load(), losses.Load(), racers-1)
	}
	got, _ := s.Get(ctx, k)
	if got.Version != 2 {
		t.Fatalf("version %d after one winning write, want 2", got.Version)
	}
}

func testRaceIfNotExists(t *testing.T, s store.Store, _ *Clock) {
	ctx := context.Background()
	const racers = 32
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < racers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			<-start
			err := s.Write(ctx,
				store.Put(item("T#a#FIRE", "2026-11-29T12:00", fmt.Sprint(i)), store.IfNotExists),
				store.Put(item("T#a#FIRED", fmt.Sprint(i), "task"), store.Always),
			)
			if err == nil {
				wins.Add(1)
			} else if !errors.Is(err, store.ErrConditionFailed) {
				t.Errorf("racer %d: %v", i, err)
			}
		}(i)
	}
	close(start)
	wg.Wait()
	rows, _ := s.Query(ctx, store.Query{PK: "T#a#FIRED", Limit: 100})
	if wins.Load() != 1 || len(rows) != 1 {
		t.Fatalf("wins=%d side-effects=%d, want exactly one of each", wins.Load(), len(rows))
	}
}
