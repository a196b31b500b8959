package search

import (
	"errors"
	"strings"
)

// ErrEmptyQuery is returned by Text for a query with no searchable term
// (empty, only punctuation or symbols). Callers turn it into an invalid-
// argument error that asks for words to search for.
var ErrEmptyQuery = errors.New("search: the query has no searchable words")

// ErrDimension is returned when a vector's length differs from the length
// of the vectors already indexed for the same embedder, or is zero.
var ErrDimension = errors.New("search: vector dimension does not match the embedder's")

// Matches reports whether d passes every field of f (tenant, kinds,
// namespaces, types, owner, expiry). Adapters that filter in Go use it, so
// that every adapter reads a Filter the same way.
func (f Filter) Matches(d Doc) bool {
	if d.Tenant != f.Tenant {
		return false
	}
	if len(f.Kinds) > 0 && !contains(f.Kinds, d.Kind) {
		return false
	}
	if len(f.Namespaces) > 0 && !NamespaceAllowed(f.Namespaces, d.Namespace) {
		return false
	}
	if len(f.Types) > 0 && !contains(f.Types, d.Type) {
		return false
	}
	if f.Owner != "" && d.Owner != f.Owner {
		return false
	}
	if f.NowMS > 0 && d.ExpiresAt > 0 && d.ExpiresAt <= f.NowMS {
		return false
	}
	return true
}

// NamespaceAllowed applies the namespace rule of Filter: "*" matches every
// namespace, a pattern ending in "/" matches the namespace without the
// slash and everything under it, any other pattern matches exactly.
func NamespaceAllowed(patterns []string, ns string) bool {
	for _, p := range patterns {
		switch {
		case p == "*":
			return true
		case strings.HasSuffix(p, "/"):
			if ns == p[:len(p)-1] || strings.HasPrefix(ns, p) {
				return true
			}
		case ns == p:
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
