// Package wnbuild turns the files of Princeton WordNet 3.0 (as Debian's
// wordnet-base installs them in /usr/share/wordnet) into the compact table
// that embed/concept embeds: lemma -> most frequent senses with their tag
// counts, synset -> hypernyms, and the morphological exception lists.
//
// The table is a pure function of the WordNet files and of Options, so
// that a test can rebuild it and compare it with the checked-in one.
package wnbuild

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/search/analysis"
)

// Magic opens the table; its version changes with the format.
const Magic = "VPWN1\n"

// POS bits of a lemma, in WordNet's order.
const (
	Noun byte = 1 << iota
	Verb
	Adj
	Adv
)

// Options bound the table.
type Options struct {
	// Senses is the number of senses kept per lemma, the most frequent
	// (by tag count across parts of speech; WordNet's order breaks ties).
	Senses int
	// NounMinDepth drops noun hypernyms closer than this to the root of
	// the hierarchy ("entity" is 0): they are shared by thousands of words
	// and would make everything similar.
	NounMinDepth int
	// VerbMinDepth does the same for verbs, whose hierarchy is shallow.
	VerbMinDepth int
	// UntaggedCompounds keeps multi-word lemmas none of whose senses was
	// ever tagged in WordNet's corpus: 65,000 of its 155,000 lemmas, mostly
	// taxonomic and technical names ("abelmoschus_esculentus") that a
	// conversation between agents hardly contains, for 0.3 MB of table. The
	// phrasal verbs people use are tagged ("look_into", "pick_up") and stay.
	UntaggedCompounds bool
}

// Default is the table embed/concept ships.
var Default = Options{Senses: 4, NounMinDepth: 4, VerbMinDepth: 1}

var posFiles = []struct {
	name string
	bit  byte
	ch   byte
}{{"noun", Noun, 'n'}, {"verb", Verb, 'v'}, {"adj", Adj, 'a'}, {"adv", Adv, 'r'}}

type synKey struct {
	pos    byte // n, v, a, r (satellites are a)
	offset uint32
}

type synset struct {
	hyper []synKey // hypernyms (@, @i), satellite heads (&), adverb pertainyms (\)
	depth int      // shortest hypernym path to a root
}

type sense struct {
	syn   synKey
	count int
	num   int // sense number within its part of speech
	pos   int // index in posFiles
}

