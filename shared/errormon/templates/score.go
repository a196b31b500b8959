package templates

// Scores measure a grouping against labels, as the Loghub benchmark
// does (shared/bench/README.md): exported so that every benchmark of the
// grouping, in this package or through the command, scores one way.
type Scores struct {
	// Labels and Groups count the distinct labels and groups.
	Labels, Groups int
	// GA, grouping accuracy: the share of items whose group is exactly
	// the set of items sharing their label.
	GA float64
	// Precision: of the pairs grouped together, the share that share a
	// label; Recall: of the pairs sharing a label, the share grouped
	// together. Counted from sizes, not enumerated.
	Precision, Recall float64
}

// Score scores groups[i], the group of item i, against labels[i].
func Score(groups, labels []string) Scores {
	byGroup, byLabel := map[string]map[string]int{}, map[string]map[string]int{}
	add := func(m map[string]map[string]int, a, b string) {
		if m[a] == nil {
			m[a] = map[string]int{}
		}
		m[a][b]++
	}
	for i := range groups {
		add(byGroup, groups[i], labels[i])
		add(byLabel, labels[i], groups[i])
	}
	s := Scores{Labels: len(byLabel), Groups: len(byGroup), Precision: 1, Recall: 1}
	ok := 0
	for i := range groups {
		if len(byGroup[groups[i]]) == 1 && len(byLabel[labels[i]]) == 1 {
			ok++
		}
	}
	if len(groups) > 0 {
		s.GA = float64(ok) / float64(len(groups))
	}
	pairs := func(n int) float64 { return float64(n) * float64(n-1) / 2 }
	var together, same, both float64
	for _, ls := range byGroup {
		n := 0
		for _, k := range ls {
			n += k
			both += pairs(k)
		}
		together += pairs(n)
	}
	for _, gs := range byLabel {
		n := 0
		for _, k := range gs {
			n += k
		}
		same += pairs(n)
	}
	if together > 0 {
		s.Precision = both / together
	}
	if same > 0 {
		s.Recall = both / same
	}
	return s
}
