// Package local is the offline embedder: a model-free, deterministic
// text-to-vector function that needs no weights, no network and no GPU.
//
// What it is, honestly: a lexical embedding. Each text becomes a bag of
// features — stemmed content words, pairs of consecutive content words,
// and the character n-grams (3 to 5 letters) of each word — weighted by
// sublinear term frequency (1 + ln tf) and by a fixed prior that gives
// frequent English words less weight than rare ones, then folded into
// Dim dimensions by signed feature hashing (the "hashing trick",
// Weinberger et al. 2009) and normalised to unit length. The cosine of two
// such vectors measures how much vocabulary two texts share, forgiving
// inflections, compounds and small spelling differences through the
// character n-grams. It knows no synonyms and no meaning beyond shared
// word forms: "car" and "automobile" are unrelated to it. For semantic
// similarity, configure a real model (embed/bedrock or embed/openai).
//
// Vectors depend only on the text and the version: the same text gives the
// same vector in every process, so indexed vectors stay comparable until
// the algorithm changes, which changes Name.
package local

import (
	"context"
	"fmt"
	"math"

	"github.com/vantagepeers/vantagepeers/shared/embed"
	"github.com/vantagepeers/vantagepeers/shared/search/analysis"
)

// Version names the feature set and weights; any change to them must
// change it, since vectors of different versions are not comparable.
const Version = "local-hash-v1"

// DefaultDim is the default number of dimensions.
const DefaultDim = 384

// Options configures New.
type Options struct {
	// Dim is the number of dimensions (default DefaultDim).
	Dim int
}

// Embedder is the model-free embedder. It is safe for concurrent use.
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

// Name is Version and the dimension, e.g. "local-hash-v1/384".
func (e *Embedder) Name() string { return fmt.Sprintf("%s/%d", Version, e.dim) }

// Dim is the number of dimensions.
func (e *Embedder) Dim() int { return e.dim }

// Embed returns one unit-length vector per text (all zeros for a text
// without words). It never fails except for a cancelled context.
func (e *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = e.Vector(t)
	}
	return out, nil
}

// Feature weights: a word counts fully, a pair of words half, and the
// character n-grams of a word share weights the word's weight times
// charWeight among themselves.
const (
	wordWeight   = 1.0
	bigramWeight = 0.5
	charWeight   = 1.0
	minGram      = 3
	maxGram      = 5
)

// Feature classes are hashed with distinct seeds so that the word "ing"
// and the n-gram "ing" are different features.
const (
	seedWord   = 0x9e3779b97f4a7c15
	seedBigram = 0xc2b2ae3d27d4eb4f
	seedChar   = 0x165667b19e3779f9
)

// Vector embeds one text.
func (e *Embedder) Vector(text string) []float32 {
	var b Bag
	b.AddText(text)
	return b.Vector(e.dim)
}

// Bag collects hashed features with their term frequency and weight, in
// first-seen order, so that embedders built on these features (embed/concept)
// fold them into a vector exactly as this one does. The zero value is ready.
type Bag struct {
	feats map[uint64]feature
	order []uint64 // first-seen order: sums in a fixed order are bit-identical
	frame []rune
}

type feature struct{ tf, w float64 }

// Add counts feature h once more; its weight is the largest it was given.
func (b *Bag) Add(h uint64, w float64) {
	if b.feats == nil {
		b.feats = make(map[uint64]feature, 64)
	}
	f, ok := b.feats[h]
	if !ok {
		b.order = append(b.order, h)
	}
	f.tf++
	f.w = max(f.w, w)
	b.feats[h] = f
}

// AddText adds this embedder's features of text: stemmed content words,
// pairs of consecutive content words and character n-grams.
func (b *Bag) AddText(text string) {
	prev := ""
	for _, tok := range analysis.Tokens(text) {
		if !Content(tok) {
			prev = "" // a stop word breaks a pair
			continue
		}
		stem := analysis.Stem(tok)
		w := Prior(tok)
		b.Add(HashString(seedWord, stem), wordWeight*w)
		if prev != "" {
			b.Add(hashPair(seedBigram, prev, stem), bigramWeight*w)
		}
		prev = stem
		b.addGrams(tok, w)
	}
}

