package concept

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/embed"
)

// Query expansion: the words WordNet puts in the same synsets as a query's
// words (synonyms) and in their direct hypernyms, for the keyword side of
// hybrid search. Each sense contributes in proportion to its tag count, as
// in the vector (addConcepts), times expandSynonym or expandHypernym; the
// expansion terms of a query are at most expandMax, each at least
// expandMin (a rare sense's synonyms are noise).
//
// LoCoMo dev set, hybrid (tests/benchretrieval -via index), session /
// turn recall@5, without expansion 0.903 / 0.575: synonyms 0.5 and
// hypernyms 0.25 give 0.905 / 0.570; 0.25 and 0.125 0.905 / 0.574; 1 and
// 0.5 0.902 / 0.568; hypernyms 0 0.902 / 0.570; every sense weighing the
// same 0.902 / 0.574 (0.901 / 0.577 at 0.25); at most 64 terms down to
// 0.01 0.904 / 0.570; expansion terms that only rerank passages holding a
// query word, as feedback terms do, change nothing. No gain beyond the
// noise: the questions that fail need the turn's context (the answer of
// "What book did Caroline recommend?" names the book, not "book"), which
// no synonym supplies.
const (
	expandSynonym  = 0.5
	expandHypernym = 0.25
	expandMin      = 0.05
	expandMax      = 32
)

var _ embed.QueryExpander = (*Embedder)(nil)

// ExpandQuery implements embed.QueryExpander: the synonyms and hypernyms
// of the query's words and expressions ("research" -> "investigate",
// "look into", "explore"), without its own words. Terms are words or
// expressions, spaces between their words.
func (e *Embedder) ExpandQuery(query string) []embed.QueryTerm {
	t, err := loadTable()
	if err != nil {
		return nil
	}
	members := t.members()
	weight := map[string]float64{}
	own := map[int]bool{}
	add := func(syn uint32, w float64) {
		if w < expandMin {
			return
		}
		for _, k := range members.keys[members.start[syn]:members.start[syn+1]] {
			if own[int(k)] {
				continue
			}
			if key := t.keys[k]; w > weight[key] {
				weight[key] = w
			}
		}
	}
	t.units(query, func(lemmas []int, _ float64, _ []string) {
		for _, l := range lemmas {
			own[l] = true
		}
	})
	names := names(query)
	t.units(query, func(lemmas []int, uw float64, toks []string) {
		if slices.ContainsFunc(toks, func(tok string) bool { return names[tok] }) {
			return
		}
		var total float64
		for _, l := range lemmas {
			for s := t.senseStart[l]; s < t.senseStart[l+1]; s++ {
				total += senseWeight(t.senseCnt[s])
			}
		}
		for _, l := range lemmas {
			for s := t.senseStart[l]; s < t.senseStart[l+1]; s++ {
				share := uw * senseWeight(t.senseCnt[s]) / total
				syn := t.senseSyn[s]
				add(syn, share*expandSynonym)
				for _, h := range t.hyp[t.hypStart[syn]:t.hypStart[syn+1]] {
					add(h, share*expandHypernym)
				}
			}
		}
	})
	out := make([]embed.QueryTerm, 0, len(weight))
	for k, w := range weight {
		out = append(out, embed.QueryTerm{Text: strings.ReplaceAll(k, "_", " "), Weight: w})
	}
	slices.SortFunc(out, func(a, b embed.QueryTerm) int {
		if c := cmp.Compare(b.Weight, a.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.Text, b.Text)
	})
	return out[:min(len(out), expandMax)]
}

// senseWeight is a sense's share before normalisation: its tag count plus
// one, so that untagged senses count.
func senseWeight(cnt uint32) float64 { return float64(cnt) + 1 }

// names are the words of text written with a capital other than its
// first (lower case): "Caroline" is a person, not the adjective WordNet
// knows (Carolean), and a name has no synonyms.
func names(text string) map[string]bool {
	out := map[string]bool{}
	words := strings.FieldsFunc(text, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range words {
		if r, _ := utf8.DecodeRuneInString(w); i > 0 && unicode.IsUpper(r) {
			out[strings.ToLower(w)] = true
		}
	}
	return out
}

// synMembers lists each synset's lemmas (table indexes): keys[start[s]:start[s+1]].
type synMembers struct {
	start []uint32
	keys  []uint32
}

// members inverts the senses once, on the first expansion.
func (t *table) members() *synMembers {
	t.memberOnce.Do(func() {
		nsyn := len(t.hypStart) - 1
		m := &synMembers{start: make([]uint32, nsyn+2), keys: make([]uint32, len(t.senseSyn))}
		for _, s := range t.senseSyn {
			m.start[s+2]++
		}
		for i := 2; i < len(m.start); i++ {
			m.start[i] += m.start[i-1]
		}
		for k := range t.keys {
			for s := t.senseStart[k]; s < t.senseStart[k+1]; s++ {
				syn := t.senseSyn[s]
				m.keys[m.start[syn+1]] = uint32(k)
				m.start[syn+1]++
			}
		}
		t.memberList = m
	})
	return t.memberList
}
