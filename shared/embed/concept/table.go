package concept

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/embed/concept/internal/wnbuild"
)

//go:generate go run ./gen -out wordnet.bin.gz

// wordnetTable is generated from WordNet 3.0 by ./gen (see LICENSE-WordNet).
//
//go:embed wordnet.bin.gz
var wordnetTable []byte

// table is the decoded WordNet table: lemmas sorted, their senses and the
// synsets' hypernyms in flat arrays (a few allocations for 150,000 lemmas).
type table struct {
	hypStart   []uint32 // synset i's hypernyms are hyp[hypStart[i]:hypStart[i+1]]
	hyp        []uint32
	keys       []string // sorted; slices of one string
	pos        []byte   // wnbuild.Noun|Verb|Adj|Adv per key
	senseStart []uint32 // key i's senses are senseSyn[senseStart[i]:senseStart[i+1]]
	senseSyn   []uint32
	senseCnt   []uint32
	exc        map[string][]string
}

// loadTable decodes the embedded table once, on first use: the binary
// starts without paying for it when no one embeds.
var loadTable = sync.OnceValues(func() (*table, error) { return decode(wordnetTable) })

func decode(gz []byte) (*table, error) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("concept: wordnet table: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(2 * len(gz)) // the table compresses about 1.8 to 1
	_, err = io.Copy(&buf, zr)
	raw := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("concept: wordnet table: %w", err)
	}
	return parse(raw)
}

var errTable = errors.New("concept: wordnet table is corrupt")

type reader struct {
	b   []byte
	err error
}

func (r *reader) uint() int {
	if r.err != nil {
		return 0
	}
	x, n := binary.Uvarint(r.b)
	if n <= 0 || x > 1<<31 {
		r.err = errTable
		return 0
	}
	r.b = r.b[n:]
	return int(x)
}

