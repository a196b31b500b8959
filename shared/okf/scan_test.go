package okf_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// The transports' totals: an inline bundle (4 MiB of base64 at most) may
// expand to 64 MiB in all; a file or the CLI keeps the larger default.
func TestInlineLimits(t *testing.T) {
	in := okf.InlineLimits
	if in.MaxTotal != 64<<20 || in.MaxCompressed != 3<<20 || in.MaxFile != okf.DefaultLimits.MaxFile {
		t.Fatalf("inline limits %+v: want 64 MiB in all from 3 MiB compressed, the default per-file limit", in)
	}
	if okf.DefaultLimits.MaxTotal <= in.MaxTotal {
		t.Fatalf("the path transport's total %d must stay above the inline one", okf.DefaultLimits.MaxTotal)
	}
}

// Scan measures a bundle without holding it: Hold bounds what Read will
// hold (the manifest, the JSON Lines, front matter; a foreign bundle's
// concepts whole), far below the bundle's size when most of it is only
// hashed.
func TestScanHold(t *testing.T) {
	const size = 4 << 20
	data := bigBundle(t, 2, size)
	sc, err := okf.Scan("test", data, okf.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if h := sc.Hold(); h <= 0 || h >= size {
		t.Fatalf("hold %d: want what is parsed only, under one %d-byte blob", h, size)
	}
	b, err := sc.Read()
	if err != nil || len(b.Memories) != 3 {
		t.Fatalf("read after scan: %v", err)
	}
	// A foreign bundle's concepts become memories: held whole.
	foreign := tarball(t, file("a.md", "---\ntype: note\n---\n"+strings.Repeat("y", size)))
	sc, err = okf.Scan("test", foreign, okf.DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if h := sc.Hold(); h < size {
		t.Fatalf("hold %d of a foreign bundle with a %d-byte concept", h, size)
	}
	// A bomb is refused by Scan, before anything is held.
	_, err = okf.Scan("test", zeros(t, 8, 1<<20, false, func(i int) string { return fmt.Sprintf("z%d", i) }),
		okf.Limits{MaxCompressed: 1 << 20, MaxTotal: 2 << 20, MaxFile: 1 << 20, MaxEntries: 10})
	if !vp.IsKind(err, vp.KindTooLarge) || !strings.Contains(err.Error(), "z1: ") {
		t.Fatalf("bomb: %v", err)
	}
}
