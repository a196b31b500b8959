package table_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
	"github.com/vantagepeers/vantagepeers/shared/store/teststores"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

type widget struct {
	ID      string `json:"id"`
	Owner   string `json:"owner"`
	Project string `json:"project,omitempty"`
	N       int    `json:"n"`
	At      int64  `json:"at"`
}

var widgets = table.Declare(table.Schema[widget]{
	Entity:  "widget",
	Primary: table.Key{PK: "W#{id}", SK: "W", Pattern: "widget by id"},
	Indexes: []table.Key{
		{Index: store.GSI1, PK: "WOWN#{owner}", SK: "{at}#{id}", Pattern: "widgets of an owner"},
		{Index: store.GSI3, PK: "WPROJ#{project}", SK: "{id}", Pattern: "widgets of a project", Note: "sparse"},
	},
	Fields: func(w widget) table.Values {
		return table.Values{"id": w.ID, "owner": w.Owner, "project": w.Project, "at": table.Millis(w.At)}
	},
})

func TestItemKeys(t *testing.T) {
	tests := []struct {
		name string
		w    widget
		want store.Item
	}{
		{"every index", widget{ID: "w1", Owner: "bob", Project: "web", At: 5}, store.Item{
			Key: store.Key{PK: "T#acme#W#w1", SK: "W"},
			GSI: [store.NumGSI]store.Key{{PK: "T#acme#WOWN#bob", SK: "0000000000005#w1"}, {}, {PK: "T#acme#WPROJ#web", SK: "w1"}, {}},
		}},
		{"sparse project", widget{ID: "w2", Owner: "bob", At: 7}, store.Item{
			Key: store.Key{PK: "T#acme#W#w2", SK: "W"},
			GSI: [store.NumGSI]store.Key{{PK: "T#acme#WOWN#bob", SK: "0000000000007#w2"}, {}, {}, {}},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			it, err := widgets.Item("op", "acme", tc.w)
			if err != nil {
				t.Fatal(err)
			}
			if it.Key != tc.want.Key || it.GSI != tc.want.GSI {
				t.Fatalf("item keys = %+v %+v, want %+v %+v", it.Key, it.GSI, tc.want.Key, tc.want.GSI)
			}
			if got := widgets.PK("acme", store.GSI1, table.Values{"owner": "bob"}); got != "T#acme#WOWN#bob" {
				t.Fatalf("PK = %q", got)
			}
		})
	}
}

func TestDeclareRefusesMalformed(t *testing.T) {
	fields := func(widget) table.Values { return nil }
	bad := map[string]table.Schema[widget]{
		"no entity":     {Primary: table.Key{PK: "W#{id}", SK: "W"}, Fields: fields},
		"no sort key":   {Entity: "w", Primary: table.Key{PK: "W#{id}"}, Fields: fields},
		"index twice":   {Entity: "w", Primary: table.Key{PK: "W", SK: "W"}, Fields: fields, Indexes: []table.Key{{Index: store.GSI1, PK: "A", SK: "a"}, {Index: store.GSI1, PK: "B", SK: "b"}}},
		"primary slot":  {Entity: "w", Primary: table.Key{PK: "W", SK: "W"}, Fields: fields, Indexes: []table.Key{{Index: store.Primary, PK: "A", SK: "a"}}},
		"open template": {Entity: "w", Primary: table.Key{PK: "W#{id", SK: "W"}, Fields: fields},
	}
	for name, s := range bad {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("Declare accepted a malformed schema")
				}
			}()
			table.Declare(s)
		})
	}
}

// TestUpdateRacers: 16 goroutines increment one widget; version conflicts
// are retried, so every increment lands exactly once, on both backends.
func TestUpdateRacers(t *testing.T) {
	teststores.Each(t, func(t *testing.T, b teststores.Backend) {
		ctx := context.Background()
		st := b.Open(t, nil)
		w := widget{ID: "w1", Owner: "bob"}
		it, err := widgets.Item("op", "acme", w)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Write(ctx, store.Put(it, store.IfNotExists)); err != nil {
			t.Fatal(err)
		}
		const racers = 16
		var wg sync.WaitGroup
		errs := make(chan error, racers)
		for range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _, err := widgets.Update(ctx, st, "op", "acme", "widgetId", "w1", widgets.Key("acme", w), func(v *widget, _ store.Item) ([]store.Op, error) {
					v.N++
					return nil, nil
				})
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		conflicts := 0
		for err := range errs {
			if vp.IsKind(err, vp.KindConflict) {
				conflicts++ // allowed only past MaxUpdateAttempts
			} else if err != nil {
				t.Fatal(err)
			}
		}
		got, _, err := widgets.Get(ctx, st, "op", "widgetId", "w1", widgets.Key("acme", w))
		if err != nil {
			t.Fatal(err)
		}
		if got.N != racers-conflicts {
			t.Fatalf("n = %d after %d racers with %d conflicts", got.N, racers, conflicts)
		}
	})
}

