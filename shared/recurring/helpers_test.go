package recurring_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/dynamo/dynamotest"
	"github.com/vantagepeers/vantagepeers/shared/task"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// services are the capabilities these tests drive, on one store, wired as
// main wires them, so that a test calls any of them on one value.
type services struct {
	*tasks
	*missions
	*recurrings
}

func newServices(st store.Store, cursors *listing.Signer, now func() time.Time) *services {
	ts := task.New(task.Options{Store: st, Cursors: cursors, Now: now})
	ms := mission.New(mission.Options{Store: st, Cursors: cursors, Now: now, Tasks: ts})
	ts.UseMissions(ms)
	return &services{ts, ms, recurring.New(recurring.Options{Store: st, Cursors: cursors, Now: now, Tasks: ts})}
}

// The embedded services need distinct field names.
type (
	tasks      = task.Service
	missions   = mission.Service
	recurrings = recurring.Service
)

func as(tenant string, orchs ...string) vp.Principal {
	return vp.Principal{Tenant: tenant, Orchestrators: orchs, ReadPrefixes: []string{"*"}, WritePrefixes: []string{"*"}}
}

func admin(tenant string) vp.Principal {
	return vp.Principal{Tenant: tenant, Orchestrators: []string{"*"}, Admin: true}
}

func wantKind(t *testing.T, err error, kind vp.Kind, field string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s on %q", kind, field)
	}
	if vp.KindOf(err) != kind {
		t.Fatalf("got %v (kind %s), want kind %s", err, vp.KindOf(err), kind)
	}
	if field != "" && !strings.Contains(err.Error(), field) {
		t.Fatalf("error %q does not name field %q", err, field)
	}
}

func ctx() context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	_ = cancel // the test process ends first
	return c
}

// pageAll follows cursors to the end and returns every item.
func pageAll(t *testing.T, page func(cursor string) (listing.Page[any], error)) []any {
	t.Helper()
	var all []any
	cursor := ""
	for i := 0; ; i++ {
		if i > 1000 {
			t.Fatal("pagination does not end")
		}
		p, err := page(cursor)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, p.Items...)
		if p.NextCursor == "" {
			return all
		}
		cursor = p.NextCursor
	}
}

// mandateLimit is a page size.
func mandateLimit(n int) *int { return &n }