// Build reads WordNet from dir and returns the table, uncompressed.
func Build(dir string, o Options) ([]byte, error) {
	syns := map[synKey]*synset{}
	for _, pf := range posFiles {
		if err := readData(filepath.Join(dir, "data."+pf.name), pf.ch, syns); err != nil {
			return nil, err
		}
	}
	counts, err := readCounts(filepath.Join(dir, "cntlist.rev"))
	if err != nil {
		return nil, err
	}
	lemmas := map[string][]sense{}
	posMask := map[string]byte{}
	for i, pf := range posFiles {
		err := eachLine(filepath.Join(dir, "index."+pf.name), func(line string) error {
			f := strings.Fields(line)
			if len(f) < 4 {
				return fmt.Errorf("short index line %q", line)
			}
			pcnt, err := strconv.Atoi(f[3])
			if err != nil || len(f) < 6+pcnt {
				return fmt.Errorf("index line %q: pointer count", line)
			}
			key := Key(f[0])
			if key == "" {
				return nil
			}
			posMask[key] |= pf.bit
			for n, off := range f[6+pcnt:] {
				x, err := strconv.ParseUint(off, 10, 32)
				if err != nil {
					return fmt.Errorf("index line %q: offset %q", line, off)
				}
				k := synKey{pf.ch, uint32(x)}
				if syns[k] == nil {
					return fmt.Errorf("index line %q: no synset %s", line, off)
				}
				lemmas[key] = append(lemmas[key], sense{syn: k, count: counts[countKey{f[0], pf.ch, n + 1}], num: n + 1, pos: i})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	setDepths(syns)
	// Keep the most frequent senses of each lemma, then the synsets they
	// reach within two hypernym levels.
	keys := make([]string, 0, len(lemmas))
	for k, ss := range lemmas {
		if !o.UntaggedCompounds && strings.Contains(k, "_") && !slices.ContainsFunc(ss, func(s sense) bool { return s.count > 0 }) {
			delete(lemmas, k)
			continue
		}
		keys = append(keys, k)
		sort.SliceStable(ss, func(i, j int) bool {
			if ss[i].count != ss[j].count {
				return ss[i].count > ss[j].count
			}
			if ss[i].num != ss[j].num {
				return ss[i].num < ss[j].num
			}
			return ss[i].pos < ss[j].pos
		})
		var kept []sense
		for _, s := range ss {
			if len(kept) < o.Senses && !slices.ContainsFunc(kept, func(x sense) bool { return x.syn == s.syn }) {
				kept = append(kept, s)
			}
		}
		lemmas[k] = kept
	}
	sort.Strings(keys)
	keep := func(k synKey) bool {
		d := syns[k].depth
		switch k.pos {
		case 'n':
			return d >= o.NounMinDepth
		case 'v':
			return d >= o.VerbMinDepth
		}
		return true
	}
	level := map[synKey]int{}
	var frontier []synKey
	for _, k := range keys {
		for _, s := range lemmas[k] {
			if _, ok := level[s.syn]; !ok {
				level[s.syn] = 0
				frontier = append(frontier, s.syn)
			}
		}
	}
	for l := 1; l <= 2; l++ {
		var next []synKey
		for _, k := range frontier {
			for _, h := range syns[k].hyper {
				if _, ok := level[h]; !ok && keep(h) {
					level[h] = l
					next = append(next, h)
				}
			}
		}
		frontier = next
	}
	order := make([]synKey, 0, len(level))
	for k := range level {
		order = append(order, k)
	}
	sort.Slice(order, func(i, j int) bool {
		if order[i].pos != order[j].pos {
			return order[i].pos < order[j].pos
		}
		return order[i].offset < order[j].offset
	})
	id := make(map[synKey]int, len(order))
	for i, k := range order {
		id[k] = i
	}
	var out bytes.Buffer
	out.WriteString(Magic)
	putUint(&out, len(order))
	for _, k := range order {
		var hs []int
		if level[k] < 2 {
			for _, h := range syns[k].hyper {
				if i, ok := id[h]; ok && keep(h) && !slices.Contains(hs, i) {
					hs = append(hs, i)
				}
			}
		}
		putUint(&out, len(hs))
		for _, h := range hs {
			putUint(&out, h)
		}
	}
	putUint(&out, len(keys))
	prev := ""
	for _, k := range keys {
		putFront(&out, prev, k)
		prev = k
		out.WriteByte(posMask[k])
		putUint(&out, len(lemmas[k]))
		for _, s := range lemmas[k] {
			putUint(&out, id[s.syn])
			putUint(&out, s.count)
		}
	}
	exc, err := readExceptions(dir)
	if err != nil {
		return nil, err
	}
	surf := make([]string, 0, len(exc))
	for s := range exc {
		surf = append(surf, s)
	}
	sort.Strings(surf)
	putUint(&out, len(surf))
	prev = ""
	for _, s := range surf {
		putFront(&out, prev, s)
		prev = s
		putUint(&out, len(exc[s]))
		for _, b := range exc[s] {
			putUint(&out, len(b))
			out.WriteString(b)
		}
	}
	return out.Bytes(), nil
}

// Key is the table's spelling of a WordNet lemma or of a run of tokens:
// analysis tokens joined by "_" ("mother-in-law" -> "mother_in_law"), so
// that what the tokenizer sees in a text finds it.
func Key(lemma string) string {
	return strings.Join(analysis.Tokens(strings.ReplaceAll(lemma, "_", " ")), "_")
}

func putUint(b *bytes.Buffer, x int) {
	b.Write(binary.AppendUvarint(nil, uint64(x)))
}

// putFront writes s front-coded against prev: the length of their common
// prefix, then the rest.
func putFront(b *bytes.Buffer, prev, s string) {
	n := 0
	for n < len(prev) && n < len(s) && prev[n] == s[n] {
		n++
	}
	putUint(b, n)
	putUint(b, len(s)-n)
	b.WriteString(s[n:])
}

func eachLine(path string, fn func(string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "  ") { // the licence header
			continue
		}
		if err := fn(line); err != nil {
			return fmt.Errorf("%s:%d: %w", path, n, err)
		}
	}
	return sc.Err()
}

// readData reads the synsets of one data file and their pointers to
// hypernyms.
func readData(path string, pos byte, syns map[synKey]*synset) error {
	return eachLine(path, func(line string) error {
		if i := strings.Index(line, " | "); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) < 4 {
			return fmt.Errorf("short data line")
		}
		off, err := strconv.ParseUint(f[0], 10, 32)
		if err != nil {
			return fmt.Errorf("offset %q", f[0])
		}
		wcnt, err := strconv.ParseUint(f[3], 16, 8)
		if err != nil {
			return fmt.Errorf("word count %q", f[3])
		}
		i := 4 + 2*int(wcnt)
		if i >= len(f) {
			return fmt.Errorf("short data line")
		}
		pcnt, err := strconv.Atoi(f[i])
		if err != nil || len(f) < i+1+4*pcnt {
			return fmt.Errorf("pointer count %q", f[i])
		}
		s := &synset{}
		satellite := f[2] == "s"
		for p := range pcnt {
			ptr := f[i+1+4*p:]
			sym, toPos := ptr[0], ptr[2][0]
			if sym == "@" || sym == "@i" || satellite && sym == "&" || pos == 'r' && sym == `\` {
				x, err := strconv.ParseUint(ptr[1], 10, 32)
				if err != nil {
					return fmt.Errorf("pointer offset %q", ptr[1])
				}
				if toPos == 's' {
					toPos = 'a'
				}
				k := synKey{toPos, uint32(x)}
				if !slices.Contains(s.hyper, k) {
					s.hyper = append(s.hyper, k)
				}
			}
		}
		syns[synKey{pos, uint32(off)}] = s
		return nil
	})
}

// setDepths sets each synset's depth: 0 for a synset without hypernyms,
// else one more than its shallowest hypernym's. Satellite heads and
// pertainyms are not a hierarchy: only nouns and verbs get depths that
// matter (Options).
func setDepths(syns map[synKey]*synset) {
	const unknown = -1
	for _, s := range syns {
		s.depth = unknown
	}
	var depth func(k synKey, seen int) int
	depth = func(k synKey, seen int) int {
		s := syns[k]
		if s == nil {
			return 0
		}
		if s.depth != unknown {
			return s.depth
		}
		d := 0
		if seen < 40 && (k.pos == 'n' || k.pos == 'v') { // 40: WordNet's hierarchy is about 20 deep; a cycle stops here
			for i, h := range s.hyper {
				if hd := depth(h, seen+1) + 1; i == 0 || hd < d {
					d = hd
				}
			}
		}
		s.depth = d
		return d
	}
	for k := range syns {
		depth(k, 0)
	}
}

type countKey struct {
	lemma string
	pos   byte
	num   int
}

// readCounts reads cntlist.rev: "lemma%ss_type:... sense_number tag_cnt".
func readCounts(path string) (map[countKey]int, error) {
	out := map[countKey]int{}
	err := eachLine(path, func(line string) error {
		f := strings.Fields(line)
		if len(f) != 3 {
			return fmt.Errorf("want 3 fields")
		}
		lemma, rest, ok := strings.Cut(f[0], "%")
		if !ok || rest == "" {
			return fmt.Errorf("sense key %q", f[0])
		}
		pos := map[byte]byte{'1': 'n', '2': 'v', '3': 'a', '4': 'r', '5': 'a'}[rest[0]]
		num, err1 := strconv.Atoi(f[1])
		cnt, err2 := strconv.Atoi(f[2])
		if pos == 0 || err1 != nil || err2 != nil {
			return fmt.Errorf("bad line")
		}
		out[countKey{lemma, pos, num}] += cnt
		return nil
	})
	return out, err
}

// readExceptions reads the four exception lists: inflected form -> base
// forms, for every part of speech at once.
func readExceptions(dir string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, pf := range posFiles {
		err := eachLine(filepath.Join(dir, pf.name+".exc"), func(line string) error {
			f := strings.Fields(line)
			if len(f) < 2 {
				return fmt.Errorf("want an inflected form and its bases")
			}
			s := Key(f[0])
			if s == "" {
				return nil
			}
			for _, b := range f[1:] {
				if b = Key(b); b != "" && b != s && !slices.Contains(out[s], b) {
					out[s] = append(out[s], b)
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}
