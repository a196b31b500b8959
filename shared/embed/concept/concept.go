// Package concept is the offline embedder that knows some meaning: the
// features of embed/local (stemmed words, word pairs, character n-grams,
// so that typos and inflections still match) plus WordNet concepts.
//
// Each content word is lemmatized as WordNet's morphy does it (exception
// lists, then detachment rules: "mice" -> mouse, "looked" -> look,
// "better" -> good), multi-word expressions WordNet lists ("look into",
// "ice cream") are taken as units, and each lemma contributes its most
// frequent senses (synsets) weighted by WordNet's sense-tagged counts,
// plus their hypernyms one and two levels up with lower weights. Words
// that share a sense or a near hypernym ("research" and "look into" share
// "investigate") share features, so paraphrases score above unrelated
// texts. Everything is folded into Dim dimensions by signed feature
// hashing, as in embed/local.
//
// What it is not: there is no word-sense disambiguation (every occurrence
// of "bank" gets the river and the money senses in proportion to their
// counts), no context and no learned weights. WordNet 3.0 knows few names
// and no words coined after 2006.
//
// The table (wordnet.bin.gz, about 1.4 MB) is generated from Princeton
// WordNet 3.0 by ./gen and decoded on first use. Vectors depend only on
// the text, the table and Version.
package concept

import (
	"context"
	"fmt"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/search/analysis"
)

// Version names the features, the weights and the table; any change to
// them must change it, since vectors of different versions are not
// comparable.
const Version = "local-concept-v1"

// DefaultDim is the default number of dimensions. The concepts and the
// words of a text share the dimensions by hashing, so fewer dimensions
// mean more unrelated features colliding: on the LoCoMo dev set
// (tests/benchretrieval -via index, vector mode) session / turn recall@5
// is 0.737 / 0.376 at 384, 0.765 / 0.380 at 512, 0.786 / 0.388 at 768
// and 0.806 / 0.398 at 1024, hybrid search unchanged (0.903 / 0.575
// to 0.577); with the table's untagged compounds dropped since, 0.831 /
// 0.403 at 1024 (make bench-retrieval, through the memory service). The price (BenchmarkSearch100kConcept*, search/local, 100,000
// memories): 693 MB of heap instead of 323 (3.7 KB more per memory, the
// vectors kept as float32 and int8), hybrid search p95 7.6 ms of CPU
// instead of 6.4.
const DefaultDim = 1024

// Options configures New.
type Options struct {
	// Dim is the number of dimensions (default DefaultDim).
	Dim int
}

// Embedder is the WordNet concept embedder. It is safe for concurrent use.
type Embedder struct {
	dim int
}

var _ embed.Embedder = (*Embedder)(nil)

// New returns an embedder with the given options.
func New(opts Options) *Embedder {
	d := opts.Dim
	if d <= 0 {
		d = DefaultDim
	}
	return &Embedder{dim: d}
}

// Name is Version and the dimension, e.g. "local-concept-v1/1024".
func (e *Embedder) Name() string { return fmt.Sprintf("%s/%d", Version, e.dim) }

// Dim is the number of dimensions.
func (e *Embedder) Dim() int { return e.dim }

// Embed returns one unit-length vector per text (all zeros for a text
// without words). It fails only for a cancelled context or a corrupt
// table.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	t, err := loadTable()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = e.vector(t, text)
	}
	return out, nil
}

// Vector embeds one text. It panics if the embedded table is corrupt,
// which a test of this package rules out.
func (e *Embedder) Vector(text string) []float32 {
	t, err := loadTable()
	if err != nil {
		panic(err)
	}
	return e.vector(t, text)
}

// Weights of the concept features, a word's own feature weighing 1 (see
// embed/local): a word's senses share conceptWeight in proportion to
// their tag counts (plus one, so that untagged senses count), each
// hypernym weighs hyperDecay times what points to it, and a multi-word
// expression weighs mweWeight as one word. Chosen on the LoCoMo dev set
// (tests/benchretrieval, -via index, vector mode, 384 dimensions): turn
// recall@5 0.314 (concept weight 0.5), 0.375 (2), 0.371 (4); hypernym
// decay 0.25 gives 0.362, 0.8 0.378 at a lower session recall.
const (
	conceptWeight = 2.0
	hyperDecay    = 0.5
	mweWeight     = 1.0
	// maxMWE is the longest run of tokens tried as one expression
	// (WordNet has longer ones, rarely met in text).
	maxMWE = 4
)

