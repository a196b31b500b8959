package templates

import (
	"slices"
	"strings"
	"testing"
)

// FuzzLearn: the lines of the input, learned in order: no panic; the
// state stays within its caps and restores; two Learners agree; every
// learned message is covered by its group's template; and the lines in
// reverse order end in the same groups.
func FuzzLearn(f *testing.F) {
	f.Add(strings.Join([]string{
		"Invalid user alice from 10.0.0.1", "Invalid user bob from 10.0.0.2",
		"Invalid user carol from 10.0.0.3", "Invalid user dave from 10.0.0.4",
		"Block a stored as bytes in memory (estimated size 5.2 KB, free 3 KB)",
		"status=true", "status=false", "x y z", "x y w", "a b c d", "a q c e",
	}, "\n"))
	f.Add("blk_1 blk_2 blk_3\n1 2 3\n'a' 'b'\n\n<*> <*>\n(1 KB) (2 MB)")
	f.Fuzz(func(t *testing.T, in string) {
		lines := strings.Split(in, "\n")
		if len(lines) > 64 {
			lines = lines[:64]
		}
		small := Options{MaxTemplates: 8, MaxPerBucket: 4}
		a, b := New(small), New(small)
		for _, m := range lines {
			ra, rb := a.LearnMessage(Scope{}, m), b.LearnMessage(Scope{}, m)
			if ra.Key != rb.Key || ra.Template != rb.Template || !slices.Equal(ra.Merged, rb.Merged) {
				t.Fatalf("two Learners disagree on %q: %+v, %+v", m, ra, rb)
			}
		}
		st := a.State()
		n := 0
		for _, bk := range st.Buckets {
			if len(bk.Templates) > small.MaxPerBucket {
				t.Fatalf("a bucket of %d templates, cap %d", len(bk.Templates), small.MaxPerBucket)
			}
			n += len(bk.Templates)
		}
		if n > small.MaxTemplates {
			t.Fatalf("%d templates, cap %d", n, small.MaxTemplates)
		}
		if _, err := Restore(small, st); err != nil {
			t.Fatalf("the state does not restore: %v", err)
		}

		// Under the default caps (64 lines never reach them): coverage
		// and order independence.
		fwd := New(Options{})
		keys := make([]string, len(lines))
		for i, m := range lines {
			keys[i] = fwd.LearnMessage(Scope{}, m).Key
		}
		for i, m := range lines {
			k := fwd.Resolve(keys[i])
			tp := fwd.byKey[k]
			if tp == nil {
				t.Fatalf("line %d %q: group %s has no template", i, m, k)
			}
			if toks := tokenize(m); len(toks) != len(tp.toks) || !covers(tp.list, newList(toks)) {
				t.Fatalf("line %d %q is not covered by its template %q", i, m, tp.text())
			}
			keys[i] = k
		}
		rev := New(Options{})
		rkeys := make([]string, len(lines))
		for i := len(lines) - 1; i >= 0; i-- {
			rkeys[i] = rev.LearnMessage(Scope{}, lines[i]).Key
		}
		for i := range rkeys {
			rkeys[i] = rev.Resolve(rkeys[i])
		}
		if partition(keys) != partition(rkeys) {
			t.Fatalf("order matters:\n forward %s\n reverse %s", partition(keys), partition(rkeys))
		}
	})
}
