// Package searchtest is the behaviour suite of the search port. Every
// adapter runs it; a behaviour the domain relies on belongs here, not in an
// adapter's own tests.
package searchtest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/search"
)

// Open returns a fresh, empty index; the suite closes it.
type Open func(t *testing.T) search.Index

// Run runs the whole suite against the adapter made by open.
func Run(t *testing.T, open Open) {
	tests := []struct {
		name string
		fn   func(*testing.T, search.Index)
	}{
		{"UpsertThenTextFindsIt", testUpsertThenText},
		{"TextRanking", testTextRanking},
		{"TextStemmingAndDiacritics", testTextAnalysis},
		{"TextQuerySyntaxIsNeverUserSyntax", testQuerySafety},
		{"TextEmptyQuery", testEmptyQuery},
		{"ReUpsertReplacesText", testReUpsert},
		{"DeleteRemovesTextAndVector", testDelete},
		{"TenantIsolation", testTenantIsolation},
		{"TenantRequired", testTenantRequired},
		{"Filters", testFilters},
		{"Expiry", testExpiry},
		{"VectorRanking", testVectorRanking},
		{"VectorEmbedderSeparation", testEmbedderSeparation},
		{"VectorOfMissingDocIgnored", testVectorMissingDoc},
		{"VectorDimensionMismatch", testDimension},
		{"KRespected", testK},
		{"Concurrent", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := open(t)
			t.Cleanup(func() { _ = x.Close() })
			tc.fn(t, x)
		})
	}
}

const (
	tenantA = "tenant-a"
	tenantB = "tenant-b"
	emb     = "test-emb/4"
	emb2    = "other-emb/4"
)

var ctx = context.Background()

func doc(tenant, id, title, text string) search.Doc {
	return search.Doc{Tenant: tenant, ID: id, Kind: "memory", Namespace: "project/x", Type: "note",
		Owner: "alice", Title: title, Text: text, CreatedAt: 1}
}

func upsert(t *testing.T, x search.Index, docs ...search.Doc) {
	t.Helper()
	if err := x.Upsert(ctx, docs...); err != nil {
		t.Fatalf("Upsert: %v", err)
	}
}

func setVector(t *testing.T, x search.Index, tenant, id, embedder string, v ...float32) {
	t.Helper()
	if err := x.SetVector(ctx, tenant, id, search.Vector{Embedder: embedder, Values: v}); err != nil {
		t.Fatalf("SetVector(%s): %v", id, err)
	}
}

func text(t *testing.T, x search.Index, q string, f search.Filter, k int) []search.Hit {
	t.Helper()
	hits, err := x.Text(ctx, q, f, k)
	if err != nil {
		t.Fatalf("Text(%q): %v", q, err)
	}
	checkOrder(t, hits)
	return hits
}

func vector(t *testing.T, x search.Index, embedder string, f search.Filter, k int, v ...float32) []search.Hit {
	t.Helper()
	hits, err := x.Vector(ctx, search.Vector{Embedder: embedder, Values: v}, f, k)
	if err != nil {
		t.Fatalf("Vector: %v", err)
	}
	checkOrder(t, hits)
	return hits
}

// checkOrder asserts best-first order and no duplicate ids.
func checkOrder(t *testing.T, hits []search.Hit) {
	t.Helper()
	seen := map[string]bool{}
	for i, h := range hits {
		if seen[h.ID] {
			t.Fatalf("hit %q returned twice: %v", h.ID, hits)
		}
		seen[h.ID] = true
		if i > 0 && h.Score > hits[i-1].Score {
			t.Fatalf("hits not best first: %v", hits)
		}
	}
}

