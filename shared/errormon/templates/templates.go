// Package templates learns the message templates of a deployment's
// errors from the events themselves, on top of the fingerprint
// package's parameteriser: positions that vary across the events of one
// template become variables even when they are words (a user name, a
// host name, a file name), which placeholders alone cannot tell from
// the words of the message.
//
// Events are grouped by scope (the function, error type and top frame
// of their fingerprint: two scopes never share a group), then by token
// count, then by their first token when it is a word (Drain's
// fixed-depth tree); within that, a message joins every template it is
// compatible with (see match.go), and templates it joins together merge
// into one group, the oldest keeping its key. The templates learned are
// a State of plain values, bounded in size, that a store keeps one item
// per (deployment, scope, token count) with a version for conditional
// writes, so that two processes, a restart or a cold start group the
// same way; and replaying a set of events in any order ends with the
// same groups.
//
// The grouping is versioned: keys carry Version in their hash, and a
// State of another version is refused, never mixed in.
package templates

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"sort"
	"strings"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// Version names the algorithm and its tuning; it is hashed into every key.
const Version = "tpl1"

// Variable is how a template's variable positions are written in its
// text.
const Variable = "<*>"

// Default caps. A bucket item holds at most MaxPerBucket templates of at
// most 1 KiB of text each, well under a DynamoDB item's 400 KB once
// encoded.
const (
	DefaultMaxTemplates = 1000
	DefaultMaxPerBucket = 200
	defaultCacheSize    = 1 << 14
)

// Options bounds a Learner's state.
type Options struct {
	// MaxTemplates caps the templates of one scope (one function, error
	// type and frame of one deployment); MaxPerBucket the templates of
	// one token count of a scope (one stored item). At either cap a
	// message that matches no template is not learned: it is grouped by
	// its own parameterised message, as fp1 would group it (a split,
	// never a merge), Result.Learned is false, and the state does not
	// grow. Zero means the default.
	MaxTemplates int
	MaxPerBucket int
}

// Scope is what an event is grouped within: two events of different
// scopes are never one group.
type Scope struct {
	Function, Type, Frame string
}

// key hashes the scope into the bucket's Scope field.
func (s Scope) key() string { return hashParts(Version, "scope", s.Function, s.Type, s.Frame) }

// Result is the group an event was put in.
type Result struct {
	// Key identifies the group: 32 hex digits of a hash of Version, the
	// scope and the template the group was created with. It does not
	// change when the template generalises.
	Key string
	// Template is the group's template now, variables as <*>.
	Template string
	// Merged lists the keys of the groups this event merged into Key,
	// which are gone from the state: the monitor adds their counts to
	// Key's group and keeps Key's issue (Key is the oldest of them).
	Merged []string
	// Learned is false when a cap kept the message from being learned.
	Learned bool
	Scope   Scope
}

// Learner groups events and learns their templates. It is not safe for
// concurrent use: a scan owns one.
type Learner struct {
	opts   Options
	tune   tuning
	scopes map[string]*scopeState
	// alias maps the key of a group merged away to the key it merged
	// into (one step; resolve follows the chain).
	alias map[string]string
	// cache maps a scope key and a message's tokens to the key of the
	// template that covered them. Templates only generalise, so the
	// template that covered a message always will (through alias).
	cache map[string]string
	byKey map[string]*tmpl
}

type scopeState struct {
	key     string
	count   int // templates
	buckets map[int]*bucket
}

type bucket struct {
	length   int
	version  int64
	seq      int64
	branches map[string][]*tmpl
	dirty    bool
}

type tmpl struct {
	key string
	seq int64
	list
}

// New returns a Learner with an empty state.
func New(opts Options) *Learner {
	if opts.MaxTemplates <= 0 {
		opts.MaxTemplates = DefaultMaxTemplates
	}
	if opts.MaxPerBucket <= 0 {
		opts.MaxPerBucket = DefaultMaxPerBucket
	}
	return &Learner{
		opts: opts, tune: defaultTuning,
		scopes: map[string]*scopeState{}, alias: map[string]string{},
		cache: map[string]string{}, byKey: map[string]*tmpl{},
	}
}

// ScopeOf is the scope of an event, the parts of its fp1 fingerprint
// other than the message, and its parameterised message (booleans kept,
// see keepBools).
func ScopeOf(e source.Event) (Scope, string) {
	e.Message = keepBools(e.Message)
	f := fingerprint.Of(e)
	return Scope{Function: f.Function, Type: f.Type, Frame: f.Frame}, f.Message
}

// Learn groups an event, learning from it.
func (l *Learner) Learn(e source.Event) Result {
	s, msg := ScopeOf(e)
	return l.learnTokens(s, tokens(msg))
}

// LearnMessage groups a message within a scope, learning from it.
func (l *Learner) LearnMessage(s Scope, msg string) Result {
	return l.learnTokens(s, tokenize(msg))
}

func (l *Learner) learnTokens(s Scope, toks []string) Result {
	sk := s.key()
	ck := sk + "\x00" + strings.Join(toks, " ")
	if k, ok := l.cache[ck]; ok {
		k = l.resolve(k)
		r := Result{Key: k, Learned: true, Scope: s}
		if t := l.byKey[k]; t != nil {
			r.Template = t.text()
		} else {
			r.Template, r.Learned = text(toks), false
		}
		return r
	}
	r := l.learn(s, sk, newList(toks))
	if len(l.cache) >= defaultCacheSize {
		clear(l.cache)
	}
	l.cache[ck] = r.Key
	return r
}

