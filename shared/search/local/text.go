package local

import (
	"cmp"
	"math"
	"slices"
	"sync"

	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/search/analysis"
)

// BM25 parameters. k1 is a little below the classic 1.2 and b well below
// the classic 0.75 because memories are short, and a strong length
// normalisation lets one common word in a five-word note outrank the
// sentence that answers the question (LoCoMo turns, tests/benchretrieval:
// recall@5 0.546 at b = 0.75, 0.566 at b = 0.4, 0.575 at b = 0.3 with
// k1 = 1.0; sessions unchanged).
const (
	bm25K1 = 1.0
	bm25B  = 0.3
)

// Pseudo-relevance feedback (RM3-like; Lavrenko & Croft 2001, Abdul-Jaleel
// et al. 2004): the query is run once, the best passages of its top
// feedbackDocs documents vote for feedbackTerms new terms (term frequency
// in the passage x idf, weighted by the document's score relative to the
// best), and the query runs again with them added at a total weight of
// feedbackWeight times the original terms'. The added terms only rerank
// the passages that hold a word of the query: text search never returns a
// document without one. Among the documents that match a question's
// words, it lifts those that also talk about what the best matches talk
// about (LoCoMo, text search, without -> with: session recall@5
// 0.896 -> 0.903, turn recall@5 0.575 -> 0.577 and recall@10
// 0.639 -> 0.655, MRR unchanged: 0.847 -> 0.846, 0.498 -> 0.498; with 10
// terms instead of 20, MRR lost 0.002 and 0.008). Only terms in at most
// feedbackMaxDF of the passages are added: a common word tells nothing
// and has the longest posting list.
const (
	feedbackDocs   = 5
	feedbackTerms  = 20
	feedbackWeight = 0.15
	feedbackMaxDF  = 0.05
	// feedbackMinMaxDF keeps feedback in a small collection, where 5% of
	// the passages is one or two.
	feedbackMinMaxDF = 10
)

// textSet is one tenant's inverted index, in memory: documents are cut
// into passages (Passages), passages into terms (analysis.Tokens, then
// analysis.Term), and each term has a posting list of (passage, weighted
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

