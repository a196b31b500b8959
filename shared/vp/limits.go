package vp

import (
	"math"
	"reflect"
	"strconv"
)

// A Limit bounds one argument of a domain input type. Each is declared
// once, next to the input type it bounds, in a limits declaration: a
// struct whose fields are Limits (or other such structs, embedded to share
// a set). The domain's check reads the bound from it, the MCP layer
// advertises it in the tool's input schema (LimitsOf), and the error names
// its Field and its bound — so the three cannot disagree.
type Limit struct {
	// Field is the argument's JSON path as the input schema spells it:
	// "title", "b" of object "a" as "a.b", the items of list "a" as "a[]",
	// the values of map "a" as "a.*". It is the field errors name.
	Field string
	// Bytes bounds a string; for a list, each of its (string) entries.
	Bytes int
	// Items bounds a list's entries.
	Items int
	// Range bounds a number to Min..Max.
	Range    bool
	Min, Max float64
}

// MaxBytes bounds the string field to n bytes.
func MaxBytes(field string, n int) Limit { return Limit{Field: field, Bytes: n} }

// MaxItems bounds the list field to n entries, each of at most itemBytes
// (0: the entries are bounded elsewhere, as names are).
func MaxItems(field string, n, itemBytes int) Limit {
	return Limit{Field: field, Items: n, Bytes: itemBytes}
}

// Between bounds the number field to lo..hi.
func Between(field string, lo, hi float64) Limit {
	return Limit{Field: field, Range: true, Min: lo, Max: hi}
}

// As is the limit under another field name, for an error that names one
// entry ("steps[2].title" for "steps[].title").
func (l Limit) As(field string) Limit {
	l.Field = field
	return l
}

// Text checks v with CheckText against the limit.
func (l Limit) Text(op, v string, required bool) error {
	return CheckText(op, l.Field, v, l.Bytes, required)
}

// KeyText checks v with CheckKeyText against the limit.
func (l Limit) KeyText(op, v string, required bool) error {
	return CheckKeyText(op, l.Field, v, l.Bytes, required)
}

// List checks a list of short texts with CheckTextList against the limit.
func (l Limit) List(op string, items []string) error {
	return CheckTextList(op, l.Field, items, l.Items, l.Bytes)
}

// IDs checks a list of ids with CheckIDList against the limit.
func (l Limit) IDs(op string, ids []string) error {
	return CheckIDList(op, l.Field, ids, l.Items)
}

// Tags checks a list of tags as CheckTags does, against the limit.
func (l Limit) Tags(op string, tags []string) error {
	if len(tags) > l.Items {
		return Errorf(op, KindTooLarge, l.Field, "has %d tags; the limit is %d", len(tags), l.Items)
	}
	for _, tag := range tags {
		if err := CheckText(op, l.Field, tag, l.Bytes, true); err != nil {
			return err
		}
	}
	return nil
}

// Minutes checks an absent value or a number of minutes within the range.
func (l Limit) Minutes(op string, v *float64) error {
	if v != nil && (math.IsNaN(*v) || *v < l.Min || *v > l.Max) {
		return Errorf(op, KindInvalid, l.Field, "must be a number of minutes between %s and %s, got %v", fmtNum(l.Min), fmtNum(l.Max), *v)
	}
	return nil
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Limits is a flat list of limits, as LimitsOf returns them.
type Limits []Limit

// LimitsOf flattens a limits declaration — a Limit, Limits, a struct (or
// pointer to one) whose exported fields are any of these, embedded or not,
// or a []any of them — into a list, in field order. A struct field of another type is
// skipped; a Limit left zero is kept, so that whoever reads the list sees
// a field without a name or a bound and refuses it.
func LimitsOf(decl any) Limits {
	var out Limits
	collectLimits(reflect.ValueOf(decl), &out)
	return out
}

var limitType = reflect.TypeFor[Limit]()

func collectLimits(v reflect.Value, out *Limits) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return
	}
	switch {
	case v.Type() == limitType:
		// Field by field: v may come through an unexported embedded
		// struct, whose values reflect reads but will not hand out.
		*out = append(*out, Limit{Field: v.Field(0).String(), Bytes: int(v.Field(1).Int()), Items: int(v.Field(2).Int()),
			Range: v.Field(3).Bool(), Min: v.Field(4).Float(), Max: v.Field(5).Float()})
	case v.Kind() == reflect.Slice:
		for i := range v.Len() {
			collectLimits(v.Index(i), out)
		}
	case v.Kind() == reflect.Struct:
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() || f.Anonymous {
				collectLimits(v.Field(i), out)
			}
		}
	}
}
