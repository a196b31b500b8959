package digest

import (
	"slices"
	"strings"
	"testing"
)

func TestTokens(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"nothing to see here", nil},
		{"landed at ef91f6f on main", []string{"ef91f6f"}},
		{"full sha 4ddca2b9e0c1f2a3b4c5d6e7f8a9b0c1d2e3f4a5", []string{"4ddca2b9e0c1f2a3b4c5d6e7f8a9b0c1d2e3f4a5"}},
		{"too short ef91f6", nil},
		{"41 chars 4ddca2b9e0c1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b", nil},
		{"all letters deadbeefcafe, all digits 12345678", nil},
		{"upper case EF91F6F is not a sha", nil},
		{"inside a word xef91f6f or ef91f6f_x", nil},
		{"see PR #954 and (#12).", []string{"#954", "#12"}},
		{"C#1 and &#123; are not refs; # alone neither", nil},
		{"msg j57bc8m7xhy0v6q8nq3jvcf5ex7h4f2k ok", []string{"j57bc8m7xhy0v6q8nq3jvcf5ex7h4f2k"}},
		{"task k17bc8m7xhy0v6q8nq3jvcf5ex7h4f2k", []string{"k17bc8m7xhy0v6q8nq3jvcf5ex7h4f2k"}},
		{"k97a0pp6kq1axkj6cmc4pecpy989ce1w starts with k9", nil},
		{"j57bc8m7xhy0v6q8nq3jvcf5ex7h4f2 is 31 long", nil},
		{"jilou8m7xhy0v6q8nq3jvcf5ex7h4f2k has i, l, o, u", nil},
		{"Merged and DEPLOYED, then approved; shipped/released. Fixed!", []string{"merged", "deployed", "approved", "shipped", "released", "fixed"}},
		{"unmerged, fixedly, prefixed, merges", nil},
		{"fixed #42 at ab12cd3, fixed again #42", []string{"fixed", "#42", "ab12cd3"}},
		{"#1 #2 #3 #4 #5 #6 #7 #8 #9 #10 #11", []string{"#1", "#2", "#3", "#4", "#5", "#6", "#7", "#8", "#9", "#10"}},
	} {
		if got := Tokens(tc.text); !slices.Equal(got, tc.want) {
			t.Errorf("Tokens(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestFlag(t *testing.T) {
	if got := Flag("merged #12"); !slices.Equal(got, []string{"merged", "#12"}) {
		t.Fatalf("Flag = %q", got)
	}
	if got := Flag("merged #12\n\nVP-Sources: msg_01"); got != nil {
		t.Fatalf("cited record flagged: %q", got)
	}
	if got := Flag("vp-sources: lower case does not count, merged"); !slices.Equal(got, []string{"merged"}) {
		t.Fatalf("Flag = %q", got)
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range []string{"", "merged #954 at ef91f6f", "j57bc8m7xhy0v6q8nq3jvcf5ex7h4f2k", "C#1 &#2; x#3", "Fixed\u00e9merged", "\u017fhipped", "\xff#12\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := Tokens(text)
		if len(got) > maxTokens {
			t.Fatalf("%d tokens", len(got))
		}
		seen := map[string]bool{}
		for _, tok := range got {
			if tok == "" || seen[tok] {
				t.Fatalf("empty or repeated token %q in %q", tok, got)
			}
			seen[tok] = true
			if !strings.Contains(strings.ToLower(text), strings.ToLower(tok)) {
				t.Fatalf("token %q not in text %q", tok, text)
			}
		}
		if !slices.Equal(got, Tokens(text)) {
			t.Fatal("not deterministic")
		}
		if Flag(text+" "+SourcesMarker) != nil {
			t.Fatal("a cited text is flagged")
		}
	})
}
