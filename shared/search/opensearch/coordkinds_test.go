package opensearch_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/search"
)

// TestOpenSearchProtocolCoordKinds: the coordination documents (messages,
// tasks, briefings, components) go through the same mapping; the keyword
// tools filter on kind, type (task status, channel, topic, component type)
// and owner, in per-kind partitions "<tenant>/<kind>" (shared/keyword).
func TestOpenSearchProtocolCoordKinds(t *testing.T) {
	x, f := open(t)
	docs := []search.Doc{
		{Tenant: "acme/task", ID: "tsk_1", Kind: "task", Namespace: "vp", Type: "todo", Owner: "bob", Title: "Fix the flaky deploy", Text: "runbook"},
		{Tenant: "acme/task", ID: "tsk_2", Kind: "task", Namespace: "vp", Type: "done", Owner: "bob", Title: "Flaky deploy, again"},
		{Tenant: "acme/task", ID: "tsk_3", Kind: "task", Namespace: "vp", Type: "todo", Owner: "alice", Title: "Deploy the flaky fix"},
		{Tenant: "acme/message", ID: "msg_1", Kind: "message", Type: "bob", Owner: "alice", Text: "the flaky deploy is back"},
		{Tenant: "acme", ID: "mem_1", Kind: "memory", Namespace: "global", Type: "note", Owner: "bob", Text: "flaky deploy notes"},
		{Tenant: "beta/task", ID: "tsk_1", Kind: "task", Type: "todo", Owner: "bob", Title: "Flaky deploy"},
	}
	if err := x.Upsert(ctx, docs...); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		f    search.Filter
		want []string
	}{
		{"kind", search.Filter{Tenant: "acme/task", Kinds: []string{"task"}}, []string{"tsk_1", "tsk_2", "tsk_3"}},
		{"status and assignee", search.Filter{Tenant: "acme/task", Kinds: []string{"task"}, Types: []string{"todo"}, Owner: "bob"}, []string{"tsk_1"}},
		{"project", search.Filter{Tenant: "acme/task", Kinds: []string{"task"}, Namespaces: []string{"vp"}, Types: []string{"done"}}, []string{"tsk_2"}},
		{"other kind in the partition", search.Filter{Tenant: "acme/task", Kinds: []string{"message"}}, nil},
		{"message partition", search.Filter{Tenant: "acme/message", Kinds: []string{"message"}, Types: []string{"bob"}}, []string{"msg_1"}},
		{"other tenant", search.Filter{Tenant: "beta/task", Kinds: []string{"task"}}, []string{"tsk_1"}},
	}
	for _, c := range cases {
		hits, err := x.Text(ctx, "flaky deploy", c.f, 10)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
			if h.Kind != "task" && h.Kind != "message" {
				t.Fatalf("%s: hit %+v", c.name, h)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
	// The kind filter is a terms clause next to the tenant's.
	searches := f.last("/_search")
	q := body(t, searches[1])
	fl, _ := json.Marshal(at(q, "query", "bool", "filter"))
	if want := `[{"term":{"tenant":"acme/task"}},{"terms":{"kind":["task"]}},{"terms":{"type":["todo"]}},{"term":{"owner":"bob"}}]`; string(fl) != want {
		t.Errorf("filter %s, want %s", fl, want)
	}
	// Deleting in one partition leaves the same id of another tenant alone.
	if err := x.Delete(ctx, "acme/task", "tsk_1"); err != nil {
		t.Fatal(err)
	}
	if hits, err := x.Text(ctx, "flaky", search.Filter{Tenant: "beta/task", Kinds: []string{"task"}}, 10); err != nil || len(hits) != 1 || hits[0].ID != "tsk_1" {
		t.Fatalf("beta after acme's delete: %v %v", hits, err)
	}
	if hits, err := x.Text(ctx, "flaky", search.Filter{Tenant: "acme/task", Kinds: []string{"task"}, Owner: "bob"}, 10); err != nil || len(hits) != 1 || hits[0].ID != "tsk_2" {
		t.Fatalf("acme after the delete: %v %v", hits, err)
	}
}
