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

// due is a widget's entry in a server-side index over every tenant: its
// partition has no tenant prefix and its sort key names the tenant.
var dueWidgets = table.Declare(table.Schema[widget]{
	Entity:  "due widget",
	Primary: table.Key{PK: "W#{id}", SK: "W", Pattern: "widget by id"},
	Indexes: []table.Key{
		{Index: store.GSI2, PK: "WDUE", SK: "{at}#{tenant}#{id}", Pattern: "due widgets, all tenants", Global: true},
	},
	Fields: func(w widget) table.Values { return table.Values{"id": w.ID, "at": table.Millis(w.At)} },
})

func TestGlobalIndexNamesItsTenant(t *testing.T) {
	it, err := dueWidgets.Item("op", "acme", widget{ID: "w1", At: 5})
	if err != nil {
		t.Fatal(err)
	}
	want := store.Key{PK: "WDUE", SK: "0000000000005#acme#w1"}
	if it.Key != (store.Key{PK: "T#acme#W#w1", SK: "W"}) || it.GSI[1] != want {
		t.Fatalf("keys = %+v %+v, want the tenant's primary key and %+v", it.Key, it.GSI, want)
	}
	if got := dueWidgets.PK("acme", store.GSI2, nil); got != "WDUE" {
		t.Fatalf("PK = %q, want the global partition", got)
	}
}
