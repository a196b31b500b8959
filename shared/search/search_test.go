package search_test

import (
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