func (r *reader) bytes(n int) []byte {
	if r.err != nil || n > len(r.b) {
		r.err = errTable
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// front reads a front-coded string (see wnbuild) after prev.
func (r *reader) front(prev []byte, buf []byte) []byte {
	shared, n := r.uint(), r.uint()
	if shared > len(prev) {
		r.err = errTable
		return buf
	}
	buf = append(buf, prev[:shared]...)
	return append(buf, r.bytes(n)...)
}

func parse(raw []byte) (*table, error) {
	if !bytes.HasPrefix(raw, []byte(wnbuild.Magic)) {
		return nil, errTable
	}
	r := &reader{b: raw[len(wnbuild.Magic):]}
	t := &table{}
	nsyn := r.uint()
	t.hypStart = make([]uint32, 0, nsyn+1)
	for range nsyn {
		t.hypStart = append(t.hypStart, uint32(len(t.hyp)))
		for n := r.uint(); n > 0 && r.err == nil; n-- {
			h := r.uint()
			if h >= nsyn {
				r.err = errTable
			}
			t.hyp = append(t.hyp, uint32(h))
		}
	}
	t.hypStart = append(t.hypStart, uint32(len(t.hyp)))
	nkeys := r.uint()
	if r.err != nil || nkeys > len(r.b) {
		return nil, errTable
	}
	// All keys go into one buffer, cut into strings once it is complete.
	blob := make([]byte, 0, len(r.b))
	ends := make([]int, 0, nkeys)
	t.pos = make([]byte, 0, nkeys)
	t.senseStart = make([]uint32, 0, nkeys+1)
	t.senseSyn = make([]uint32, 0, 2*nkeys)
	t.senseCnt = make([]uint32, 0, 2*nkeys)
	prevStart := 0
	for range nkeys {
		start := len(blob)
		blob = r.front(blob[prevStart:start], blob)
		prevStart = start
		ends = append(ends, len(blob))
		p := r.bytes(1)
		if r.err != nil {
			return nil, r.err
		}
		t.pos = append(t.pos, p[0])
		t.senseStart = append(t.senseStart, uint32(len(t.senseSyn)))
		for n := r.uint(); n > 0 && r.err == nil; n-- {
			s := r.uint()
			if s >= nsyn {
				r.err = errTable
			}
			t.senseSyn = append(t.senseSyn, uint32(s))
			t.senseCnt = append(t.senseCnt, uint32(r.uint()))
		}
	}
	t.senseStart = append(t.senseStart, uint32(len(t.senseSyn)))
	all := string(blob)
	t.keys = make([]string, nkeys)
	start := 0
	for i, e := range ends {
		t.keys[i] = all[start:e]
		start = e
	}
	nexc := r.uint()
	if r.err != nil || nexc > len(r.b) {
		return nil, errTable
	}
	t.exc = make(map[string][]string, nexc)
	var prev []byte
	for range nexc {
		s := r.front(prev, nil)
		prev = s
		bases := make([]string, r.uint())
		for i := range bases {
			bases[i] = string(r.bytes(r.uint()))
		}
		t.exc[string(s)] = bases
	}
	if r.err != nil {
		return nil, r.err
	}
	if len(r.b) != 0 || !sort.StringsAreSorted(t.keys) {
		return nil, errTable
	}
	return t, nil
}

// lookup is the index of key, or -1.
func (t *table) lookup(key string) int {
	i := sort.SearchStrings(t.keys, key)
	if i < len(t.keys) && t.keys[i] == key {
		return i
	}
	return -1
}

// hasPrefix reports whether some key starts with p.
func (t *table) hasPrefix(p string) bool {
	i := sort.SearchStrings(t.keys, p)
	return i < len(t.keys) && strings.HasPrefix(t.keys[i], p)
}

// startsExpression reports whether some multi-word key starts with the
// token or one of its lemmas (indexes): "looked" starts "look_into".
func (t *table) startsExpression(tok string, lemmas []int) bool {
	if t.hasPrefix(tok + "_") {
		return true
	}
	for _, l := range lemmas {
		if k := t.keys[l]; k != tok && !strings.Contains(k, "_") && t.hasPrefix(k+"_") {
			return true
		}
	}
	return false
}

// Detachment rules of WordNet's morphy (morph.c), per part of speech: an
// inflected ending and what replaces it.
var rules = []struct {
	pos            byte
	suffix, ending string
}{
	{wnbuild.Noun, "s", ""}, {wnbuild.Noun, "ses", "s"}, {wnbuild.Noun, "xes", "x"}, {wnbuild.Noun, "zes", "z"},
	{wnbuild.Noun, "ches", "ch"}, {wnbuild.Noun, "shes", "sh"}, {wnbuild.Noun, "men", "man"}, {wnbuild.Noun, "ies", "y"},
	{wnbuild.Verb, "s", ""}, {wnbuild.Verb, "ies", "y"}, {wnbuild.Verb, "es", "e"}, {wnbuild.Verb, "es", ""},
	{wnbuild.Verb, "ed", "e"}, {wnbuild.Verb, "ed", ""}, {wnbuild.Verb, "ing", "e"}, {wnbuild.Verb, "ing", ""},
	{wnbuild.Adj, "er", ""}, {wnbuild.Adj, "est", ""}, {wnbuild.Adj, "er", "e"}, {wnbuild.Adj, "est", "e"},
}

// lemmas appends to dst the indexes of the WordNet lemmas of word (a key:
// a token, or tokens joined by "_"), as morphy finds them: the word itself
// if WordNet has it, the bases its exception lists give, and otherwise
// what the detachment rules give when WordNet has it in that part of
// speech. A multi-word key is lemmatized on its first word ("looked_into"
// -> "look_into").
func (t *table) lemmas(dst []int, word string) []int {
	add := func(i int) {
		if i >= 0 {
			for _, j := range dst {
				if j == i {
					return
				}
			}
			dst = append(dst, i)
		}
	}
	add(t.lookup(word))
	if bases, ok := t.exc[word]; ok {
		for _, b := range bases {
			add(t.lookup(b))
		}
		return dst
	}
	head, rest, multi := strings.Cut(word, "_")
	if multi {
		for _, b := range t.exc[head] {
			add(t.lookup(b + "_" + rest))
		}
		word = head
	}
	for _, r := range rules {
		if len(word) <= len(r.suffix) || !strings.HasSuffix(word, r.suffix) {
			continue
		}
		if r.pos == wnbuild.Noun && strings.HasSuffix(word, "ss") {
			continue // "glass" is not the plural of "glas"
		}
		base := word[:len(word)-len(r.suffix)] + r.ending
		if multi {
			base += "_" + rest
		}
		if i := t.lookup(base); i >= 0 && (multi || t.pos[i]&r.pos != 0) {
			add(i)
		}
	}
	return dst
}