// Seed of the concept features, distinct from embed/local's seeds.
const seedConcept = 0x7f4a7c159e3779b9

func (e *Embedder) vector(t *table, text string) []float32 {
	var b local.Bag
	b.AddText(text)
	toks := analysis.Tokens(text)
	var lem []int
	var key strings.Builder
	for i := 0; i < len(toks); {
		// The longest expression WordNet lists that starts here, with
		// at least one content word ("look into", not "in that").
		n := 0
		lem = t.lemmas(lem[:0], toks[i])
		if t.startsExpression(toks[i], lem) {
			key.Reset()
			key.WriteString(toks[i])
			content := local.Content(toks[i])
			for j := i + 1; j < len(toks) && j-i < maxMWE; j++ {
				key.WriteByte('_')
				key.WriteString(toks[j])
				content = content || local.Content(toks[j])
				if !content {
					continue
				}
				if l := t.lemmas(nil, key.String()); len(l) > 0 {
					n, lem = j-i+1, l
				}
			}
		}
		if n > 0 {
			e.addConcepts(&b, t, lem, mweWeight)
			i += n
			continue
		}
		if tok := toks[i]; local.Content(tok) {
			e.addConcepts(&b, t, lem, local.Prior(tok)) // lem: tok's lemmas, from above
		}
		i++
	}
	return b.Vector(e.dim)
}

// addConcepts adds the senses of the lemmas (table indexes) and their
// hypernyms, weighted by tag counts, the lot scaled by w.
func (e *Embedder) addConcepts(b *local.Bag, t *table, lemmas []int, w float64) {
	var total float64
	for _, l := range lemmas {
		for s := t.senseStart[l]; s < t.senseStart[l+1]; s++ {
			total += float64(t.senseCnt[s]) + 1
		}
	}
	for _, l := range lemmas {
		for s := t.senseStart[l]; s < t.senseStart[l+1]; s++ {
			sw := w * conceptWeight * (float64(t.senseCnt[s]) + 1) / total
			syn := t.senseSyn[s]
			b.Add(conceptHash(syn), sw)
			for _, h := range t.hyp[t.hypStart[syn]:t.hypStart[syn+1]] {
				b.Add(conceptHash(h), sw*hyperDecay)
				for _, h2 := range t.hyp[t.hypStart[h]:t.hypStart[h+1]] {
					b.Add(conceptHash(h2), sw*hyperDecay*hyperDecay)
				}
			}
		}
	}
}

func conceptHash(syn uint32) uint64 {
	z := seedConcept + uint64(syn)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Lemmas returns WordNet's lemmas of a token or of tokens joined by "_"
// (morphy: "mice" -> [mouse]), for tests and for looking.
func Lemmas(word string) ([]string, error) {
	t, err := loadTable()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, i := range t.lemmas(nil, word) {
		out = append(out, t.keys[i])
	}
	return out, nil
}

// FusionWeight implements embed.FusionWeighter: the vector ranking's
// weight in hybrid search, BM25's being 1. Measured on the LoCoMo dev set
// (tests/benchretrieval -via index -vector-weight w): these vectors alone
// reach turn recall@5 0.375 against BM25's 0.577, and every weight tried
// lowers hybrid's turn recall@5 (0.5: 0.513, 0.2: 0.542, 0.1: 0.559,
// 0.05: 0.574, 0.02: 0.575) while session recall@5 stays at 0.903 at most:
// the concepts find some paraphrases BM25 misses, but rank too many
// unrelated turns above them for RRF to gain. At 0.02 they break ties.
// At 1024 dimensions the same: 0.02 0.577, 0.05 0.575, 0.1 0.563, 0.2
// 0.547.
func (e *Embedder) FusionWeight() float64 { return 0.02 }
