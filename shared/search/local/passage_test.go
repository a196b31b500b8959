package local_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/search/local"
)

func words(n int, w string) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }

func TestPassages(t *testing.T) {
	// Short texts are one passage: themselves.
	for _, s := range []string{"", "one line", words(150, "w"), "a\nb\nc"} {
		if p := local.Passages(s); len(p) != 1 || p[0] != s {
			t.Errorf("Passages(%.20q) = %d passages, want the text itself", s, len(p))
		}
	}
	// 40 lines of 10 words: passages of at most 128 words, on line
	// boundaries, overlapping by about half, covering every line.
	var lines []string
	for i := 0; i < 40; i++ {
		lines = append(lines, words(9, "w")+" L"+string(rune('A'+i%26))+string(rune('a'+i/26)))
	}
	ps := local.Passages(strings.Join(lines, "\n"))
	if len(ps) < 5 || len(ps) > 8 {
		t.Fatalf("%d passages for 400 words, want about 400/64", len(ps))
	}
	seen := map[string]int{}
	for _, p := range ps {
		n := len(strings.Fields(p))
		if n > 128 {
			t.Errorf("passage of %d words", n)
		}
		for _, l := range strings.Split(p, "\n") {
			seen[l]++
		}
	}
	for _, l := range lines {
		if seen[l] == 0 {
			t.Errorf("line %q in no passage", l)
		}
	}
	// One long line is cut at sentence ends; a sentence without an end is
	// cut into runs of words.
	long := strings.Repeat(words(30, "s")+". ", 10) + words(300, "z")
	for _, p := range local.Passages(long) {
		if n := len(strings.Fields(p)); n > 128 || n == 0 {
			t.Errorf("passage of %d words", n)
		}
	}
}

// TestPassageRanking: the document whose one paragraph answers the query
// beats documents where the words are scattered.
func TestPassageRanking(t *testing.T) {
	x := open(t)
	defer x.Close()
	filler := func(seed string) string {
		var b strings.Builder
		for i := 0; i < 30; i++ {
			b.WriteString(words(12, seed) + " filler line number " + string(rune('a'+i)) + "\n")
		}
		return b.String()
	}
	answer := filler("alpha") + "The deploy failed because the migration timed out on staging.\n" + filler("beta")
	scattered := "deploy\n" + filler("gamma") + "migration\n" + filler("delta") + "staging\n" + filler("eps") + "failed timed"
	if err := x.Upsert(ctx, doc("answer", answer), doc("scattered", scattered)); err != nil {
		t.Fatal(err)
	}
	hits, err := x.Text(ctx, "why did the deploy fail: migration timed out on staging?", filterT, 5)
	if err != nil || len(hits) != 2 || hits[0].ID != "answer" {
		t.Fatalf("hits %v %v, want answer first", hits, err)
	}
}
