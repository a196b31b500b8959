package templates

import "github.com/vantagepeers/vantagepeers/shared/errormon/source"

// Prepared is an event tokenised for learning: a store that keeps one
// item per bucket reads the buckets a batch needs (Bucket) before the
// batch is learned, and the event is tokenised once.
type Prepared struct {
	Scope    Scope
	scopeKey string
	toks     []string
}

// Prepare tokenises an event as Learn does.
func Prepare(e source.Event) Prepared {
	s, msg := ScopeOf(e)
	return Prepared{Scope: s, scopeKey: s.key(), toks: tokens(msg)}
}

// Bucket names the stored bucket the event is learned in: the Scope
// and Length of a Bucket.
func (p Prepared) Bucket() (scope string, length int) { return p.scopeKey, len(p.toks) }

// LearnPrepared groups a prepared event, learning from it (as Learn).
func (l *Learner) LearnPrepared(p Prepared) Result { return l.learnTokens(p.Scope, p.toks) }

// Template returns the text of the group key stands for now ("" when it
// is not a learned template of this Learner).
func (l *Learner) Template(key string) string {
	if t := l.byKey[l.resolve(key)]; t != nil {
		return t.text()
	}
	return ""
}
