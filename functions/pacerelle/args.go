package main

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// args decodes one tool call's arguments, each with a clear error naming
// the field and its limit: the SDK's low-level AddTool hands over the raw
// JSON, and errors here are meant for a model to act on.
type args struct {
	tool string
	m    map[string]json.RawMessage
}

func parseArgs(tool string, raw json.RawMessage, known ...string) (*args, error) {
	a := &args{tool: tool, m: map[string]json.RawMessage{}}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &a.m); err != nil {
			return nil, vp.E(tool, vp.KindInvalid, "", "the arguments must be a JSON object")
		}
	}
	var unknown []string
	for k := range a.m {
		if !slices.Contains(known, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, vp.Errorf(tool, vp.KindInvalid, unknown[0], "unknown argument; %s takes %s", tool, list(known))
	}
	return a, nil
}

func list(names []string) string {
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, ", ")
}

func (a *args) has(field string) bool {
	v, ok := a.m[field]
	return ok && string(v) != "null"
}

// str reads a string of at most max characters.
func (a *args) str(field string, required bool, max int) (string, error) {
	if !a.has(field) {
		if required {
			return "", vp.Errorf(a.tool, vp.KindInvalid, field, "is required (a string of 1 to %d characters)", max)
		}
		return "", nil
	}
	var s string
	if err := json.Unmarshal(a.m[field], &s); err != nil {
		return "", vp.Errorf(a.tool, vp.KindInvalid, field, "must be a string, got %s", jsonType(a.m[field]))
	}
	if n := utf8.RuneCountInString(s); n > max {
		return "", vp.Errorf(a.tool, vp.KindTooLarge, field, "is %d characters; the limit is %d", n, max)
	}
	if required && strings.TrimSpace(s) == "" {
		return "", vp.Errorf(a.tool, vp.KindInvalid, field, "must not be empty")
	}
	if strings.ContainsRune(s, 0) {
		return "", vp.E(a.tool, vp.KindInvalid, field, "must not contain NUL characters")
	}
	return s, nil
}

// id reads an identifier (a message or conversation id, a party).
func (a *args) id(field string, required bool) (string, error) {
	s, err := a.str(field, required, vp.MaxNameBytes)
	if err == nil && s != "" {
		err = vp.CheckName(a.tool, field, s, required)
	}
	return s, err
}

// num reads an integer in [lo, hi], def when absent.
func (a *args) num(field string, lo, hi, def int) (int, error) {
	if !a.has(field) {
		return def, nil
	}
	var f float64
	if err := json.Unmarshal(a.m[field], &f); err != nil {
		return 0, vp.Errorf(a.tool, vp.KindInvalid, field, "must be a number from %d to %d, got %s", lo, hi, jsonType(a.m[field]))
	}
	if f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, vp.Errorf(a.tool, vp.KindInvalid, field, "must be an integer from %d to %d, got %v", lo, hi, f)
	}
	return int(f), nil
}

func (a *args) boolean(field string) (bool, error) {
	if !a.has(field) {
		return false, nil
	}
	var v bool
	if err := json.Unmarshal(a.m[field], &v); err != nil {
		return false, vp.Errorf(a.tool, vp.KindInvalid, field, "must be true or false, got %s", jsonType(a.m[field]))
	}
	return v, nil
}

func (a *args) enum(field string, allowed []string, def string) (string, error) {
	s, err := a.str(field, false, 50)
	if err != nil || s == "" {
		return def, err
	}
	if !slices.Contains(allowed, s) {
		return "", vp.Errorf(a.tool, vp.KindInvalid, field, "%q is not allowed; use one of %s", s, strings.Join(allowed, ", "))
	}
	return s, nil
}

func jsonType(raw json.RawMessage) string {
	var v any
	_ = json.Unmarshal(raw, &v)
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "null"
}

// Limits of the tools' arguments.
const (
	MaxTextChars       = 20000
	MaxNoteChars       = 2000
	MaxSummaryChars    = 4000
	MaxLabelChars      = 200
	MaxTimeoutMs       = 30000
	DefaultTimeoutMs   = 25000
	MaxLimit           = 50
	DefaultWaitLimit   = 20
	DefaultHistoryRows = 20
)

// schema is a tool's advertised input schema.
func schema(props map[string]any, required ...string) json.RawMessage {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprint("schema: ", err))
	}
	return b
}

func strProp(desc string, max int) map[string]any {
	return map[string]any{"type": "string", "description": desc, "maxLength": max}
}

func intProp(desc string, lo, hi int) map[string]any {
	return map[string]any{"type": "integer", "description": desc, "minimum": lo, "maximum": hi}
}
