package local

import "strings"

// frequent lists very common English words that are not stop words — the
// generic verbs, adjectives, nouns and conversational fillers found in
// most texts — with a reduced weight. It stands in for an inverse
// document frequency that a stateless embedder cannot measure.
var frequent = func() map[string]float64 {
	m := map[string]float64{}
	for _, w := range strings.Fields(`
able actually ago almost already always another anything anyway around away
back bad best better big bit
call came come comes coming
day days definitely different done
else end enough especially even everyone everything
feel feeling feels felt find first found
get gets getting give go goes going gone good got great guess
happy hard help hey hi hope
idea important keep kind know knew known
last let life like likes liked little long look looking looks lot lots love loved
made make makes making many maybe mean means much
need needs new next nice
oh ok okay old one ones
part people place pretty
put
quite
really right
said say saying says see seems seen something sometimes soon sounds start still sure
take taking talk tell thank thanks thing things think thinking thought time times today told tried true try trying two
use used using
want wanted wants way ways week well went whole work works world wow
yeah year years yes
`) {
		m[w] = 0.4
	}
	return m
}()