// analyze counts the terms (analysis.Term) of text, each weighted by w, into counts.
func analyze(text string, w float32, counts map[string]float32) (length float32) {
	for _, t := range analysis.Tokens(text) {
		counts[analysis.Term(t)] += w
		length += w
	}
	for _, t := range analysis.Compounds(text) {
		counts[analysis.Term(t)] += w
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
	toks := append(analysis.Tokens(text), analysis.Compounds(text)...)
	var out []string
	seen := map[string]bool{}
	add := func(keepStop bool) {
		for _, t := range toks {
			if !keepStop && (analysis.IsStopWord(t) || len(t) == 1 && (t[0] < '0' || t[0] > '9')) {
				continue
			}
			st := analysis.Term(t)
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
	dscore  []float32 // by document slot: best passage score
	dbest   []int32   // by document slot: best passage
	dtouch  []int32
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	return s[:n]
}

// qterm is a query term and its weight (1 for the words of the query).
type qterm struct {
	id int32
	w  float32
}

// ranked is a document, its best passage and its score.
type ranked struct {
	doc, pass int32
	score     float32
}

// search ranks the documents passing pass (nil: all) by BM25 of their best
// passage, with pseudo-relevance feedback, and returns the best k, best
// first.
func (s *textSet) search(terms []string, pass func(*rowMeta) bool, k int) []search.Hit {
	if s.live == 0 {
		return nil
	}
	q := make([]qterm, 0, len(terms)+feedbackTerms)
	for _, st := range terms {
		if id, ok := s.terms[st]; ok && s.postings[id].df > 0 {
			q = append(q, qterm{id, 1})
		}
	}
	if len(q) == 0 {
		return nil
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	words := len(q)
	if fb := s.feedback(q, s.rank(sc, q, words, pass, feedbackDocs)); len(fb) > 0 {
		q = append(q, fb...)
	}
	res := s.rank(sc, q, words, pass, k)
	hits := make([]search.Hit, len(res))
	for i, e := range res {
		m := &s.docs[e.doc].meta
		hits[i] = search.Hit{ID: m.id, Kind: m.kind, Score: float64(e.score)}
	}
	return hits
}

// idf is BM25's inverse document frequency (Lucene's, never negative).
func (s *textSet) idf(id int32) float32 {
	n, df := float64(s.live), float64(s.postings[id].df)
	return float32(math.Log(1 + (n-df+0.5)/(df+0.5)))
}

// feedback returns the expansion terms voted for by the best passages of
// top (see feedbackDocs), weighted to sum to feedbackWeight times the
// weight of q.
func (s *textSet) feedback(q []qterm, top []ranked) []qterm {
	if len(top) == 0 || top[0].score <= 0 {
		return nil
	}
	maxDF := max(int(feedbackMaxDF*float64(s.live)), feedbackMinMaxDF)
	votes := map[int32]float32{}
	for _, r := range top {
		rel := r.score / top[0].score
		plen := s.plen[r.pass]
		for _, t := range s.pterm[r.pass] {
			// A term of one passage only says nothing about the others.
			if df := s.postings[t.term].df; df < 2 || df > maxDF {
				continue
			}
			votes[t.term] += rel * t.n / plen * s.idf(t.term)
		}
	}
	for _, t := range q {
		delete(votes, t.id)
	}
	best := make([]qterm, 0, len(votes))
	for id, v := range votes {
		best = append(best, qterm{id, v})
	}
	slices.SortFunc(best, func(a, b qterm) int {
		if c := cmp.Compare(b.w, a.w); c != 0 {
			return c
		}
		return cmp.Compare(a.id, b.id)
	})
	best = best[:min(len(best), feedbackTerms)]
	var sum float32
	for _, t := range best {
		sum += t.w
	}
	if sum <= 0 {
		return nil
	}
	for i := range best {
		best[i].w *= feedbackWeight * float32(len(q)) / sum
	}
	return best
}

// rank scores the passages holding one of the first words terms of q
// (the query's own; the rest, feedback terms, only add to their scores)
// and returns the best k documents passing pass, each scored by its best
// passage.
func (s *textSet) rank(sc *scratch, q []qterm, words int, pass func(*rowMeta) bool, k int) []ranked {
	sc.pscore = grow(sc.pscore, len(s.pdoc))
	sc.dscore = grow(sc.dscore, len(s.docs))
	sc.dbest = grow(sc.dbest, len(s.docs))
	sc.touched, sc.dtouch = sc.touched[:0], sc.dtouch[:0]

	avg := float32(s.sumLen / float64(s.live))
	for j, qt := range q {
		pl := &s.postings[qt.id]
		idf := s.idf(qt.id) * qt.w
		for i, p := range pl.pass {
			if s.pterm[p] == nil { // dead passage
				continue
			}
			f := pl.tf[i]
			norm := bm25K1 * (1 - bm25B + bm25B*s.plen[p]/avg)
			if sc.pscore[p] == 0 {
				if j >= words {
					continue // feedback terms rerank, they never add a passage
				}
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
			sc.dbest[d] = p
		}
	}
	// The filter compares strings: it runs only on a document that would
	// enter the heap, not on every document matching a common word.
	top := newTopK(k)
	for _, d := range sc.dtouch {
		v := sc.dscore[d]
		sc.dscore[d] = 0
		if !top.wants(v) || pass != nil && !pass(&s.docs[d].meta) {
			continue
		}
		top.offer(v, int(d))
	}
	idx := top.sorted(func(a, b int) bool { return s.docs[a].meta.id < s.docs[b].meta.id })
	out := make([]ranked, len(idx))
	for i, e := range idx {
		out[i] = ranked{doc: int32(e.row), pass: sc.dbest[e.row], score: e.score}
	}
	return out
}
