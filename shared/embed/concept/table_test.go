package concept

import (
	"bytes"
	"compress/gzip"
	"io"
	"testing"
)

// TestCorruptTable: a damaged table is an error, never a panic or a
// table that answers wrongly.
func TestCorruptTable(t *testing.T) {
	zr, err := gzip.NewReader(bytes.NewReader(wordnetTable))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := parse(raw); err != nil {
		t.Fatalf("the checked-in table: %v", err)
	}
	for _, n := range []int{0, 3, 10, 1000, len(raw) / 2, len(raw) - 1} {
		if _, err := parse(raw[:n]); err == nil {
			t.Errorf("table cut at %d of %d bytes: want an error", n, len(raw))
		}
	}
	bad := bytes.Clone(raw)
	bad[len(bad)/3] ^= 0xff
	bad = append(bad, 0)
	if _, err := parse(bad); err == nil {
		t.Error("a changed byte and a trailing byte: want an error")
	}
	if _, err := decode([]byte("not gzip")); err == nil {
		t.Error("not gzip: want an error")
	}
}
