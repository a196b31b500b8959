package search_test

import (
	"context"
	"math"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/search"
)

func TestFuse(t *testing.T) {
	a := []search.Hit{{ID: "x", Kind: "memory"}, {ID: "y", Kind: "memory"}, {ID: "z", Kind: "memory"}}
	b := []search.Hit{{ID: "z", Kind: "memory"}, {ID: "w", Kind: "episode"}}
	got := search.Fuse(10, a, b)
	want := map[string]float64{
		"x": 1.0 / 61,
		"y": 1.0 / 62,
		"z": 1.0/63 + 1.0/61,
		"w": 1.0 / 62,
	}
	if len(got) != 4 {
		t.Fatalf("got %v", got)
	}
	if got[0].ID != "z" {
		t.Errorf("first = %s, want z (in both lists)", got[0].ID)
	}
	for _, h := range got {
		if math.Abs(h.Score-want[h.ID]) > 1e-12 {
			t.Errorf("%s: score %v, want %v", h.ID, h.Score, want[h.ID])
		}
	}
	// Ties (w and y, both rank 2 in one list) break by id.
	if got[2].ID != "w" || got[3].ID != "y" {
		t.Errorf("tie order = %s,%s, want w,y", got[2].ID, got[3].ID)
	}
	if got[2].Kind != "episode" {
		t.Errorf("kind of w = %q", got[2].Kind)
	}
	if got := search.Fuse(2, a, b); len(got) != 2 || got[0].ID != "z" || got[1].ID != "x" {
		t.Errorf("k=2: %v", got)
	}
	if got := search.Fuse(5); len(got) != 0 {
		t.Errorf("no lists: %v", got)
	}
	if got := search.Fuse(5, nil, a); len(got) != 3 || got[0].ID != "x" {
		t.Errorf("one empty list: %v", got)
	}
	if search.RRFK != 60 {
		t.Errorf("RRFK = %d, want 60", search.RRFK)
	}
}

func TestNamespaceAllowed(t *testing.T) {
	for _, tc := range []struct {
		pats []string
		ns   string
		want bool
	}{
		{[]string{"*"}, "", true},
		{[]string{"*"}, "a/b", true},
		{[]string{"a/"}, "a", true},
		{[]string{"a/"}, "a/b/c", true},
		{[]string{"a/"}, "ab", false},
		{[]string{"a"}, "a/b", false},
		{[]string{"a"}, "a", true},
		{[]string{"x", "a/"}, "a/b", true},
		{nil, "a", false},
	} {
		if got := search.NamespaceAllowed(tc.pats, tc.ns); got != tc.want {
			t.Errorf("NamespaceAllowed(%q, %q) = %v", tc.pats, tc.ns, got)
		}
	}
}

func TestFuseWeighted(t *testing.T) {
	a := []search.Hit{{ID: "x"}, {ID: "y"}}
	b := []search.Hit{{ID: "y"}, {ID: "z"}}
	got := search.FuseWeighted(10, []float64{1, 0.5}, a, b)
	want := map[string]float64{"x": 1.0 / 61, "y": 1.0/62 + 0.5/61, "z": 0.5 / 62}
	if len(got) != 3 || got[0].ID != "y" || got[1].ID != "x" || got[2].ID != "z" {
		t.Fatalf("order %v", got)
	}
	for _, h := range got {
		if math.Abs(h.Score-want[h.ID]) > 1e-12 {
			t.Errorf("%s: %v, want %v", h.ID, h.Score, want[h.ID])
		}
	}
	// Equal weights are Fuse; missing weights are 1.
	f1, f2 := search.Fuse(10, a, b), search.FuseWeighted(10, nil, a, b)
	for i := range f1 {
		if f1[i] != f2[i] {
			t.Errorf("FuseWeighted(nil) differs from Fuse: %v %v", f1, f2)
		}
	}
}

// stubIndex answers Text and Vector from fixed lists and records k.
type stubIndex struct {
	search.Index
	text, vec  []search.Hit
	tk, vk     int
	textErr    error
	vectorUsed bool
}

func (s *stubIndex) Text(_ context.Context, _ string, _ search.Filter, k int) ([]search.Hit, error) {
	s.tk = k
	return s.text, s.textErr
}

func (s *stubIndex) Vector(_ context.Context, _ search.Vector, _ search.Filter, k int) ([]search.Hit, error) {
	s.vk, s.vectorUsed = k, true
	return s.vec, nil
}

func TestHybrid(t *testing.T) {
	ctx := context.Background()
	f := search.Filter{Tenant: "t"}
	v := &search.Vector{Embedder: "e", Values: []float32{1}}
	s := &stubIndex{text: []search.Hit{{ID: "a"}, {ID: "b"}, {ID: "c"}}, vec: []search.Hit{{ID: "c"}, {ID: "d"}}}
	got, err := search.Hybrid(ctx, s, "q", v, f, 2, search.HybridOptions{})
	if err != nil || len(got) != 2 || got[0].ID != "c" {
		t.Fatalf("hybrid %v %v", got, err)
	}
	if s.tk != search.HybridDepth || s.vk != search.HybridDepth {
		t.Errorf("depths %d %d, want %d", s.tk, s.vk, search.HybridDepth)
	}
	// A small vector weight keeps BM25's order.
	got, _ = search.Hybrid(ctx, s, "q", v, f, 3, search.HybridOptions{VectorWeight: 0.01, Depth: 5})
	if got[0].ID != "a" || s.tk != 5 {
		t.Errorf("weighted: %v (depth %d)", got, s.tk)
	}
	// Without a vector: BM25 alone, cut to k.
	s.vectorUsed = false
	got, _ = search.Hybrid(ctx, s, "q", nil, f, 2, search.HybridOptions{})
	if len(got) != 2 || got[0].ID != "a" || s.vectorUsed {
		t.Errorf("no vector: %v", got)
	}
	// Text errors (an empty query) are returned.
	s.textErr = search.ErrEmptyQuery
	if _, err := search.Hybrid(ctx, s, "?", v, f, 2, search.HybridOptions{}); err != search.ErrEmptyQuery {
		t.Errorf("err %v", err)
	}
	if got, err := search.Hybrid(ctx, s, "q", v, f, 0, search.HybridOptions{}); err != nil || len(got) != 0 {
		t.Errorf("k=0: %v %v", got, err)
	}
}