// Content reports whether a token is a feature of its own: not a stop word
// and not a lone letter.
func Content(tok string) bool {
	return !analysis.IsStopWord(tok) && (len(tok) != 1 || tok[0] >= '0' && tok[0] <= '9')
}

// addGrams adds the character n-grams of the token framed by boundary
// marks, "<word>"; tokens shorter than minGram letters get none (the word
// feature covers them).
func (b *Bag) addGrams(tok string, w float64) {
	b.frame = append(b.frame[:0], '<')
	for _, r := range tok {
		b.frame = append(b.frame, r)
	}
	b.frame = append(b.frame, '>')
	frame := b.frame
	if len(frame) < minGram+2 {
		return
	}
	grams := 0
	for n := minGram; n <= maxGram; n++ {
		grams += max(0, len(frame)-n+1)
	}
	gw := charWeight * w / math.Sqrt(float64(grams))
	for n := minGram; n <= maxGram; n++ {
		for i := 0; i+n <= len(frame); i++ {
			b.Add(hashRunes(seedChar+uint64(n), frame[i:i+n]), gw)
		}
	}
}

// Vector folds the features into dim dimensions by signed feature hashing,
// each weighing w·(1 + ln tf), normalised to unit length (all zeros for an
// empty bag).
func (b *Bag) Vector(dim int) []float32 {
	v := make([]float64, dim)
	for _, h := range b.order {
		f := b.feats[h]
		x := f.w * (1 + math.Log(f.tf))
		if h>>63 == 1 {
			x = -x
		}
		v[h%uint64(dim)] += x
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dim)
	if norm == 0 {
		return out
	}
	inv := 1 / math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}

// Prior is the weight of a word from its form alone: very frequent
// English words weigh less than rare ones, short tokens less than long.
func Prior(tok string) float64 {
	if w, ok := frequent[tok]; ok {
		return w
	}
	if len(tok) <= 2 {
		return 0.6
	}
	return 1
}

// HashString is FNV-1a of seed and s with a final avalanche (splitmix64),
// stable across processes: distinct seeds keep feature classes apart.
func HashString(seed uint64, s string) uint64 {
	h := seed ^ 14695981039346656037
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return mix(h)
}

func hashPair(seed uint64, a, b string) uint64 {
	h := HashString(seed, a)
	h ^= 0xff
	h *= 1099511628211
	for i := 0; i < len(b); i++ {
		h ^= uint64(b[i])
		h *= 1099511628211
	}
	return mix(h)
}

func hashRunes(seed uint64, r []rune) uint64 {
	h := seed ^ 14695981039346656037
	for _, c := range r {
		for c > 0 {
			h ^= uint64(c & 0xff)
			h *= 1099511628211
			c >>= 8
		}
	}
	return mix(h)
}

func mix(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// FusionWeight implements embed.FusionWeighter. Measured on LoCoMo
// (tests/benchretrieval), these vectors rank like a noisier BM25 — they see
// the same words, without corpus statistics, and know no synonyms — so
// Reciprocal Rank Fusion with an equal weight lowers BM25's quality
// (session recall@5 0.897 -> 0.857, turn 0.566 -> 0.446). Of the turn
// questions whose top 5 BM25 misses something, the vectors do better on 6
// in 464 (on 28 in 144 sessions): at 0.05 they cost turn recall@5 0.012
// (0.577 -> 0.565), at 0.02 0.003, and they only break near-ties. The
// lower the weight, the closer to BM25 alone: on this data the lexical
// vectors add almost nothing BM25 lacks.
func (e *Embedder) FusionWeight() float64 { return 0.02 }
