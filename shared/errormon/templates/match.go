package templates

import "strings"

// Merging rules. Two token lists of one length are compatible when,
// position by position, they are equal, or one of them is a variable, or
// they differ at a position where neither token is hard, and the cost of
// those differences is within the budget of their length. Compatible
// lists merge into their join: the positions where they differ become
// variables.
//
// Why the result does not depend on the order of the events: whether two
// lists are compatible depends on the two lists only, and a list that
// is more general (has more variables) is compatible with everything the
// less general one was. A scope's templates are therefore the blocks of
// the finest partition of its distinct messages that no compatible pair
// of blocks crosses; any order of merging compatible pairs until none
// is left ends there (a merge done in one order joins blocks that are
// each inside one block of any other order's result, and those blocks,
// more general still, are compatible, so they are one block). Drain
// scores a variable as a mismatch, so that a template that generalises
// gets harder to match, and its result depends on the order; here it
// gets easier, and the budget is what keeps it from swallowing.

// tuning is the one configuration for every deployment. It is not an
// option: a change of any of it is a change of the grouping, and so of
// Version.
type tuning struct {
	// wordCost and valueCost: what a difference costs at a position
	// holding a word, or a value, in either list.
	wordCost, valueCost float64
	// ratio: the budget is ratio times the number of tokens (0.3: one
	// value may differ in 4 to 6 tokens, none in 3 or fewer); the Loghub
	// dev systems score alike from 0.25 to 0.4.
	ratio float64
	// minBudget: the budget of short lists (0: none).
	minBudget float64
	// maxWords: how many positions may differ by a word under rule 1
	// (0: a word becomes a variable by rule 2 only).
	maxWords int
	// minValues: the distinct words a position must have shown for it
	// to become a variable by rule 2.
	minValues int
}

var defaultTuning = tuning{wordCost: 1, valueCost: 1, ratio: 0.3, maxWords: 0, minValues: 4}

// budget is the cost of differences allowed between two lists of n
// tokens.
func (c tuning) budget(n int) float64 { return max(c.minBudget, c.ratio*float64(n)) }

// list is a token list with its tokens' classes; a variable is "".
type list struct {
	toks []string
	cls  []class
}

func newList(toks []string) list {
	l := list{toks: toks, cls: make([]class, len(toks))}
	for i, t := range toks {
		l.cls[i] = classify(t)
	}
	return l
}

// branch is the part of a list that must be equal for two lists to be
// compared at all: its first token when that is keyable, else "".
func (l list) branch() string {
	if len(l.toks) > 0 && l.toks[0] != "" && keyable(l.toks[0]) {
		return l.toks[0]
	}
	return ""
}

// compatible reports whether a and b, of one length and one branch,
// merge, leaving position skip (-1: none) out.
func (c tuning) compatible(a, b list, skip int) bool {
	budget := c.budget(len(a.toks))
	cost, words := 0.0, 0
	for i, x := range a.toks {
		y := b.toks[i]
		if x == y || x == "" || y == "" || i == skip {
			continue
		}
		ca, cb := a.cls[i], b.cls[i]
		if ca == classHard || cb == classHard {
			return false
		}
		// A word against a value of one key ("name=android" and
		// "name=com.android.phone"): the position holds values. A bare
		// word against a value ("HTTPS", "SOCKS5") is a word conflict.
		if ca == classWord && cb == classWord || (ca == classWord || cb == classWord) && !sameKey(x, y) {
			cost += c.wordCost
			if words++; words > c.maxWords {
				return false
			}
		} else {
			cost += c.valueCost
		}
		if cost > budget {
			return false
		}
	}
	return true
}

// covers: every message b stands for is one a stands for (a is b or
// more general).
func covers(a, b list) bool {
	for i, x := range a.toks {
		if x != "" && x != b.toks[i] {
			return false
		}
	}
	return true
}

// join makes a the join of a and b in place: every position where they
// differ becomes a variable. It reports whether a changed.
func join(a *list, b list) bool {
	changed := false
	for i, x := range a.toks {
		if x != "" && x != b.toks[i] {
			a.toks[i] = ""
			changed = true
		}
	}
	return changed
}

// sameKey: x and y are values of one key: they start with the same
// "key=" or "key:".
func sameKey(x, y string) bool {
	k := strings.IndexAny(x, "=:")
	return k > 0 && len(y) > k && x[:k+1] == y[:k+1]
}
