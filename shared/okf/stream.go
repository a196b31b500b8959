package okf

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"errors"
	"io"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// A bundle is read in two passes over its compressed bytes, so that what
// an attacker sends costs inflating it, never holding it:
//
//  1. Scan streams every entry and holds nothing: it enforces the limits
//     (total, per file, entries, names and types) as the bytes come, and
//     measures what the second pass will hold (Hold).
//  2. Scanned.Read streams them again and holds only what is parsed: the
//     manifest, the JSON Lines, the front matter of each concept (a
//     foreign bundle's concepts whole, since they become memories). Every
//     other byte is hashed as it goes by and dropped.
//
// Between the two a caller serving many readers can admit the read against
// a memory budget (okfsvc does).

// Scanned is a bundle that passed the first pass.
type Scanned struct {
	op      string
	data    []byte
	lim     Limits
	machine bool
	hold    int64
}

// Hold is about the bytes Read will hold: what it parses, twice for what
// it decodes (the text and the records), and the table of entry names.
func (s *Scanned) Hold() int64 { return s.hold }

// entryOverhead is what one entry costs in the tables of the second pass
// (map slot, digest, string header).
const entryOverhead = 128

// Scan runs the first pass over data, a .tar.gz: every limit of lim is
// checked while it streams, and nothing is held. op names the caller in
// errors.
func Scan(op string, data []byte, lim Limits) (*Scanned, error) {
	if int64(len(data)) > lim.MaxCompressed {
		return nil, vp.Errorf(op, vp.KindTooLarge, "bundle", "is over %d bytes compressed (the limit)", lim.MaxCompressed)
	}
	var machine bool
	var names, manifest, lines, heads, docs int64
	err := walk(op, data, lim, nil, func(name string, size int64, _ io.Reader) error {
		names += int64(len(name)) + entryOverhead
		switch {
		case name == ManifestPath:
			machine, manifest = true, size
		case isLines(name):
			lines += size
		case strings.HasSuffix(name, ".md"):
			heads += min(size, MaxFrontMatter)
			docs += size
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &Scanned{op: op, data: data, lim: lim, machine: machine, hold: names + 2*docs}
	if machine {
		s.hold = names + 2*manifest + 2*lines + heads
	}
	return s, nil
}

// Read runs the second pass and validates the bundle (see Read).
func (s *Scanned) Read() (*Bundle, error) {
	if s.machine {
		c, err := s.machineContent()
		if err != nil {
			return nil, err
		}
		return readMachine(s.op, c)
	}
	files, err := s.foreignFiles()
	if err != nil {
		return nil, err
	}
	return readForeign(s.op, files)
}

// content is what the second pass keeps of a bundle with a machine layer.
type content struct {
	digests  map[string][sha256.Size]byte
	manifest []byte
	lines    map[string][]byte
	// heads are the concepts' first bytes, front matter included unless
	// cut (the concept was longer than MaxFrontMatter).
	heads map[string][]byte
	cut   map[string]bool
}

func isLines(name string) bool {
	return name == MemoriesPath || name == BriefingsPath || name == TasksPath
}

func (s *Scanned) machineContent() (*content, error) {
	c := &content{digests: map[string][sha256.Size]byte{}, lines: map[string][]byte{}, heads: map[string][]byte{}, cut: map[string]bool{}}
	buf := make([]byte, 32<<10)
	dirs := map[string]bool{}
	err := walk(s.op, s.data, s.lim, dirs, func(name string, size int64, r io.Reader) error {
		if _, dup := c.digests[name]; dup || (name == ManifestPath && c.manifest != nil) {
			return vp.Errorf(s.op, vp.KindInvalid, name, "appears twice in the tarball")
		}
		h := sha256.New()
		switch {
		case name == ManifestPath || isLines(name):
			b, err := readN(r, size)
			if err != nil {
				return err
			}
			if name == ManifestPath {
				c.manifest = b
				return nil
			}
			h.Write(b)
			c.lines[name] = b
		case strings.HasSuffix(name, ".md"):
			b, err := readN(r, min(size, MaxFrontMatter))
			if err != nil {
				return err
			}
			h.Write(b)
			c.heads[name], c.cut[name] = b, size > MaxFrontMatter
		}
		if _, err := io.CopyBuffer(h, r, buf); err != nil {
			return err
		}
		c.digests[name] = [sha256.Size]byte(h.Sum(nil))
		return nil
	})
	if err != nil {
		return nil, err
	}
	for d := range dirs {
		if _, clash := c.digests[d]; clash || d == ManifestPath {
			return nil, vp.Errorf(s.op, vp.KindInvalid, d, "is both a folder and a file")
		}
	}
	return c, nil
}

// foreignFiles keeps the concepts of a bundle without a machine layer
// whole: they become memories. Other files are only read past.
func (s *Scanned) foreignFiles() (map[string][]byte, error) {
	files := map[string][]byte{}
	seen := map[string]bool{}
	dirs := map[string]bool{}
	err := walk(s.op, s.data, s.lim, dirs, func(name string, size int64, r io.Reader) error {
		if seen[name] {
			return vp.Errorf(s.op, vp.KindInvalid, name, "appears twice in the tarball")
		}
		seen[name] = true
		if strings.HasSuffix(name, ".md") {
			b, err := readN(r, size)
			if err != nil {
				return err
			}
			files[name] = b
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for d := range dirs {
		if seen[d] {
			return nil, vp.Errorf(s.op, vp.KindInvalid, d, "is both a folder and a file")
		}
	}
	return files, nil
}

// readN reads an entry of n bytes into a slice of exactly that size (no
// doubling growth).
func readN(r io.Reader, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	return b, nil
}

// countingReader fails once more than max bytes came through: the cap on
// decompressed bytes that stops a gzip bomb while it is being read. One
// counts the tar stream; another, shared by the entries, what they yield
// (more than the stream, for a sparse entry).
type countingReader struct {
	r   io.Reader
	n   *int64
	max int64
}

var errOverLimit = errors.New("over the limit")

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	if *c.n > c.max {
		return n, errOverLimit
	}
	return n, err
}

// walk streams the entries of data: it refuses, while reading, whatever
// breaks lim or is not a regular file with a clean name, records folders
// in dirs (when not nil), and hands each regular file to fn with a reader
// of its bytes. What fn leaves unread is read past (and counted). An
// error of fn that is not a *vp.Error is a read error of that entry.
func walk(op string, data []byte, lim Limits, dirs map[string]bool, fn func(name string, size int64, r io.Reader) error) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return vp.Errorf(op, vp.KindInvalid, "bundle", "is not a gzip stream (a bundle is a .okf.tar.gz): %v", err)
	}
	zr.Multistream(false)
	var streamed, yielded int64
	tr := tar.NewReader(&countingReader{r: zr, n: &streamed, max: lim.MaxTotal})
	fail := func(where string, err error) error {
		var e *vp.Error
		switch {
		case errors.As(err, &e):
			return err
		case errors.Is(err, errOverLimit):
			return vp.Errorf(op, vp.KindTooLarge, where, "the bundle decompresses to over %d bytes (the limit for a bundle sent this way), crossed while reading this entry: send a smaller bundle or use the CLI (`vantagepeers okf`)", lim.MaxTotal)
		}
		return vp.Errorf(op, vp.KindInvalid, "bundle", "is not a valid tar.gz (at %s): %v", where, err)
	}
	entries := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail("bundle", err)
		}
		entries++
		if entries > lim.MaxEntries {
			return vp.Errorf(op, vp.KindTooLarge, "bundle", "has over %d entries (the limit)", lim.MaxEntries)
		}
		name, err := entryName(op, h.Name)
		if err != nil {
			return err
		}
		switch h.Typeflag {
		case tar.TypeReg: // the reader reports old TypeRegA entries as TypeReg
		case tar.TypeDir:
			if dirs != nil {
				dirs[strings.TrimSuffix(name, "/")] = true
			}
			continue
		case tar.TypeXGlobalHeader:
			continue
		case tar.TypeSymlink, tar.TypeLink:
			return vp.Errorf(op, vp.KindInvalid, name, "is a link; a bundle holds regular files only")
		case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
			return vp.Errorf(op, vp.KindInvalid, name, "is a device or pipe; a bundle holds regular files only")
		default:
			return vp.Errorf(op, vp.KindInvalid, name, "has tar entry type %q; a bundle holds regular files only", h.Typeflag)
		}
		name = strings.TrimSuffix(name, "/")
		if h.Size > lim.MaxFile {
			return vp.Errorf(op, vp.KindTooLarge, name, "is %d bytes; the limit per file is %d", h.Size, lim.MaxFile)
		}
		r := &countingReader{r: tr, n: &yielded, max: lim.MaxTotal}
		if err := fn(name, h.Size, r); err != nil {
			return fail(name, err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			return fail(name, err)
		}
	}
	// Trailing data after the tar (a second gzip member, padding) is read
	// too, so that it counts against the limits and cannot hide.
	if _, err := io.Copy(io.Discard, &countingReader{r: zr, n: &streamed, max: lim.MaxTotal}); err != nil {
		return fail("bundle", err)
	}
	return nil
}
