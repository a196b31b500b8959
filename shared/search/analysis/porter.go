package analysis

// Stem reduces an English word to its stem with the Porter (1980)
// algorithm, the one SQLite FTS5's porter tokenizer applies. It expects a
// lower-case token; words of one or two letters and words with anything
// but a-z are returned unchanged.
func Stem(word string) string {
	if len(word) <= 2 {
		return word
	}
	for i := 0; i < len(word); i++ {
		if word[i] < 'a' || word[i] > 'z' {
			return word
		}
	}
	s := &stemmer{b: []byte(word)}
	s.k = len(s.b) - 1
	s.step1ab()
	if s.k > 0 {
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	return string(s.b[:s.k+1])
}

// stemmer follows the reference implementation by Martin Porter: b[0..k]
// is the word being stemmed, j marks the end of the stem being tested.
type stemmer struct {
	b    []byte
	k, j int
}

// cons reports whether b[i] is a consonant.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		if i == 0 {
			return true
		}
		return !s.cons(i - 1)
	}
	return true
}

// m measures the number of consonant sequences in b[0..j]:
// <c><v> gives 0, <c>vc<v> gives 1, <c>vcvc<v> gives 2, ...
func (s *stemmer) m() int {
	n, i := 0, 0
	for {
		if i > s.j {
			return n
		}
		if !s.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i > s.j {
				return n
			}
			if s.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i > s.j {
				return n
			}
			if !s.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

// vowelInStem reports whether b[0..j] contains a vowel.
func (s *stemmer) vowelInStem() bool {
	for i := 0; i <= s.j; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[j-1..j] is a double consonant.
func (s *stemmer) doublec(j int) bool {
	if j < 1 || s.b[j] != s.b[j-1] {
		return false
	}
	return s.cons(j)
}

// cvc reports whether b[i-2..i] is consonant-vowel-consonant and the last
// consonant is not w, x or y (hop, not snow, box, tray).
func (s *stemmer) cvc(i int) bool {
	if i < 2 || !s.cons(i) || s.cons(i-1) || !s.cons(i-2) {
		return false
	}
	switch s.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b[0..k] ends with suffix, setting j before it.
func (s *stemmer) ends(suffix string) bool {
	n := len(suffix)
	if n > s.k+1 {
		return false
	}
	if string(s.b[s.k-n+1:s.k+1]) != suffix {
		return false
	}
	s.j = s.k - n
	return true
}

// setto replaces b[j+1..k] with r.
func (s *stemmer) setto(r string) {
	s.b = append(s.b[:s.j+1], r...)
	s.k = s.j + len(r)
}

func (s *stemmer) r(r string) {
	if s.m() > 0 {
		s.setto(r)
	}
}

func (s *stemmer) step1ab() {
	if s.b[s.k] == 's' {
		switch {
		case s.ends("sses"):
			s.k -= 2
		case s.ends("ies"):
			s.setto("i")
		case s.k >= 1 && s.b[s.k-1] != 's':
			s.k--
		}
	}
	if s.ends("eed") {
		if s.m() > 0 {
			s.k--
		}
		return
	}
	if (s.ends("ed") || s.ends("ing")) && s.vowelInStem() {
		s.k = s.j
		switch {
		case s.ends("at"):
			s.setto("ate")
		case s.ends("bl"):
			s.setto("ble")
		case s.ends("iz"):
			s.setto("ize")
		case s.doublec(s.k):
			s.k--
			switch s.b[s.k] {
			case 'l', 's', 'z':
				s.k++
			}
		default:
			s.j = s.k
			if s.m() == 1 && s.cvc(s.k) {
				s.setto("e")
			}
		}
	}
}

func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelInStem() {
		s.b[s.k] = 'i'
	}
}

func (s *stemmer) step2() {
	if s.k < 1 {
		return
	}
	for _, p := range step2Rules[s.b[s.k-1]] {
		if s.ends(p[0]) {
			s.r(p[1])
			return
		}
	}
}

var step2Rules = map[byte][][2]string{
	'a': {{"ational", "ate"}, {"tional", "tion"}},
	'c': {{"enci", "ence"}, {"anci", "ance"}},
	'e': {{"izer", "ize"}},
	'l': {{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"}},
	'o': {{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}},
	's': {{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"}},
	't': {{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}},
	'g': {{"logi", "log"}},
}

func (s *stemmer) step3() {
	for _, p := range step3Rules[s.b[s.k]] {
		if s.ends(p[0]) {
			s.r(p[1])
			return
		}
	}
}

var step3Rules = map[byte][][2]string{
	'e': {{"icate", "ic"}, {"ative", ""}, {"alize", "al"}},
	'i': {{"iciti", "ic"}},
	'l': {{"ical", "ic"}, {"ful", ""}},
	's': {{"ness", ""}},
}

func (s *stemmer) step4() {
	if s.k < 1 {
		return
	}
	matched := false
	for _, suf := range step4Rules[s.b[s.k-1]] {
		if s.ends(suf) {
			matched = true
			if suf == "ion" && !(s.j >= 0 && (s.b[s.j] == 's' || s.b[s.j] == 't')) {
				matched = false
				continue
			}
			break
		}
	}
	if matched && s.m() > 1 {
		s.k = s.j
	}
}

var step4Rules = map[byte][]string{
	'a': {"al"},
	'c': {"ance", "ence"},
	'e': {"er"},
	'i': {"ic"},
	'l': {"able", "ible"},
	'n': {"ant", "ement", "ment", "ent"},
	'o': {"ion", "ou"},
	's': {"ism"},
	't': {"ate", "iti"},
	'u': {"ous"},
	'v': {"ive"},
	'z': {"ize"},
}

func (s *stemmer) step5() {
	s.j = s.k
	if s.b[s.k] == 'e' {
		a := s.m()
		if a > 1 || a == 1 && !s.cvc(s.k-1) {
			s.k--
		}
	}
	if s.b[s.k] == 'l' && s.doublec(s.k) && s.m() > 1 {
		s.k--
	}
}
