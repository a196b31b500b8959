package mcpserver

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// Input schemas are inferred from each tool's argument struct, but not at
// start-up: inferring, resolving and re-marshalling 90-odd schemas with
// reflection took 30–50 ms, most of a Lambda cold start. They are inferred
// once, at build time, into schemas.json (go generate; TestSchemaFile fails
// when the file is stale), and each is resolved for validation only when
// its tool is first called.
//
//go:generate go test -run TestSchemaFile -update .

//go:embed schemas.json
var schemaFile []byte

// schemaEntry is one tool's input schema: the full schema arguments are
// validated against, and the lean form tools/list advertises.
type schemaEntry struct {
	// Type names the Go argument type the schema was inferred from, so
	// that a tool whose argument type changed is not validated against a
	// stale schema.
	Type       string          `json:"type"`
	Schema     json.RawMessage `json:"schema"`
	Advertised json.RawMessage `json:"advertised"`
}

// toolSchema is the input schema of one registered tool.
type toolSchema struct {
	tool        string
	description string // for the example arguments of missing-field errors
	full        json.RawMessage
	advertised  json.RawMessage

	once     sync.Once
	resolved *jsonschema.Resolved
	checker  *argChecker
	err      error
}

// schemaSet hands out tool schemas: from the build-time file when it has a
// current entry, else inferred by reflection (a tool added since the file
// was generated still works, only its start-up is slower).
type schemaSet struct {
	cached map[string]schemaEntry
	// inferred records the entries made by reflection (the generator and
	// the staleness test read them).
	inferred map[string]schemaEntry
	// declared records each tool's limits declaration (tool.Limits), for
	// the test that the advertised schemas carry exactly those.
	declared map[string]any
}

// newSchemaSet loads schemas.json; inferOnly ignores it (generation).
func newSchemaSet(inferOnly bool) (*schemaSet, error) {
	set := &schemaSet{inferred: map[string]schemaEntry{}, declared: map[string]any{}}
	if inferOnly {
		return set, nil
	}
	if err := json.Unmarshal(schemaFile, &set.cached); err != nil {
		return nil, fmt.Errorf("mcpserver: schemas.json: %w (run go generate ./shared/mcpserver)", err)
	}
	return set, nil
}

// schemaFor returns the input schema of tool t, whose arguments decode
// into In. Its limits are part of the generated advertised schema.
func schemaFor[In any](set *schemaSet, t tool) (*toolSchema, error) {
	typ := reflect.TypeFor[In]().String()
	set.declared[t.Name] = t.Limits
	if e, ok := set.cached[t.Name]; ok && e.Type == typ {
		return &toolSchema{tool: t.Name, description: t.Description, full: e.Schema, advertised: e.Advertised}, nil
	}
	e, err := inferSchema[In](t.Limits)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: input schema of %s: %w", t.Name, err)
	}
	set.inferred[t.Name] = e
	return &toolSchema{tool: t.Name, description: t.Description, full: e.Schema, advertised: e.Advertised}, nil
}

// inferSchema infers the full schema of In and derives the advertised
// one: lean, with the tool's limits (applied to the advertised schema
// only; the full one stays as inferred, see limits).
func inferSchema[In any](lim any) (schemaEntry, error) {
	s, err := jsonschema.For[In](&jsonschema.ForOptions{})
	if err != nil {
		return schemaEntry{}, err
	}
	if s.Type != "object" {
		return schemaEntry{}, fmt.Errorf("arguments must be a JSON object, not %q", s.Type)
	}
	full, err := json.Marshal(s)
	if err != nil {
		return schemaEntry{}, err
	}
	var lean map[string]any
	if err := json.Unmarshal(full, &lean); err != nil {
		return schemaEntry{}, err
	}
	leanSchema(lean)
	if err := applyLimits(lean, lim); err != nil {
		return schemaEntry{}, err
	}
	advertised, err := json.Marshal(lean)
	if err != nil {
		return schemaEntry{}, err
	}
	return schemaEntry{Type: reflect.TypeFor[In]().String(), Schema: full, Advertised: advertised}, nil
}

// leanSchema trims a schema to what a model needs to call the tool. Every
// client loads tools/list into its model's context, so the advertised form
// drops what only a validator reads: "additionalProperties": false and the
// "null" of optional fields' types. Arguments are still validated against
// the full schema.
func leanSchema(node any) {
	switch n := node.(type) {
	case map[string]any:
		if ap, ok := n["additionalProperties"].(bool); ok && !ap {
			delete(n, "additionalProperties")
		}
		if types, ok := n["type"].([]any); ok && len(types) == 2 {
			for i, ty := range types {
				if ty == "null" {
					n["type"] = types[1-i]
				}
			}
		}
		for _, v := range n {
			leanSchema(v)
		}
	case []any:
		for _, v := range n {
			leanSchema(v)
		}
	}
}

// resolve returns the schema ready for validation, and the checker of
// decode.go, building both on first use.
func (ts *toolSchema) resolve() (*jsonschema.Resolved, *argChecker, error) {
	ts.once.Do(func() {
		var s jsonschema.Schema
		if ts.err = json.Unmarshal(ts.full, &s); ts.err != nil {
			return
		}
		if ts.resolved, ts.err = s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); ts.err != nil {
			return
		}
		var full, advertised map[string]any
		if ts.err = json.Unmarshal(ts.full, &full); ts.err != nil {
			return
		}
		if ts.err = json.Unmarshal(ts.advertised, &advertised); ts.err != nil {
			return
		}
		ts.checker = &argChecker{tool: ts.tool, root: compileArgs(full, advertised), example: descriptionExample(ts.description)}
	})
	return ts.resolved, ts.checker, ts.err
}

// decodeArgs checks a call's arguments (decode.go: nulls, missing and
// unknown arguments, types, lengths, surrogates, depth), validates them
// against the tool's schema and decodes them. Its errors are *vp.Error
// naming the argument; none shows a validator's or decoder's internals.
// The schemas carry no defaults (TestSchemaFile checks), so the arguments
// decode as sent; a null member decodes as the zero value, the same as
// an absent one.
func decodeArgs[In any](ts *toolSchema, raw json.RawMessage) (In, error) {
	var in In
	rs, checker, err := ts.resolve()
	if err != nil {
		return in, vp.Wrap(ts.tool, vp.KindInternal, fmt.Errorf("input schema: %w", err))
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	if err := scanArgs(ts.tool, raw); err != nil {
		return in, err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return in, vp.E(ts.tool, vp.KindInvalid, "", "the arguments are not a valid JSON object")
	}
	if err := checker.check(v); err != nil {
		return in, err
	}
	// A backstop: the checker covers every keyword the inferred schemas
	// use, so this refuses nothing the checker let through.
	if err := rs.Validate(&v); err != nil {
		return in, vp.E(ts.tool, vp.KindInvalid, "", "the arguments do not match the tool's input schema; see tools/list")
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		var ute *json.UnmarshalTypeError
		if errors.As(err, &ute) && ute.Field != "" {
			return in, vp.Errorf(ts.tool, vp.KindInvalid, ute.Field, "the %s is out of range for this argument", ute.Value)
		}
		return in, vp.E(ts.tool, vp.KindInvalid, "", "the arguments do not fit the tool's input schema; see tools/list")
	}
	return in, nil
}
