package local

import (
	"math"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/analysis"
)

// BM25 parameters. k1 is the classic 1.2; b is lower than the classic 0.75
// because memories are short, and a strong length normalisation lets one
// common word in a five-word note outrank the sentence that answers the
// question (LoCoMo turns, tests/benchretrieval: recall@5 0.546 at b = 0.75,
// 0.566 at b = 0.4; sessions unchanged).
const (
	bm25K1 = 1.2
	bm25B  = 0.4
)

// textSet is one tenant's inverted index, in memory: documents are cut
// into passages (Passages), passages into stems (analysis.Tokens, then
// analysis.Stem), and each stem has a posting list of (passage, weighted
// term frequency). SQLite keeps the documents; a textSet is rebuilt from
// it on first use and kept current by every write through the Index.
type textSet struct {
	mu sync.RWMutex

	docs []textDoc        // by slot; dead slots are reused by nobody (see compact)
	slot map[string]int32 // live document id -> slot

	pdoc  []int32   // passage -> document slot
	plen  []float32 // passage -> weighted length
	pterm [][]tf    // passage -> its terms (forward index, for deletes)
	dead  int       // dead passages still in the posting lists

	terms    map[string]int32 // stem -> term id
	postings []postingList    // by term id
	live     int              // live passages
	sumLen   float64          // total weighted length of live passages

	titleWeight float32
}

type textDoc struct {
	meta     rowMeta
	passages []int32
	alive    bool
}

type tf struct {
	term int32
	n    float32
}

type postingList struct {
	pass []int32
	tf   []float32
	df   int // live passages holding the term
}

func newTextSet(titleWeight float64) *textSet {
	return &textSet{slot: map[string]int32{}, terms: map[string]int32{}, titleWeight: float32(titleWeight)}
}

// analyze counts the stems of text, each weighted by w, into counts.
func analyze(text string, w float32, counts map[string]float32) (length float32) {
	for _, t := range analysis.Tokens(text) {
		counts[analysis.Stem(t)] += w
		length += w
	}
	return length
}

// put indexes d, replacing an earlier version with the same id.
func (s *textSet) put(d search.Doc) {
	s.remove(d.ID)
	titleCounts := map[string]float32{}
	titleLen := analyze(d.Title, s.titleWeight, titleCounts)
	slot := int32(len(s.docs))
	doc := textDoc{meta: metaOf(d), alive: true}
	for _, p := range Passages(d.Text) {
		counts := make(map[string]float32, len(titleCounts)+32)
		for t, n := range titleCounts {
			counts[t] = n
		}
		length := titleLen + analyze(p, 1, counts)
		if length == 0 {
			continue
		}
		pid := int32(len(s.pdoc))
		s.pdoc = append(s.pdoc, slot)
		s.plen = append(s.plen, length)
		terms := make([]tf, 0, len(counts))
		for stem, n := range counts {
			id, ok := s.terms[stem]
			if !ok {
				id = int32(len(s.postings))
				s.terms[stem] = id
				s.postings = append(s.postings, postingList{})
			}
			pl := &s.postings[id]
			pl.pass = append(pl.pass, pid)
			pl.tf = append(pl.tf, n)
			pl.df++
			terms = append(terms, tf{id, n})
		}
		s.pterm = append(s.pterm, terms)
		doc.passages = append(doc.passages, pid)
		s.live++
		s.sumLen += float64(length)
	}
	s.docs = append(s.docs, doc)
	s.slot[d.ID] = slot
}

// remove drops a document; its postings stay until compact.
func (s *textSet) remove(id string) {
	slot, ok := s.slot[id]
	if !ok {
		return
	}
	delete(s.slot, id)
	doc := &s.docs[slot]
	doc.alive = false
	for _, p := range doc.passages {
		for _, t := range s.pterm[p] {
			s.postings[t.term].df--
		}
		s.pterm[p] = nil
		s.live--
		s.sumLen -= float64(s.plen[p])
		s.dead++
	}
	doc.passages = nil
	if s.dead > 1024 && s.dead > s.live {
		s.compact()
	}
}