func (l *Learner) learn(s Scope, sk string, m list) Result {
	sc := l.scopes[sk]
	if sc == nil {
		sc = &scopeState{key: sk, buckets: map[int]*bucket{}}
		l.scopes[sk] = sc
	}
	b := sc.buckets[len(m.toks)]
	if b == nil {
		b = &bucket{length: len(m.toks), branches: map[string][]*tmpl{}}
		sc.buckets[len(m.toks)] = b
	}
	br := m.branch()
	// When a template covers m, m changes nothing. Else m joins every
	// template it is compatible with, or is a template of its own, and
	// the branch's templates merge until no rule applies (see match.go).
	var hit []*tmpl
	for _, t := range b.branches[br] {
		if covers(t.list, m) {
			return Result{Key: t.key, Template: t.text(), Learned: true, Scope: s}
		}
		if l.tune.compatible(t.list, m, -1) {
			hit = append(hit, t)
		}
	}
	r := Result{Learned: true, Scope: s}
	var cur *tmpl
	created := ""
	if len(hit) == 0 {
		key := hashParts(Version, "template", sk, text(m.toks))
		if sc.count >= l.opts.MaxTemplates || b.size() >= l.opts.MaxPerBucket {
			return Result{Key: key, Template: text(m.toks), Learned: false, Scope: s}
		}
		b.seq++
		cur = &tmpl{key: key, seq: b.seq, list: m}
		created = key
		b.branches[br] = append(b.branches[br], cur)
		sc.count++
		l.byKey[key] = cur
	} else {
		cur = hit[0]
		join(&cur.list, m)
		for _, t := range hit[1:] {
			cur = l.merge(cur, t, &r)
		}
	}
	b.dirty = true
	key := cur.key
	for l.mergeOnce(b, br, &r) {
	}
	b.branches[br] = compact(b.branches[br])
	sc.count -= len(r.Merged)
	// A template made for m and merged at once was never a group.
	r.Merged = slices.DeleteFunc(r.Merged, func(k string) bool { return k == created })
	sort.Strings(r.Merged)
	cur = l.byKey[l.resolve(key)]
	r.Key, r.Template = cur.key, cur.text()
	return r
}

// merge joins templates a and b: the older keeps its key and takes the
// join; the other is marked gone (key ""), aliased and reported.
func (l *Learner) merge(a, b *tmpl, r *Result) *tmpl {
	if b.older(a) {
		a, b = b, a
	}
	join(&a.list, b.list)
	l.alias[b.key] = a.key
	delete(l.byKey, b.key)
	r.Merged = append(r.Merged, b.key)
	b.key = ""
	return a
}

// mergeOnce applies one merge rule once in a branch, if one applies. Rule 1: two compatible
// templates merge. Rule 2: a template and minValues-1 others that differ
// from it by one word at one position, each with another word there, and
// are compatible with it elsewhere, merge: the position is a variable.
// Two or three words seen at a position are likely two or three
// templates ("stored as bytes", "stored as values"); many are a value
// (a user name).
func (l *Learner) mergeOnce(b *bucket, br string, r *Result) bool {
	ts := b.branches[br]
	for _, c := range ts {
		if c.key == "" {
			continue
		}
		for _, u := range ts {
			if u != c && u.key != "" && l.tune.compatible(c.list, u.list, -1) {
				l.merge(c, u, r)
				return true
			}
		}
	}
	for _, c := range ts {
		if c.key == "" {
			continue
		}
		for p, w := range c.toks {
			if w == "" || c.cls[p] != classWord {
				continue
			}
			var group []*tmpl
			values := map[string]bool{w: true}
			for _, u := range ts {
				if u == c || u.key == "" || u.toks[p] == "" || u.toks[p] == w || u.cls[p] != classWord {
					continue
				}
				if l.tune.compatible(c.list, u.list, p) {
					group = append(group, u)
					values[u.toks[p]] = true
				}
			}
			if len(values) >= l.tune.minValues {
				for _, u := range group {
					c = l.merge(c, u, r)
				}
				return true
			}
		}
	}
	return false
}

// compact drops the templates merged away.
func compact(ts []*tmpl) []*tmpl {
	kept := ts[:0]
	for _, t := range ts {
		if t.key != "" {
			kept = append(kept, t)
		}
	}
	clear(ts[len(kept):])
	return kept
}

// older orders templates by age: the lower seq, then the lower key.
func (t *tmpl) older(u *tmpl) bool {
	if t.seq != u.seq {
		return t.seq < u.seq
	}
	return t.key < u.key
}

func (b *bucket) size() int {
	if b == nil {
		return 0
	}
	n := 0
	for _, ts := range b.branches {
		n += len(ts)
	}
	return n
}

// Resolve returns the key a group's key now stands for: itself, or the
// key of the group it merged into, as this Learner has seen.
func (l *Learner) Resolve(key string) string { return l.resolve(key) }

func (l *Learner) resolve(key string) string {
	for n := 0; n < 64; n++ {
		next, ok := l.alias[key]
		if !ok {
			return key
		}
		key = next
	}
	return key
}

func (t *tmpl) text() string { return text(t.toks) }

// text writes a token list, variables as <*>.
func text(toks []string) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		if t == "" {
			t = Variable
		}
		b.WriteString(t)
	}
	return b.String()
}

// hashParts hashes parts, each preceded by its length, into 32 hex
// digits.
func hashParts(parts ...string) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, p := range parts {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(p)))])
		h.Write([]byte(p))
	}
	var d [32]byte
	return hex.EncodeToString(h.Sum(d[:0])[:16])
}
