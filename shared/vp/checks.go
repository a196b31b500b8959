package vp

import (
	"slices"
	"strings"
	"time"
)

// Checks shared by every aggregate's write paths (and by
// validate_task_payload, which reports all of a payload's failures).

// Errs collects every failure of one payload.
type Errs []error

// Add keeps err when it is not nil.
func (e *Errs) Add(err error) {
	if err != nil {
		*e = append(*e, err)
	}
}

// First is the first failure, or nil.
func (e Errs) First() error {
	if len(e) == 0 {
		return nil
	}
	return e[0]
}

// TenantOf returns the principal's tenant, refusing a principal without one.
func TenantOf(op string, p Principal) (string, error) {
	if !ValidTenant(p.Tenant) {
		return "", E(op, KindUnauthorized, "", "the credential carries no valid tenant")
	}
	return p.Tenant, nil
}

// CheckEnum accepts one of allowed (or "" when not required).
func CheckEnum(op, field, v string, allowed []string, required bool) error {
	if v == "" && !required {
		return nil
	}
	if slices.Contains(allowed, v) {
		return nil
	}
	if v == "" {
		return Errorf(op, KindInvalid, field, "is required: use one of %s", strings.Join(allowed, ", "))
	}
	return Errorf(op, KindInvalid, field, "%q is not allowed; use one of %s", v, strings.Join(allowed, ", "))
}

// CheckPriority accepts a task or mission priority.
func CheckPriority(op, v string, required bool) error {
	return CheckEnum(op, "priority", v, Priorities, required)
}

// CheckTags accepts at most MaxTags tags of at most MaxTagBytes each.
func CheckTags(op string, tags []string) error {
	return MaxItems("tags", MaxTags, MaxTagBytes).Tags(op, tags)
}

// CheckIDList accepts at most max well-formed ids.
func CheckIDList(op, field string, ids []string, max int) error {
	if len(ids) > max {
		return Errorf(op, KindTooLarge, field, "has %d ids; the limit is %d", len(ids), max)
	}
	for _, id := range ids {
		if err := CheckName(op, field, id, true); err != nil {
			return err
		}
	}
	return nil
}

// MaxMinutes bounds an estimate or a recorded duration (about 19 years).
const MaxMinutes = 1e7

// CheckMinutes accepts an absent value or 0..MaxMinutes.
func CheckMinutes(op, field string, v *float64) error {
	return Between(field, 0, MaxMinutes).Minutes(op, v)
}

// MaxMillis bounds a Unix time in milliseconds (year 33658).
const MaxMillis = 1e15

// CheckMillis accepts an absent value or a Unix time in milliseconds.
func CheckMillis(op, field string, v *int64) error {
	if v != nil && (*v < 0 || *v > MaxMillis) {
		return Errorf(op, KindInvalid, field, "must be a Unix time in milliseconds (e.g. %d), got %d", time.Date(2026, 7, 1, 9, 0, 0, 0, time.UTC).UnixMilli(), *v)
	}
	return nil
}

// Dedupe drops repeated ids, keeping the first occurrence of each.
func Dedupe(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// ParseStatuses reads a status filter — one status, an array of statuses,
// or an alias — into the statuses to include, in the order of all. An
// absent filter and "all" include every status.
func ParseStatuses(op string, v any, all []string, aliases map[string][]string) ([]string, error) {
	var names []string
	switch x := v.(type) {
	case nil:
		return slices.Clone(all), nil
	case string:
		names = []string{x}
	case []string:
		names = x
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, Errorf(op, KindInvalid, "status", "array entries must be strings such as %q", all[0])
			}
			names = append(names, s)
		}
	default:
		return nil, Errorf(op, KindInvalid, "status", "must be a status, an array of statuses or an alias (open, active, all), got %T", v)
	}
	if len(names) == 0 {
		return nil, Errorf(op, KindInvalid, "status", "is an empty array; omit it for every status")
	}
	want := map[string]bool{}
	for _, n := range names {
		switch {
		case n == "all":
			return slices.Clone(all), nil
		case aliases[n] != nil:
			for _, a := range aliases[n] {
				want[a] = true
			}
		case slices.Contains(all, n):
			want[n] = true
		default:
			return nil, Errorf(op, KindInvalid, "status", "%q is not a status; use one of %s, or open, active, all", n, strings.Join(all, ", "))
		}
	}
	var out []string
	for _, a := range all {
		if want[a] {
			out = append(out, a)
		}
	}
	return out, nil
}
