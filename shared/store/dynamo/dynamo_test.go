package dynamo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/storetest"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// open creates a fresh table on the shared emulator.
func open(t *testing.T, now func() time.Time) (*dynamo.Store, *dynamodb.Client) {
	t.Helper()
	client := dynamotest.Client(t)
	suffix := make([]byte, 6)
	_, _ = rand.Read(suffix)
	table := "vp-test-" + hex.EncodeToString(suffix)
	s, err := dynamo.New(context.Background(), dynamo.Options{Client: client, Table: table, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CreateTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = client.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: &table})
	})
	return s, client
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock *storetest.Clock) store.Store {
		s, _ := open(t, clock.Now)
		return s
	})
}

func TestCreateTableIdempotent(t *testing.T) {
	s, client := open(t, nil)
	if err := s.CreateTable(context.Background()); err != nil {
		t.Fatalf("second CreateTable: %v", err)
	}
	out, err := client.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(s.Table())})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(out.Table.GlobalSecondaryIndexes); n != store.NumGSI {
		t.Fatalf("%d GSIs, want %d", n, store.NumGSI)
	}
	ttl, err := client.DescribeTimeToLive(context.Background(), &dynamodb.DescribeTimeToLiveInput{TableName: out.Table.TableName})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || *d.AttributeName != dynamo.AttrTTL || d.TimeToLiveStatus != "ENABLED" {
		t.Fatalf("TTL: %+v", ttl.TimeToLiveDescription)
	}
}

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time          { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Advance(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func it(pk, sk, data string) store.Item {
	return store.Item{Key: store.Key{PK: pk, SK: sk}, Data: []byte(data)}
}

func get(t *testing.T, s store.Store, pk, sk string) store.Item {
	t.Helper()
	got, err := s.Get(context.Background(), store.Key{PK: pk, SK: sk})
	if err != nil {
		t.Fatalf("Get %s/%s: %v", pk, sk, err)
	}
	return got
}

// An expired item is absent: an unconditional put over it creates version 1,
// and IfVersion / IfExists / Check fail over it, alone and in transactions.
func TestExpiredItemIsAbsentToWrites(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_900_000_000, 0)}
	s, _ := open(t, c.Now)
	old := it("T#a#X", "1", "old")
	old.ExpiresAt = c.Now().Add(time.Minute).Unix()
	for range 3 {
		if err := s.Write(ctx, store.Put(old, store.Always)); err != nil {
			t.Fatal(err)
		}
	}
	if v := get(t, s, "T#a#X", "1").Version; v != 3 {
		t.Fatalf("version %d, want 3", v)
	}
	c.Advance(time.Hour)
	for name, op := range map[string]store.Op{
		"put IfVersion":    store.Put(it("T#a#X", "1", "x"), store.IfVersion(3)),
		"put IfExists":     store.Put(it("T#a#X", "1", "x"), store.IfExists),
		"delete IfExists":  store.Delete(store.Key{PK: "T#a#X", SK: "1"}, store.IfExists),
		"check IfVersion":  store.Check(store.Key{PK: "T#a#X", SK: "1"}, store.IfVersion(3)),
		"check IfExists":   store.Check(store.Key{PK: "T#a#X", SK: "1"}, store.IfExists),
		"delete IfVersion": store.Delete(store.Key{PK: "T#a#X", SK: "1"}, store.IfVersion(3)),
	} {
		if err := s.Write(ctx, op); !errors.Is(err, store.ErrConditionFailed) {
			t.Errorf("%s over an expired item: %v", name, err)
		}
		err := s.Write(ctx, store.Put(it("T#a#Y", "1", "y"), store.Always), op)
		var ce *store.ConditionError
		if !errors.As(err, &ce) || ce.Index != 1 {
			t.Errorf("%s over an expired item in a transaction: %v", name, err)
		}
	}
	if err := s.Write(ctx, store.Check(store.Key{PK: "T#a#X", SK: "1"}, store.IfNotExists)); err != nil {
		t.Errorf("check IfNotExists over an expired item: %v", err)
	}
	// Unconditional put over the expired item, alone: version restarts at 1.
	if err := s.Write(ctx, store.Put(it("T#a#X", "1", "new"), store.Always)); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, "T#a#X", "1")
	if got.Version != 1 || string(got.Data) != "new" || got.ExpiresAt != 0 {
		t.Fatalf("put over expired: %+v", got)
	}
	// ... and inside a transaction.
	exp := it("T#a#X", "2", "old")
	exp.ExpiresAt = c.Now().Add(time.Minute).Unix()
	_ = s.Write(ctx, store.Put(exp, store.Always))
	_ = s.Write(ctx, store.Put(exp, store.Always))
	c.Advance(time.Hour)
	if err := s.Write(ctx, store.Put(it("T#a#X", "2", "new"), store.Always), store.Put(it("T#a#X", "3", "n"), store.Always)); err != nil {
		t.Fatal(err)
	}
	if v := get(t, s, "T#a#X", "2").Version; v != 1 {
		t.Fatalf("transactional put over expired: version %d, want 1", v)
	}
	if v := get(t, s, "T#a#X", "3").Version; v != 1 {
		t.Fatalf("new item in transaction: version %d, want 1", v)
	}
}

func TestPutRemovesTTLAndIndexKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, nil)
	a := it("T#a#R", "1", "a")
	a.ExpiresAt = time.Now().Add(time.Hour).Unix()
	for g := range a.GSI {
		a.GSI[g] = store.Key{PK: "T#a#G", SK: fmt.Sprint(g)}
	}
	if err := s.Write(ctx, store.Put(a, store.IfNotExists)); err != nil {
		t.Fatal(err)
	}
	got := get(t, s, "T#a#R", "1")
	if got.GSI != a.GSI || got.ExpiresAt != a.ExpiresAt || got.Version != 1 {
		t.Fatalf("round trip: %+v", got)
	}
	if err := s.Write(ctx, store.Put(it("T#a#R", "1", ""), store.IfVersion(1))); err != nil {
		t.Fatal(err)
	}
	got = get(t, s, "T#a#R", "1")
	if got.GSI != ([store.NumGSI]store.Key{}) || got.ExpiresAt != 0 || got.Version != 2 || len(got.Data) != 0 {
		t.Fatalf("whole replace: %+v", got)
	}
	for idx := store.GSI1; idx <= store.GSI4; idx++ {
		rows, err := s.Query(ctx, store.Query{Index: idx, PK: "T#a#G", Limit: 10})
		if err != nil || len(rows) != 0 {
			t.Fatalf("%s still lists the item: %d rows, %v", idx, len(rows), err)
		}
	}
}

// Many expired items between live ones: Query keeps reading pages until it
// has Limit live items, in both directions, and pagination stays exact.
func TestQuerySkipsManyExpired(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Unix(1_900_000_000, 0)}
	s, _ := open(t, c.Now)
	var live []string
	for i := range 60 {
		x := it("T#a#E", fmt.Sprintf("%03d", i), "")
		x.GSI[2] = store.Key{PK: "T#a#EG", SK: fmt.Sprintf("%03d", i)}
		if i%6 != 0 {
			x.ExpiresAt = c.Now().Add(time.Minute).Unix()
		} else {
			live = append(live, x.Key.SK)
		}
		if err := s.Write(ctx, store.Put(x, store.Always)); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(time.Hour)
	for _, idx := range []store.Index{store.Primary, store.GSI3} {
		for _, reverse := range []bool{false, true} {
			pk := "T#a#E"
			if idx != store.Primary {
				pk = "T#a#EG"
			}
			var got []string
			var after *store.Position
			for {
				rows, err := s.Query(ctx, store.Query{Index: idx, PK: pk, Limit: 3, Reverse: reverse, After: after})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					got = append(got, r.Key.SK)
				}
				if len(rows) < 3 {
					break
				}
				p := store.PositionOf(rows[len(rows)-1], idx)
				after = &p
			}
			want := append([]string(nil), live...)
			if reverse {
				for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
					want[i], want[j] = want[j], want[i]
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s reverse=%v: got %v, want %v", idx, reverse, got, want)
			}
		}
	}
}

