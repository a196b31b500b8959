package mcpserver

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
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
	tool       string
	full       json.RawMessage
	advertised json.RawMessage

	once     sync.Once
	resolved *jsonschema.Resolved
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
}

// newSchemaSet loads schemas.json; inferOnly ignores it (generation).
func newSchemaSet(inferOnly bool) (*schemaSet, error) {
	set := &schemaSet{inferred: map[string]schemaEntry{}}
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
	if e, ok := set.cached[t.Name]; ok && e.Type == typ {
		return &toolSchema{tool: t.Name, full: e.Schema, advertised: e.Advertised}, nil
	}
	e, err := inferSchema[In](t.Limits)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: input schema of %s: %w", t.Name, err)
	}
	set.inferred[t.Name] = e
	return &toolSchema{tool: t.Name, full: e.Schema, advertised: e.Advertised}, nil
}

// inferSchema infers the full schema of In and derives the advertised
// one: lean, with the tool's limits (applied to the advertised schema
// only; the full one stays as inferred, see limits).
func inferSchema[In any](lim limits) (schemaEntry, error) {
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

// resolve returns the schema ready for validation, resolving it on first use.
func (ts *toolSchema) resolve() (*jsonschema.Resolved, error) {
	ts.once.Do(func() {
		var s jsonschema.Schema
		if ts.err = json.Unmarshal(ts.full, &s); ts.err != nil {
			return
		}
		ts.resolved, ts.err = s.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	})
	return ts.resolved, ts.err
}

// decodeArgs validates a call's arguments against the tool's schema (types,
// required fields, no unknown fields) and decodes them. Its errors become
// isError results, worded as the SDK words them. The schemas carry no
// defaults (TestSchemaFile checks), so the arguments decode as sent.
func decodeArgs[In any](ts *toolSchema, raw json.RawMessage) (In, error) {
	var in In
	rs, err := ts.resolve()
	if err != nil {
		return in, fmt.Errorf("input schema of %s: %w", ts.tool, err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return in, fmt.Errorf("unmarshaling arguments: %w", err)
	}
	if err := rs.Validate(&v); err != nil {
		return in, fmt.Errorf("validating \"arguments\": %w", err)
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return in, fmt.Errorf("unmarshaling arguments: %w", err)
	}
	return in, nil
}