func TestUpdateMissingAndChangeError(t *testing.T) {
	ctx := context.Background()
	st := teststores.All[0].Open(t, nil)
	_, _, err := widgets.Update(ctx, st, "op", "acme", "widgetId", "nope", widgets.KeyOf("acme", table.Values{"id": "nope"}),
		func(*widget, store.Item) ([]store.Op, error) { return nil, nil })
	if !vp.IsKind(err, vp.KindNotFound) {
		t.Fatalf("missing widget: %v", err)
	}
	it, _ := widgets.Item("op", "acme", widget{ID: "w1", Owner: "bob"})
	if err := st.Write(ctx, store.Put(it, store.IfNotExists)); err != nil {
		t.Fatal(err)
	}
	refuse := vp.E("op", vp.KindInvalid, "n", "no")
	_, _, err = widgets.Update(ctx, st, "op", "acme", "widgetId", "w1", it.Key, func(*widget, store.Item) ([]store.Op, error) { return nil, refuse })
	if !errors.Is(err, refuse) {
		t.Fatalf("change error = %v, want it returned unchanged", err)
	}
}

type slot struct {
	ID       string
	Instance string
	DueAt    int64
	Expiry   int64
}

var slots = table.Declare(table.Schema[slot]{
	Entity:  "slot",
	Primary: table.Key{PK: "S#{id}", SK: "I#{instance?}", Pattern: "slot by id"},
	Indexes: []table.Key{
		{Index: store.GSI2, PK: "SLOTS_DUE", SK: "{due}#{tenant}#{id}", Global: true, Pattern: "due slots of every tenant"},
	},
	Fields: func(s slot) table.Values {
		return table.Values{"id": s.ID, "instance": s.Instance, "due": table.Millis(s.DueAt)}
	},
	Expires: func(s slot) int64 { return s.Expiry },
})

// TestGlobalIndexOptionalAndTTL: an optional placeholder may be empty, a
// global index entry has no tenant prefix and names its tenant, and the
// declared expiry is the item's TTL.
func TestGlobalIndexOptionalAndTTL(t *testing.T) {
	it, err := slots.Item("op", "acme", slot{ID: "s1", DueAt: 9, Expiry: 1234})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Key{PK: "T#acme#S#s1", SK: "I#"}
	if it.Key != want {
		t.Fatalf("key = %+v, want %+v", it.Key, want)
	}
	if g := it.GSI[1]; g != (store.Key{PK: "SLOTS_DUE", SK: "0000000000009#acme#s1"}) {
		t.Fatalf("global entry = %+v", g)
	}
	if it.ExpiresAt != 1234 {
		t.Fatalf("ExpiresAt = %d", it.ExpiresAt)
	}
	if pk := slots.PK("acme", store.GSI2, nil); pk != "SLOTS_DUE" {
		t.Fatalf("global PK = %q", pk)
	}
}

type job struct {
	ID     string `json:"id"`
	Tenant string `json:"tenant"`
	Due    int64  `json:"due"`
	Until  int64  `json:"until"`
}

// jobs is tenant data with a global index, as a server-side worker reads
// it for every tenant, and a TTL.
var jobs = table.Declare(table.Schema[job]{
	Entity:  "job",
	Primary: table.Key{PK: "JOB#{id}", SK: "JOB", Pattern: "job by id"},
	Indexes: []table.Key{
		{Index: store.GSI2, Global: true, PK: "JOBS_DUE", SK: "{due}#{tenant}#{id}", Pattern: "due jobs, all tenants"},
	},
	Fields: func(j job) table.Values {
		return table.Values{"id": j.ID, "tenant": j.Tenant, "due": table.Millis(j.Due)}
	},
	Expires: func(j job) int64 { return j.Until },
})

func TestGlobalIndexAndExpiry(t *testing.T) {
	it, err := jobs.Item("op", "acme", job{ID: "j1", Tenant: "acme", Due: 9, Until: 1234})
	if err != nil {
		t.Fatal(err)
	}
	if it.Key != (store.Key{PK: "T#acme#JOB#j1", SK: "JOB"}) {
		t.Fatalf("key = %+v: the primary key stays tenant data", it.Key)
	}
	if it.GSI[1] != (store.Key{PK: "JOBS_DUE", SK: "0000000000009#acme#j1"}) {
		t.Fatalf("gsi2 = %+v: a global index has no tenant prefix", it.GSI[1])
	}
	if got := jobs.PK("acme", store.GSI2, nil); got != "JOBS_DUE" {
		t.Fatalf("PK(gsi2) = %q", got)
	}
	if it.ExpiresAt != 1234 {
		t.Fatalf("ExpiresAt = %d, want Expires' value", it.ExpiresAt)
	}
	if it, _ := widgets.Item("op", "acme", widget{ID: "w1", Owner: "bob"}); it.ExpiresAt != 0 {
		t.Fatalf("a schema without Expires set ExpiresAt %d", it.ExpiresAt)
	}
	d := jobs.Doc()
	if !d.Keys[1].Global || d.Global {
		t.Fatalf("doc = %+v: the index is global, the table is not", d)
	}
}