// A position outside the sort-key condition (DynamoDB refuses such a start
// key) means "from the start" before the range and "nothing" past it.
func TestQueryAfterOutsideRange(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, nil)
	for _, sk := range []string{"a", "b#1", "b#2", "c"} {
		if err := s.Write(ctx, store.Put(it("T#a#O", sk, ""), store.Always)); err != nil {
			t.Fatal(err)
		}
	}
	pos := func(sk string) *store.Position { return &store.Position{Key: store.Key{PK: "T#a#O", SK: sk}} }
	cases := []struct {
		q    store.Query
		want string
	}{
		{store.Query{SKPrefix: "b#", After: pos("a")}, "[b#1 b#2]"},
		{store.Query{SKPrefix: "b#", After: pos("c")}, "[]"},
		{store.Query{SKPrefix: "b#", After: pos("c"), Reverse: true}, "[b#2 b#1]"},
		{store.Query{SKPrefix: "b#", After: pos("a"), Reverse: true}, "[]"},
		{store.Query{SKFrom: "b", SKTo: "bz", After: pos("a")}, "[b#1 b#2]"},
		{store.Query{SKFrom: "b", SKTo: "bz", After: pos("c")}, "[]"},
		{store.Query{SKFrom: "b", SKTo: "bz", After: pos("c"), Reverse: true}, "[b#2 b#1]"},
		{store.Query{SKFrom: "b", After: pos("a")}, "[b#1 b#2 c]"},
		{store.Query{SKTo: "b#2", After: pos("c"), Reverse: true}, "[b#2 b#1 a]"},
		{store.Query{SKPrefix: "b#", After: pos("b#1")}, "[b#2]"},
		{store.Query{SKFrom: "c", SKTo: "a"}, "[]"},
	}
	for i, tc := range cases {
		tc.q.PK, tc.q.Limit = "T#a#O", 10
		rows, err := s.Query(ctx, tc.q)
		if err != nil {
			t.Errorf("case %d: %v", i, err)
			continue
		}
		var got []string
		for _, r := range rows {
			got = append(got, r.Key.SK)
		}
		if g := fmt.Sprint(got); g != tc.want {
			t.Errorf("case %d: got %s, want %s", i, g, tc.want)
		}
	}
	if _, err := s.Query(ctx, store.Query{PK: "T#a#O", Limit: 1, After: &store.Position{Key: store.Key{PK: "T#a#other", SK: "x"}}}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("position in another partition: %v", err)
	}
	if _, err := s.Query(ctx, store.Query{Index: store.GSI1, PK: "T#a#O", Limit: 1, After: pos("a")}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("GSI position without index key: %v", err)
	}
}

// Transactions racing on the same keys: conflicts are retried, so every
// loser sees a condition failure, never a transport error.
func TestTransactionRaceOnSharedKeys(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t, nil)
	if err := s.Write(ctx, store.Put(it("T#a#C", "counter", "0"), store.Always)); err != nil {
		t.Fatal(err)
	}
	const racers = 16
	var wins atomic.Int32
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range racers {
		wg.Go(func() {
			<-start
			err := s.Write(ctx,
				store.Put(it("T#a#C", "counter", fmt.Sprint(i)), store.IfVersion(1)),
				store.Put(it("T#a#C", fmt.Sprintf("log#%02d", i), ""), store.IfNotExists),
				store.Check(store.Key{PK: "T#a#C", SK: "absent"}, store.IfNotExists),
			)
			switch {
			case err == nil:
				wins.Add(1)
			case errors.Is(err, store.ErrConditionFailed):
				var ce *store.ConditionError
				if errors.As(err, &ce); ce.Index != 0 {
					t.Errorf("racer %d: failed op %d, want 0", i, ce.Index)
				}
			default:
				t.Errorf("racer %d: %v", i, err)
			}
		})
	}
	close(start)
	wg.Wait()
	rows, err := s.Query(ctx, store.Query{PK: "T#a#C", SKPrefix: "log#", Limit: 100})
	if wins.Load() != 1 || len(rows) != 1 || err != nil {
		t.Fatalf("wins=%d logs=%d err=%v", wins.Load(), len(rows), err)
	}
}

func TestUnknownKindsInvalid(t *testing.T) {
	s, _ := open(t, nil)
	ctx := context.Background()
	k := store.Key{PK: "T#a#K", SK: "1"}
	if err := s.Write(ctx, store.Op{Kind: 9, Key: k}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("unknown op kind: %v", err)
	}
	if err := s.Write(ctx, store.Delete(k, store.Cond{Kind: 9})); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("unknown cond kind: %v", err)
	}
	if _, err := s.Get(ctx, store.Key{PK: "T#a#K"}); !errors.Is(err, store.ErrInvalid) {
		t.Errorf("Get with empty sort key: %v", err)
	}
	// A transaction of checks without conditions writes nothing and succeeds.
	if err := s.Write(ctx, store.Check(k, store.Always), store.Check(store.Key{PK: "T#a#K", SK: "2"}, store.Always)); err != nil {
		t.Errorf("unconditional checks: %v", err)
	}
}
