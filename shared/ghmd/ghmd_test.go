package ghmd_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/ghmd"
	"github.com/vantagepeers/vantagepeers/shared/ghmd/ghmdtest"
)

// attacks are texts an outsider can get logged, or a tenant can name
// things: each would be live Markdown if posted as it is.
var attacks = []string{
	"invalid username @octocat [rotate your token](https://evil.example)",
	"see https://evil.example/x and www.evil.example and mail me at a@evil.example",
	"![pixel](https://evil.example/p.png) <img src=x onerror=alert(1)>",
	`<a href="https://evil.example">click</a> <details open><summary>x</summary>`,
	"a | b | c",
	"`` @octocat `` and ``` fences ``` and ````",
	"```\n@octocat\n```\n[x](https://evil.example)",
	"~~~\n@octocat",
	"line one\n\n# heading @octocat\n> quote\n- item [x](https://evil.example)",
	"*emph* _x_ **@octocat** ~~s~~ <!-- vantagepeers:error:err_1 -->",
	"fixes #1 and owner/repo#2 and GH-3 and gh-4 and deadbeef1234567",
	"\u202egnp.exe @octocat\u2066 zero\u200bwidth \x00 \x1b[31m",
	"\\`@octocat\\` \\| x",
	"`",
	" leading and trailing ` ",
	"| k | v |\n|---|---|\n| @octocat | [x](https://evil.example) |",
	"<https://evil.example> <a@evil.example>",
	"    indented @octocat",
	"&lt;img&gt; &#64;octocat &commat;octocat",
	"[x]: https://evil.example\n[x]",
}

func TestBlockIsInertFencedCode(t *testing.T) {
	for _, s := range attacks {
		checkBlock(t, s)
	}
}

func TestInlineAndCellAreInert(t *testing.T) {
	for _, s := range attacks {
		checkInline(t, s)
		checkCell(t, s)
	}
	for _, s := range []string{"Sigma", "sigma team", "Ünïcode näme"} {
		if got := ghmd.Inline(s, 100); got != s {
			t.Errorf("Inline(%q) = %q: a plain name should stay as it is", s, got)
		}
	}
	for _, s := range []string{"deadbeef", "cafe1234567", "a  b", "a_b", "x.com", "GH-1"} {
		if got := ghmd.Inline(s, 100); got == s {
			t.Errorf("Inline(%q) left it as it is; GitHub could link or format it", s)
		}
	}
	if got := ghmd.Inline("", 10); got != ghmd.Empty {
		t.Errorf("Inline of nothing = %q, want %q", got, ghmd.Empty)
	}
}

func TestTitleIsBoundedOneLineWithoutMentions(t *testing.T) {
	for _, s := range append(attacks, strings.Repeat("é@", 500)) {
		checkTitle(t, s, 120)
	}
	if got := ghmd.Title("[Auto] TypeError: x", 0); got != "[Auto] TypeError: x" {
		t.Errorf("an ordinary title changed: %q", got)
	}
}

func FuzzRenderer(f *testing.F) {
	for _, s := range attacks {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkBlock(t, s)
		checkInline(t, s)
		checkCell(t, s)
		checkTitle(t, s, 80)
	})
}

// oneLine is what Inline and Cell show of s.
func oneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\r' || r == '\t' || r == '\u2028' || r == '\u2029':
			return ' '
		case r == utf8.RuneError, unicode.IsControl(r), unicode.Is(unicode.Cf, r), unicode.Is(unicode.Co, r), r >= 0xE0000 && r <= 0xE007F:
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func checkBlock(t *testing.T, s string) {
	t.Helper()
	doc := "Before.\n\n" + ghmd.Block(s, 10_000) + "\nAfter.\n"
	d := ghmdtest.Parse(doc)
	if p := ghmdtest.Problems(doc); len(p) > 0 {
		t.Fatalf("Block(%q) is live: %v\n%s", s, p, doc)
	}
	if !slices.Equal(d.Blocks, []string{"Paragraph", "FencedCodeBlock", "Paragraph"}) || d.Text != "Before.\nAfter.\n" {
		t.Fatalf("Block(%q) broke out of its fence: blocks %v, text %q\n%s", s, d.Blocks, d.Text, doc)
	}
	// Everything printable of s is in the block, on the same lines.
	want := strings.Fields(oneLine(s))
	got := strings.Fields(oneLine(strings.Join(d.Code, "")))
	if !slices.Equal(got, want) && !strings.ContainsRune(s, 0) {
		t.Fatalf("Block(%q) shows %q", s, got)
	}
}