// compact rebuilds the posting lists without dead passages and slots.
func (s *textSet) compact() {
	byOld := make([]string, len(s.postings))
	for stem, id := range s.terms {
		byOld[id] = stem
	}
	fresh := newTextSet(float64(s.titleWeight))
	for _, doc := range s.docs {
		if !doc.alive {
			continue
		}
		slot := int32(len(fresh.docs))
		nd := textDoc{meta: doc.meta, alive: true}
		for _, p := range doc.passages {
			pid := int32(len(fresh.pdoc))
			fresh.pdoc = append(fresh.pdoc, slot)
			fresh.plen = append(fresh.plen, s.plen[p])
			terms := make([]tf, 0, len(s.pterm[p]))
			for _, t := range s.pterm[p] {
				stem := byOld[t.term]
				id, ok := fresh.terms[stem]
				if !ok {
					id = int32(len(fresh.postings))
					fresh.terms[stem] = id
					fresh.postings = append(fresh.postings, postingList{})
				}
				pl := &fresh.postings[id]
				pl.pass = append(pl.pass, pid)
				pl.tf = append(pl.tf, t.n)
				pl.df++
				terms = append(terms, tf{id, t.n})
			}
			fresh.pterm = append(fresh.pterm, terms)
			nd.passages = append(nd.passages, pid)
			fresh.live++
			fresh.sumLen += float64(s.plen[p])
		}
		fresh.docs = append(fresh.docs, nd)
		fresh.slot[doc.meta.id] = slot
	}
	s.docs, s.slot, s.pdoc, s.plen, s.pterm, s.dead = fresh.docs, fresh.slot, fresh.pdoc, fresh.plen, fresh.pterm, 0
	s.terms, s.postings, s.live, s.sumLen = fresh.terms, fresh.postings, fresh.live, fresh.sumLen
}

// queryTerms are the stems a query searches for: its words without stop
// words (unless it has nothing else), each once.
func queryTerms(text string) []string {
	toks := analysis.Tokens(text)
	var out []string
	seen := map[string]bool{}
	add := func(keepStop bool) {
		for _, t := range toks {
			if !keepStop && (analysis.IsStopWord(t) || len(t) == 1 && (t[0] < '0' || t[0] > '9')) {
				continue
			}
			st := analysis.Stem(t)
			if !seen[st] {
				seen[st] = true
				out = append(out, st)
			}
		}
	}
	add(false)
	if len(out) == 0 {
		add(true)
	}
	if len(out) > maxTerms {
		out = out[:maxTerms]
	}
	return out
}

// maxTerms bounds the terms of one query (a pasted page stays a query).
const maxTerms = 64

// scratch holds the per-query accumulators, reused through a pool.
type scratch struct {
	pscore  []float32 // by passage
	touched []int32   // passages with a score
	dscore  []float32 // by document slot: best passage
	dtouch  []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// search ranks the documents passing pass (nil: all) by BM25 of their best
// passage and returns the best k, best first.
func (s *textSet) search(terms []string, pass func(*rowMeta) bool, k int) []search.Hit {
	if s.live == 0 {
		return nil
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	sc.pscore = grow(sc.pscore, len(s.pdoc))
	sc.dscore = grow(sc.dscore, len(s.docs))
	sc.touched, sc.dtouch = sc.touched[:0], sc.dtouch[:0]

	n := float64(s.live)
	avg := float32(s.sumLen / n)
	for _, stem := range terms {
		id, ok := s.terms[stem]
		if !ok {
			continue
		}
		pl := &s.postings[id]
		if pl.df <= 0 {
			continue
		}
		df := float64(pl.df)
		idf := float32(math.Log(1 + (n-df+0.5)/(df+0.5)))
		for i, p := range pl.pass {
			if s.pterm[p] == nil { // dead passage
				continue
			}
			f := pl.tf[i]
			norm := bm25K1 * (1 - bm25B + bm25B*s.plen[p]/avg)
			if sc.pscore[p] == 0 {
				sc.touched = append(sc.touched, p)
			}
			sc.pscore[p] += idf * f * (bm25K1 + 1) / (f + norm)
		}
	}
	for _, p := range sc.touched {
		v := sc.pscore[p]
		sc.pscore[p] = 0
		d := s.pdoc[p]
		if sc.dscore[d] == 0 {
			sc.dtouch = append(sc.dtouch, d)
		}
		if v > sc.dscore[d] {
			sc.dscore[d] = v
		}
	}
	top := newTopK(k)
	for _, d := range sc.dtouch {
		v := sc.dscore[d]
		sc.dscore[d] = 0
		if pass != nil && !pass(&s.docs[d].meta) {
			continue
		}
		top.offer(v, int(d))
	}
	idx := top.sorted(func(a, b int) bool { return s.docs[a].meta.id < s.docs[b].meta.id })
	hits := make([]search.Hit, len(idx))
	for i, e := range idx {
		m := &s.docs[e.row].meta
		hits[i] = search.Hit{ID: m.id, Kind: m.kind, Score: float64(e.score)}
	}
	return hits
}
