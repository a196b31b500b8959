package okf_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/okf"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// zeros packs n entries of size bytes of zeros (front matter first when
// md), named name(i): a gzip bomb whose every entry is under the per-file
// limit.
func zeros(t testing.TB, n int, size int64, md bool, name func(int) string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	chunk := make([]byte, 1<<20)
	head := []byte("---\ntype: note\n---\n")
	for i := range n {
		if err := tw.WriteHeader(&tar.Header{Name: name(i), Size: size, Mode: 0o644, Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		left := size
		if md {
			_, _ = tw.Write(head)
			left -= int64(len(head))
		}
		for left > 0 {
			k := min(left, int64(len(chunk)))
			_, _ = tw.Write(chunk[:k])
			left -= k
		}
	}
	_ = tw.Close()
	_ = zw.Close()
	return buf.Bytes()
}

// The total decompressed bytes are refused while reading, in the entry
// where the limit is crossed, and the refusal names both: the 4th entry of
// 1 MiB crosses a total of 3.5 MiB, so the 5th and later are never read.
func TestReadRefusesTotalInTheEntryThatCrossesIt(t *testing.T) {
	lim := okf.Limits{MaxCompressed: 1 << 20, MaxTotal: 7 << 19, MaxFile: 1 << 20, MaxEntries: 100}
	for _, md := range []bool{false, true} {
		data := zeros(t, 8, 1<<20, md, func(i int) string { return fmt.Sprintf("bomb/%02d.md", i) })
		_, err := okf.Read("test", bytes.NewReader(data), lim)
		var e *vp.Error
		if !errors.As(err, &e) || e.Kind != vp.KindTooLarge {
			t.Fatalf("md=%v: got %v, want a too_large refusal", md, err)
		}
		if e.Field != "bomb/03.md" || !strings.Contains(e.Msg, "3670016") {
			t.Fatalf("md=%v: the refusal must name the entry where the total was crossed (bomb/03.md) and the limit 3670016: %v", md, err)
		}
	}
}

// bigBundle is a valid bundle of sample(3) with blobs extra files of size
// bytes each (a .bin file, and a concept whose body is that large), every
// one listed in the manifest with its checksum.
func bigBundle(t *testing.T, blobs int, size int) []byte {
	t.Helper()
	return rewrite(t, func(f map[string][]byte) {
		for i := range blobs {
			f[fmt.Sprintf("blobs/%d.bin", i)] = make([]byte, size)
			f[fmt.Sprintf("memories/note/big-%d.md", i)] = append([]byte("---\ntype: note\n---\n"), bytes.Repeat([]byte("x"), size)...)
		}
	}, false)
}

// allocated returns the bytes fn allocated (all goroutines; the package's
// tests run one at a time).
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// Entries are hashed while streamed: checking the checksums of 24 MiB of
// files that need no parsing (blobs, the bodies of a machine bundle's
// concepts) allocates less than one of them.
func TestReadHashesWhileStreaming(t *testing.T) {
	const size = 4 << 20
	data := bigBundle(t, 3, size)
	var b *okf.Bundle
	var err error
	n := allocated(func() { b, err = okf.Read("test", bytes.NewReader(data), okf.DefaultLimits) })
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Memories) != 3 {
		t.Fatalf("read %d memories, want 3", len(b.Memories))
	}
	t.Logf("reading a bundle of %d bytes compressed, %d MiB of files, allocated %d KiB", len(data), 6*size>>20, n>>10)
	if n >= size {
		t.Fatalf("reading allocated %d bytes: files that are only hashed are held in memory (one is %d bytes)", n, size)
	}
	// The checksums are still checked, on the streamed bytes.
	bad := rewrite(t, func(f map[string][]byte) { f["blobs/0.bin"] = make([]byte, 1<<20) }, false)
	bad = retamper(t, bad, "blobs/0.bin")
	if _, err := okf.Read("test", bytes.NewReader(bad), okf.DefaultLimits); err == nil || !strings.Contains(err.Error(), "blobs/0.bin: checksum mismatch") {
		t.Fatalf("a tampered blob: %v", err)
	}
}

// retamper flips the last byte of entry name, leaving the manifest alone.
func retamper(t *testing.T, data []byte, name string) []byte {
	t.Helper()
	files := untar(t, data)
	b := files[name]
	b[len(b)-1] ^= 1
	var es []entry
	for n, body := range files {
		es = append(es, entry{h: tar.Header{Name: n}, body: body})
	}
	return tarball(t, es...)
}