func ids(hits []search.Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

func sorted(hits []search.Hit) string {
	s := ids(hits)
	sort.Strings(s)
	return strings.Join(s, ",")
}

func all(tenant string) search.Filter { return search.Filter{Tenant: tenant} }

func testUpsertThenText(t *testing.T, x search.Index) {
	upsert(t, x, doc(tenantA, "m1", "Deploy notes", "The staging deploy failed because the database migration timed out."))
	hits := text(t, x, "migration", all(tenantA), 10)
	if len(hits) != 1 || hits[0].ID != "m1" || hits[0].Kind != "memory" {
		t.Fatalf("hits = %v, want m1 (kind memory)", hits)
	}
	if hits[0].Score <= 0 {
		t.Errorf("score = %v, want > 0 (higher is better)", hits[0].Score)
	}
	// A word of the title alone finds it too.
	if hits := text(t, x, "notes", all(tenantA), 10); len(hits) != 1 {
		t.Fatalf("title search: %v", hits)
	}
	if hits := text(t, x, "kubernetes", all(tenantA), 10); len(hits) != 0 {
		t.Fatalf("unrelated word found %v", hits)
	}
}

func testTextRanking(t *testing.T, x search.Index) {
	upsert(t, x,
		doc(tenantA, "phrase", "", "Rotate the signing key before the release freeze."),
		doc(tenantA, "partial", "", "The release of the new dashboard slipped to next month because of vacations."),
		doc(tenantA, "unrelated", "", "Lunch was pizza with the whole team in the park today."),
		doc(tenantA, "titled", "Operations runbook", "Steps for operators."),
	)
	hits := text(t, x, "rotate the signing key before the release", all(tenantA), 10)
	if len(hits) < 2 || hits[0].ID != "phrase" {
		t.Fatalf("hits = %v, want the exact phrase first", hits)
	}
	rank := map[string]int{}
	for i, h := range hits {
		rank[h.ID] = i + 1
	}
	if r, ok := rank["unrelated"]; ok {
		t.Fatalf("unrelated document ranked %d: %v", r, hits)
	}
	if rank["partial"] == 0 || rank["partial"] < rank["phrase"] {
		t.Fatalf("partial match should rank below the phrase: %v", hits)
	}
	// Title weight: a title hit outranks the same word only in a long text.
	upsert(t, x, doc(tenantA, "body-only", "", "Some paragraphs mention a runbook here and there, among many other words in a long text."))
	hits = text(t, x, "runbook", all(tenantA), 10)
	if len(hits) != 2 || hits[0].ID != "titled" {
		t.Fatalf("runbook: %v, want the titled document first", hits)
	}
}

func testTextAnalysis(t *testing.T, x search.Index) {
	upsert(t, x,
		doc(tenantA, "stem", "", "The deployments were failing on Mondays."),
		doc(tenantA, "accent", "", "Réunion au café de la gare."),
	)
	for q, want := range map[string]string{
		"deployment fails":   "stem",
		"DEPLOYMENTS Failed": "stem",
		"cafe reunion":       "accent",
		"Café":               "accent",
	} {
		hits := text(t, x, q, all(tenantA), 10)
		if len(hits) == 0 || hits[0].ID != want {
			t.Errorf("Text(%q) = %v, want %s first", q, hits, want)
		}
	}
}

func testQuerySafety(t *testing.T, x search.Index) {
	upsert(t, x, doc(tenantA, "m1", "title", `He said "near" and (or) NOT and * - ^ : the end`))
	for _, q := range []string{
		`"near"`, `near(`, `NEAR(a b)`, `title: end`, `body:end`, `end*`, `^end`, `"unbalanced end`,
		`end AND`, `OR end`, `NOT end`, `end -near`, `{end}`, `end;DROP TABLE docs;--`, `'end'`,
		`end\`, "end\x00", `end's`, `🙂 end`, `end 🙂🙂`, strings.Repeat("end ", 500),
	} {
		hits, err := x.Text(ctx, q, all(tenantA), 5)
		if err != nil {
			t.Errorf("Text(%q): %v", q, err)
			continue
		}
		if len(hits) != 1 || hits[0].ID != "m1" {
			t.Errorf("Text(%q) = %v, want m1", q, hits)
		}
	}
	// A query of stop words only still searches them.
	if hits := text(t, x, "the", all(tenantA), 5); len(hits) != 1 {
		t.Errorf("stop-word-only query: %v", hits)
	}
}

func testEmptyQuery(t *testing.T, x search.Index) {
	upsert(t, x, doc(tenantA, "m1", "", "anything"))
	for _, q := range []string{"", "   ", "?!", `"" ()`, "--- ***", "\t\n"} {
		_, err := x.Text(ctx, q, all(tenantA), 5)
		if !errors.Is(err, search.ErrEmptyQuery) {
			t.Errorf("Text(%q) err = %v, want ErrEmptyQuery", q, err)
		}
	}
}

func testReUpsert(t *testing.T, x search.Index) {
	upsert(t, x, doc(tenantA, "m1", "alpha", "bravo charlie"))
	setVector(t, x, tenantA, "m1", emb, 1, 0, 0, 0)
	d := doc(tenantA, "m1", "delta", "echo foxtrot")
	d.Kind = "episode"
	upsert(t, x, d)
	for _, q := range []string{"alpha", "bravo", "charlie"} {
		if hits := text(t, x, q, all(tenantA), 5); len(hits) != 0 {
			t.Errorf("old text %q still found: %v", q, hits)
		}
	}
	hits := text(t, x, "foxtrot delta", all(tenantA), 5)
	if len(hits) != 1 || hits[0].ID != "m1" || hits[0].Kind != "episode" {
		t.Fatalf("new text: %v", hits)
	}
	// The new fields reach the vector filter too.
	f := all(tenantA)
	f.Kinds = []string{"memory"}
	if hits := vector(t, x, emb, f, 5, 1, 0, 0, 0); len(hits) != 0 {
		t.Errorf("vector filter saw the old kind: %v", hits)
	}
	f.Kinds = []string{"episode"}
	if hits := vector(t, x, emb, f, 5, 1, 0, 0, 0); len(hits) != 1 || hits[0].Kind != "episode" {
		t.Errorf("vector filter on the new kind: %v", hits)
	}
	// Still one document.
	upsert(t, x, doc(tenantA, "m2", "", "foxtrot"))
	if hits := text(t, x, "foxtrot", all(tenantA), 10); len(hits) != 2 {
		t.Errorf("after re-upsert: %v, want 2 documents", hits)
	}
}

func testDelete(t *testing.T, x search.Index) {
	upsert(t, x, doc(tenantA, "m1", "", "kiwi banana"), doc(tenantA, "m2", "", "kiwi cherry"))
	setVector(t, x, tenantA, "m1", emb, 1, 0, 0, 0)
	setVector(t, x, tenantA, "m2", emb, 0.9, 0.1, 0, 0)
	if err := x.Delete(ctx, tenantA, "m1", "absent"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if hits := text(t, x, "kiwi", all(tenantA), 10); len(ids(hits)) != 1 || hits[0].ID != "m2" {
		t.Errorf("text after delete: %v", hits)
	}
	if hits := vector(t, x, emb, all(tenantA), 10, 1, 0, 0, 0); len(hits) != 1 || hits[0].ID != "m2" {
		t.Errorf("vector after delete: %v", hits)
	}
	if err := x.Delete(ctx, tenantA); err != nil {
		t.Errorf("Delete of nothing: %v", err)
	}
	// A deleted id can be indexed again, without its old vector.
	upsert(t, x, doc(tenantA, "m1", "", "kiwi"))
	if hits := vector(t, x, emb, all(tenantA), 10, 1, 0, 0, 0); len(hits) != 1 {
		t.Errorf("old vector came back: %v", hits)
	}
}

func testTenantIsolation(t *testing.T, x search.Index) {
	// Same ids, same text, same vectors in two tenants.
	for _, tn := range []string{tenantA, tenantB} {
		upsert(t, x, doc(tn, "m1", "shared", "identical words in both tenants"), doc(tn, "only-"+tn, "", "identical words"))
		setVector(t, x, tn, "m1", emb, 1, 0, 0, 0)
		setVector(t, x, tn, "only-"+tn, emb, 1, 0, 0, 0)
	}
	for _, tn := range []string{tenantA, tenantB} {
		other := tenantA
		if tn == tenantA {
			other = tenantB
		}
		th := text(t, x, "identical words", all(tn), 10)
		vh := vector(t, x, emb, all(tn), 10, 1, 0, 0, 0)
		for _, hits := range [][]search.Hit{th, vh} {
			if got, want := sorted(hits), sorted([]search.Hit{{ID: "m1"}, {ID: "only-" + tn}}); got != want {
				t.Errorf("tenant %s: %s, want %s", tn, got, want)
			}
			for _, h := range hits {
				if h.ID == "only-"+other {
					t.Errorf("tenant %s sees %s", tn, h.ID)
				}
			}
		}
	}
	// Deleting in one tenant leaves the other's document of the same id.
	if err := x.Delete(ctx, tenantB, "m1"); err != nil {
		t.Fatal(err)
	}
	if hits := text(t, x, "shared", all(tenantA), 10); len(hits) != 1 {
		t.Errorf("tenant A lost m1 after a delete in B: %v", hits)
	}
	if hits := vector(t, x, emb, all(tenantA), 10, 1, 0, 0, 0); len(hits) != 2 {
		t.Errorf("tenant A vectors after a delete in B: %v", hits)
	}
	if hits := text(t, x, "shared", all(tenantB), 10); len(hits) != 0 {
		t.Errorf("tenant B still has m1: %v", hits)
	}
	// An unknown tenant sees nothing.
	if hits := text(t, x, "identical", all("tenant-c"), 10); len(hits) != 0 {
		t.Errorf("tenant-c: %v", hits)
	}
	if hits := vector(t, x, emb, all("tenant-c"), 10, 1, 0, 0, 0); len(hits) != 0 {
		t.Errorf("tenant-c vectors: %v", hits)
	}
}

func testTenantRequired(t *testing.T, x search.Index) {
	d := doc("", "m1", "", "x")
	checks := map[string]error{
		"Upsert":    x.Upsert(ctx, d),
		"SetVector": x.SetVector(ctx, "", "m1", search.Vector{Embedder: emb, Values: []float32{1, 0, 0, 0}}),
		"Delete":    x.Delete(ctx, "", "m1"),
	}
	_, checks["Text"] = x.Text(ctx, "x", search.Filter{}, 5)
	_, checks["Vector"] = x.Vector(ctx, search.Vector{Embedder: emb, Values: []float32{1, 0, 0, 0}}, search.Filter{}, 5)
	for name, err := range checks {
		if !errors.Is(err, search.ErrNoTenant) {
			t.Errorf("%s without tenant: err = %v, want ErrNoTenant", name, err)
		}
	}
}

func testFilters(t *testing.T, x search.Index) {
	mk := func(id, kind, ns, typ, owner string) search.Doc {
		return search.Doc{Tenant: tenantA, ID: id, Kind: kind, Namespace: ns, Type: typ, Owner: owner, Text: "zebra crossing"}
	}
	docs := []search.Doc{
		mk("a", "memory", "project/x", "note", "alice"),
		mk("b", "memory", "project/x/sub", "decision", "bob"),
		mk("c", "memory", "project/xy", "note", "alice"),
		mk("d", "episode", "project/x", "", "bob"),
		mk("e", "message", "", "", "carol"),
		mk("f", "memory", "workspace/y", "note", "alice"),
		mk("g", "memory", "projectx", "note", "alice"),
	}
	upsert(t, x, docs...)
	for _, d := range docs {
		setVector(t, x, tenantA, d.ID, emb, 0, 1, 0, 0)
	}
	for _, tc := range []struct {
		name string
		f    search.Filter
		want string
	}{
		{"none", search.Filter{}, "a,b,c,d,e,f,g"},
		{"kind", search.Filter{Kinds: []string{"memory"}}, "a,b,c,f,g"},
		{"kinds", search.Filter{Kinds: []string{"episode", "message"}}, "d,e"},
		{"ns exact", search.Filter{Namespaces: []string{"project/x"}}, "a,d"},
		{"ns prefix", search.Filter{Namespaces: []string{"project/x/"}}, "a,b,d"},
		{"ns prefix parent", search.Filter{Namespaces: []string{"project/"}}, "a,b,c,d"},
		{"ns several", search.Filter{Namespaces: []string{"project/xy", "workspace/"}}, "c,f"},
		{"ns star", search.Filter{Namespaces: []string{"*"}}, "a,b,c,d,e,f,g"},
		{"ns star among others", search.Filter{Namespaces: []string{"project/x", "*"}}, "a,b,c,d,e,f,g"},
		{"ns none matching", search.Filter{Namespaces: []string{"nothing/"}}, ""},
		{"type", search.Filter{Types: []string{"note"}}, "a,c,f,g"},
		{"types", search.Filter{Types: []string{"decision", "note"}, Namespaces: []string{"project/x/"}}, "a,b"},
		{"owner", search.Filter{Owner: "bob"}, "b,d"},
		{"owner and kind", search.Filter{Owner: "alice", Kinds: []string{"memory"}, Namespaces: []string{"project/"}}, "a,c"},
		{"all fields", search.Filter{Kinds: []string{"memory"}, Namespaces: []string{"project/x/"}, Types: []string{"decision"}, Owner: "bob"}, "b"},
	} {
		f := tc.f
		f.Tenant = tenantA
		th := text(t, x, "zebra", f, 20)
		vh := vector(t, x, emb, f, 20, 0, 1, 0, 0)
		if got := sorted(th); got != tc.want {
			t.Errorf("%s: text %q, want %q", tc.name, got, tc.want)
		}
		if got := sorted(vh); got != tc.want {
			t.Errorf("%s: vector %q, want %q", tc.name, got, tc.want)
		}
	}
}

func testExpiry(t *testing.T, x search.Index) {
	d1 := doc(tenantA, "keeps", "", "ephemeral note")
	d2 := doc(tenantA, "expires", "", "ephemeral note")
	d2.ExpiresAt = 1000
	upsert(t, x, d1, d2)
	setVector(t, x, tenantA, "keeps", emb, 1, 1, 0, 0)
	setVector(t, x, tenantA, "expires", emb, 1, 1, 0, 0)
	for _, tc := range []struct {
		now  int64
		want string
	}{{999, "expires,keeps"}, {1000, "keeps"}, {5000, "keeps"}} {
		f := search.Filter{Tenant: tenantA, NowMS: tc.now}
		if got := sorted(text(t, x, "ephemeral", f, 10)); got != tc.want {
			t.Errorf("text at %d: %s, want %s", tc.now, got, tc.want)
		}
		if got := sorted(vector(t, x, emb, f, 10, 1, 1, 0, 0)); got != tc.want {
			t.Errorf("vector at %d: %s, want %s", tc.now, got, tc.want)
		}
	}
}

func testVectorRanking(t *testing.T, x search.Index) {
	vecs := map[string][]float32{
		"same":     {1, 0, 0, 0},
		"scaled":   {5, 0.5, 0, 0}, // length does not matter: cosine
		"diagonal": {1, 1, 0, 0},
		"ortho":    {0, 0, 1, 0},
		"opposite": {-1, 0, 0, 0},
	}
	for id, v := range vecs {
		upsert(t, x, doc(tenantA, id, "", "vector doc "+id))
		setVector(t, x, tenantA, id, emb, v...)
	}
	hits := vector(t, x, emb, all(tenantA), 10, 2, 0, 0, 0)
	if got := strings.Join(ids(hits), ","); got != "same,scaled,diagonal,ortho,opposite" {
		t.Fatalf("order = %s", got)
	}
	if s := hits[0].Score; s < 0.999 || s > 1.001 {
		t.Errorf("score of the same direction = %v, want cosine 1", s)
	}
	if s := hits[4].Score; s > -0.999 {
		t.Errorf("score of the opposite direction = %v, want cosine -1", s)
	}
	// Replacing a vector moves the document.
	setVector(t, x, tenantA, "ortho", emb, 1, 0.01, 0, 0)
	hits = vector(t, x, emb, all(tenantA), 2, 1, 0, 0, 0)
	if got := sorted(hits); got != "ortho,same" {
		t.Errorf("after replacing a vector: %v", hits)
	}
}

func testEmbedderSeparation(t *testing.T, x search.Index) {
	// One embedder's vector per document: what a document holds once it
	// has a second one is the adapter's (search/local replaces the old).
	upsert(t, x, doc(tenantA, "one", "", "a"), doc(tenantA, "two", "", "b"), doc(tenantA, "three", "", "c"))
	setVector(t, x, tenantA, "one", emb, 1, 0, 0, 0)
	setVector(t, x, tenantA, "two", emb2, 1, 0, 0, 0)
	setVector(t, x, tenantA, "three", emb, 0, 1, 0, 0)
	if got := sorted(vector(t, x, emb, all(tenantA), 10, 1, 0, 0, 0)); got != "one,three" {
		t.Errorf("%s: %s", emb, got)
	}
	if got := sorted(vector(t, x, emb2, all(tenantA), 10, 1, 0, 0, 0)); got != "two" {
		t.Errorf("%s: %s", emb2, got)
	}
	if got := vector(t, x, "never-used/4", all(tenantA), 10, 1, 0, 0, 0); len(got) != 0 {
		t.Errorf("unknown embedder: %v", got)
	}
}

func testVectorMissingDoc(t *testing.T, x search.Index) {
	// The job computed a vector for a document deleted in the meantime.
	if err := x.SetVector(ctx, tenantA, "gone", search.Vector{Embedder: emb, Values: []float32{1, 0, 0, 0}}); err != nil {
		t.Fatalf("SetVector of an absent document: %v, want nil (ignored)", err)
	}
	if hits := vector(t, x, emb, all(tenantA), 10, 1, 0, 0, 0); len(hits) != 0 {
		t.Errorf("vector of an absent document returned: %v", hits)
	}
	// A vector set for another tenant's id does not attach to this one.
	upsert(t, x, doc(tenantA, "m1", "", "x"))
	setVector(t, x, tenantB, "m1", emb, 1, 0, 0, 0)
	if hits := vector(t, x, emb, all(tenantA), 10, 1, 0, 0, 0); len(hits) != 0 {
		t.Errorf("tenant B's vector attached to tenant A's document: %v", hits)
	}
}

func testDimension(t *testing.T, x search.Index) {
	upsert(t, x, doc(tenantA, "m1", "", "x"), doc(tenantA, "m2", "", "y"))
	setVector(t, x, tenantA, "m1", emb, 1, 0, 0, 0)
	err := x.SetVector(ctx, tenantA, "m2", search.Vector{Embedder: emb, Values: []float32{1, 0, 0}})
	if !errors.Is(err, search.ErrDimension) {
		t.Errorf("SetVector of another length: %v, want ErrDimension", err)
	}
	_, err = x.Vector(ctx, search.Vector{Embedder: emb, Values: []float32{1, 0}}, all(tenantA), 5)
	if !errors.Is(err, search.ErrDimension) {
		t.Errorf("Vector query of another length: %v, want ErrDimension", err)
	}
	err = x.SetVector(ctx, tenantA, "m2", search.Vector{Embedder: emb})
	if !errors.Is(err, search.ErrDimension) {
		t.Errorf("SetVector of an empty vector: %v, want ErrDimension", err)
	}
}

func testK(t *testing.T, x search.Index) {
	var docs []search.Doc
	for i := 0; i < 30; i++ {
		docs = append(docs, doc(tenantA, fmt.Sprintf("m%02d", i), "", strings.Repeat("apple ", i+1)+"pie"))
	}
	upsert(t, x, docs...)
	for i := range docs {
		setVector(t, x, tenantA, docs[i].ID, emb, 1, float32(i)/30, 0, 0)
	}
	for _, k := range []int{1, 5, 30} {
		if got := text(t, x, "apple", all(tenantA), k); len(got) != k {
			t.Errorf("text k=%d: %d hits", k, len(got))
		}
		if got := vector(t, x, emb, all(tenantA), k, 1, 0, 0, 0); len(got) != k {
			t.Errorf("vector k=%d: %d hits", k, len(got))
		}
	}
	if got := text(t, x, "apple", all(tenantA), 100); len(got) != 30 {
		t.Errorf("text k=100: %d hits, want all 30", len(got))
	}
	// The nearest vector first, and the top 5 are the 5 nearest.
	got := vector(t, x, emb, all(tenantA), 5, 1, 0, 0, 0)
	if s := strings.Join(ids(got), ","); s != "m00,m01,m02,m03,m04" {
		t.Errorf("top 5 = %s", s)
	}
	for _, k := range []int{0, -1} {
		if got, err := x.Text(ctx, "apple", all(tenantA), k); err != nil || len(got) != 0 {
			t.Errorf("text k=%d: %v %v", k, got, err)
		}
		if got, err := x.Vector(ctx, search.Vector{Embedder: emb, Values: []float32{1, 0, 0, 0}}, all(tenantA), k); err != nil || len(got) != 0 {
			t.Errorf("vector k=%d: %v %v", k, got, err)
		}
	}
}

func testConcurrent(t *testing.T, x search.Index) {
	const writers, each = 4, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers*each*3)
	for w := 0; w < writers; w++ {
		wg.Add(2)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := x.Upsert(ctx, doc(tenantA, id, "", "concurrent write "+id)); err != nil {
					errs <- err
					continue
				}
				if err := x.SetVector(ctx, tenantA, id, search.Vector{Embedder: emb, Values: []float32{1, float32(i), 0, 0}}); err != nil {
					errs <- err
				}
			}
		}(w)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if _, err := x.Text(ctx, "concurrent", all(tenantA), 5); err != nil {
					errs <- err
				}
				if _, err := x.Vector(ctx, search.Vector{Embedder: emb, Values: []float32{1, 0, 0, 0}}, all(tenantA), 5); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := text(t, x, "concurrent", all(tenantA), 100); len(got) != writers*each {
		t.Errorf("after concurrent writes: %d documents, want %d", len(got), writers*each)
	}
	if got := vector(t, x, emb, all(tenantA), 100, 1, 0, 0, 0); len(got) != writers*each {
		t.Errorf("after concurrent writes: %d vectors, want %d", len(got), writers*each)
	}
}
