package templates

import (
	"sort"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// State is what a Learner has learned, as plain values: one Bucket per
// (scope, token count). A store keeps one item per Bucket, keyed by
// (deployment, Scope, Length), and writes it on the condition that its
// Version is still the one it read; a scan that loses the race reloads
// the bucket and groups its batch again, so that two processes agree.
type State struct {
	// Version is the algorithm that learned it: a State of another
	// version is refused (its keys were computed another way).
	Version string   `json:"version"`
	Buckets []Bucket `json:"buckets"`
}

// Bucket is the templates of one token count of one scope.
type Bucket struct {
	// Scope is the hash of the scope's function, type and frame.
	Scope  string `json:"scope"`
	Length int    `json:"length"`
	// Version counts the bucket's changes: 0 for a bucket never stored,
	// one more at each change (Changed returns it bumped).
	Version int64 `json:"version"`
	// Seq is the last creation number handed out; a template's Seq says
	// which of two is older.
	Seq       int64      `json:"seq"`
	Templates []Template `json:"templates"`
}

// Template is one learned template.
type Template struct {
	Key string `json:"key"`
	Seq int64  `json:"seq"`
	// Tokens: the template's tokens, "" where it has a variable.
	Tokens []string `json:"tokens"`
}

// Text is the template as a line, variables as <*>.
func (t Template) Text() string { return text(t.Tokens) }

// maxTokenBytes bounds a stored token: a message's parameterised form is
// at most 1024 bytes.
const maxTokenBytes = 1024

// State returns everything learned, buckets ordered by scope and
// length, templates by age.
func (l *Learner) State() State {
	st := State{Version: Version}
	for sk, sc := range l.scopes {
		for _, b := range sc.buckets {
			st.Buckets = append(st.Buckets, b.export(sk))
		}
	}
	sortBuckets(st.Buckets)
	return st
}

// Changed returns the buckets changed since they were loaded or last
// returned by Changed, each with its Version bumped, and forgets that
// they changed: the caller stores them (conditional on Version-1).
func (l *Learner) Changed() []Bucket {
	var out []Bucket
	for sk, sc := range l.scopes {
		for _, b := range sc.buckets {
			if b.dirty {
				b.version++
				b.dirty = false
				out = append(out, b.export(sk))
			}
		}
	}
	sortBuckets(out)
	return out
}

func sortBuckets(bs []Bucket) {
	sort.Slice(bs, func(i, j int) bool {
		if bs[i].Scope != bs[j].Scope {
			return bs[i].Scope < bs[j].Scope
		}
		return bs[i].Length < bs[j].Length
	})
}

func (b *bucket) export(scope string) Bucket {
	out := Bucket{Scope: scope, Length: b.length, Version: b.version, Seq: b.seq}
	for _, ts := range b.branches {
		for _, t := range ts {
			out.Templates = append(out.Templates, Template{Key: t.key, Seq: t.seq, Tokens: append([]string(nil), t.toks...)})
		}
	}
	sort.Slice(out.Templates, func(i, j int) bool {
		a, c := out.Templates[i], out.Templates[j]
		if a.Seq != c.Seq {
			return a.Seq < c.Seq
		}
		return a.Key < c.Key
	})
	return out
}

// Restore returns a Learner that starts from a stored State.
func Restore(opts Options, st State) (*Learner, error) {
	const op = "templates.Restore"
	if st.Version != Version {
		return nil, vp.Errorf(op, vp.KindInvalid, "version", "the state was learned by %q, not %s: start from an empty state", st.Version, Version)
	}
	l := New(opts)
	for _, b := range st.Buckets {
		if err := l.Load(b); err != nil {
			return nil, err
		}
	}
	return l, nil
}

// Load replaces one bucket with a stored one (a first read, or a reread
// after a lost race). It checks the bucket against the caps, so that a
// damaged or foreign item cannot grow a Learner past them.
func (l *Learner) Load(b Bucket) error {
	const op = "templates.Load"
	switch {
	case !isKey(b.Scope):
		return vp.Errorf(op, vp.KindInvalid, "scope", "must be 32 lower-case hex digits")
	case b.Length < 0 || b.Length > maxTokens:
		return vp.Errorf(op, vp.KindInvalid, "length", "must be between 0 and %d, got %d", maxTokens, b.Length)
	case len(b.Templates) > l.opts.MaxPerBucket:
		return vp.Errorf(op, vp.KindInvalid, "templates", "holds %d templates; the cap is %d per bucket", len(b.Templates), l.opts.MaxPerBucket)
	case b.Version < 0 || b.Seq < 0:
		return vp.Errorf(op, vp.KindInvalid, "version", "version and seq must not be negative")
	}
	nb := &bucket{length: b.Length, version: b.Version, seq: b.Seq, branches: map[string][]*tmpl{}}
	keys := map[string]bool{}
	for _, t := range b.Templates {
		if len(t.Tokens) != b.Length {
			return vp.Errorf(op, vp.KindInvalid, "tokens", "template %s has %d tokens in a bucket of %d", t.Key, len(t.Tokens), b.Length)
		}
		if !isKey(t.Key) || keys[t.Key] {
			return vp.Errorf(op, vp.KindInvalid, "key", "a template key must be 32 lower-case hex digits, once per bucket")
		}
		if t.Seq < 0 || t.Seq > b.Seq {
			return vp.Errorf(op, vp.KindInvalid, "seq", "template %s has seq %d, beyond the bucket's %d", t.Key, t.Seq, b.Seq)
		}
		for _, tok := range t.Tokens {
			if len(tok) > maxTokenBytes {
				return vp.Errorf(op, vp.KindInvalid, "tokens", "a token is %d bytes; at most %d", len(tok), maxTokenBytes)
			}
		}
		keys[t.Key] = true
		nt := &tmpl{key: t.Key, seq: t.Seq, list: newList(append([]string(nil), t.Tokens...))}
		br := nt.branch()
		nb.branches[br] = append(nb.branches[br], nt)
	}
	sc := l.scopes[b.Scope]
	if sc == nil {
		sc = &scopeState{key: b.Scope, buckets: map[int]*bucket{}}
		l.scopes[b.Scope] = sc
	}
	old := sc.buckets[b.Length]
	count := sc.count - old.size() + len(b.Templates)
	if count > l.opts.MaxTemplates {
		return vp.Errorf(op, vp.KindInvalid, "templates", "the scope would hold %d templates; the cap is %d", count, l.opts.MaxTemplates)
	}
	if old != nil {
		for _, ts := range old.branches {
			for _, t := range ts {
				delete(l.byKey, t.key)
			}
		}
	}
	for _, ts := range nb.branches {
		for _, t := range ts {
			l.byKey[t.key] = t
		}
	}
	sc.buckets[b.Length] = nb
	sc.count = count
	// What this Learner remembered of the old bucket (messages it
	// covered, merges it saw) may not hold for the new one.
	clear(l.cache)
	clear(l.alias)
	return nil
}

func isKey(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