func checkInline(t *testing.T, s string) {
	t.Helper()
	in := ghmd.Inline(s, 10_000)
	doc := "Said " + in + " today.\n"
	d := ghmdtest.Parse(doc)
	if p := ghmdtest.Problems(doc); len(p) > 0 {
		t.Fatalf("Inline(%q) = %q is live: %v", s, in, p)
	}
	if len(d.Code) > 0 && !slices.Equal(strings.Fields(d.Text), []string{"Said", "today."}) {
		t.Fatalf("Inline(%q) = %q left text outside its code span: %q", s, in, d.Text)
	}
	if !slices.Equal(d.Blocks, []string{"Paragraph"}) {
		t.Fatalf("Inline(%q) = %q broke the paragraph: %v", s, in, d.Blocks)
	}
	shown := strings.Join(d.Code, "")
	if len(d.Code) == 0 {
		shown = strings.TrimSuffix(strings.TrimPrefix(strings.ReplaceAll(d.Text, "\n", ""), "Said "), " today.")
	}
	if want := oneLine(s); shown != want && !(want == "" && shown == ghmd.Empty) && !strings.ContainsRune(s, 0) {
		t.Fatalf("Inline(%q) = %q shows %q, want %q", s, in, shown, want)
	}
}

func checkCell(t *testing.T, s string) {
	t.Helper()
	c := ghmd.Cell(s, 10_000)
	doc := "| key | value |\n|---|---|\n| k | " + c + " |\n| last | row |\n"
	d := ghmdtest.Parse(doc)
	if p := ghmdtest.Problems(doc); len(p) > 0 {
		t.Fatalf("Cell(%q) = %q is live: %v", s, c, p)
	}
	if len(d.Code) > 0 && !slices.Equal(strings.Fields(d.Text), []string{"key", "value", "k", "last", "row"}) {
		t.Fatalf("Cell(%q) = %q left text outside its code span: %q", s, c, d.Text)
	}
	if !slices.Equal(d.Blocks, []string{"Table"}) || len(d.Tables[0]) != 3 {
		t.Fatalf("Cell(%q) = %q broke the table: blocks %v, rows %q", s, c, d.Blocks, d.Tables)
	}
	row := d.Tables[0][1]
	want := oneLine(s)
	if want == "" {
		want = ghmd.Empty
	}
	if len(row) != 2 || row[0] != "k" || (row[1] != want && !strings.ContainsRune(s, 0)) {
		t.Fatalf("Cell(%q) = %q: row %q, want [k %q]", s, c, row, want)
	}
	if last := d.Tables[0][2]; !slices.Equal(last, []string{"last", "row"}) {
		t.Fatalf("Cell(%q) = %q changed the next row: %q", s, c, last)
	}
}

func checkTitle(t *testing.T, s string, max int) {
	t.Helper()
	got := ghmd.Title(s, max)
	if n := utf8.RuneCountInString(got); n > max || n == 0 {
		t.Fatalf("Title(%q) = %q: %d characters, want 1..%d", s, got, n, max)
	}
	for _, r := range got {
		if r == '@' || r == '#' || r == '\n' || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError {
			t.Fatalf("Title(%q) = %q carries %U", s, got, r)
		}
	}
	if ghmdtest.References(got) != nil {
		t.Fatalf("Title(%q) = %q references an issue: %q", s, got, ghmdtest.References(got))
	}
}
