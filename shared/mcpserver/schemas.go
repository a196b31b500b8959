package mcpserver

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
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
// validated against, and the lean form tools/list advertises, whose
// bounds the checker enforces with those it leaves unlisted
// (enforcedSchema).
type schemaEntry struct {
	// Type names the Go argument type the schema was inferred from, so
	// that a tool whose argument type changed is not validated against a
	// stale schema.
	Type       string          `json:"type"`
	Schema     json.RawMessage `json:"schema"`
	Advertised json.RawMessage `json:"advertised"`
	// OutType and Output are a core tool's result type and the output
	// schema inferred from it (outputSchema in tools/list); none for the
	// other tools.
	OutType string          `json:"outType,omitempty"`
	Output  json.RawMessage `json:"output,omitempty"`
	// Hidden are the compatibility arguments (compatArgs) of the tool,
	// accepted but not advertised, with their maxLength.
	Hidden map[string]int `json:"hidden,omitempty"`
	// bounded is Advertised before unlistStatedBounds, for the test that
	// enforcedSchema restores exactly what the listing leaves out; only
	// inferred entries have it.
	bounded json.RawMessage
}

// compatArgs are arguments kept for compatibility with the seed's tools
// that the token already decides: who calls (callerOrchestrator,
// callerInstance, and createdBy in a tool that writes: the token's
// identity when omitted) and the seed's tenantId label. Forty tools take
// one; listing each would cost ~600 tokens of every tools/list. They
// stay accepted and bounded; the server's instructions name them once
// (compatNote). In a reader, createdBy is a filter, and listed.
var compatArgs = []string{"callerOrchestrator", "callerInstance", "tenantId"}

const writerCompatArg = "createdBy"

const compatNote = "Tools that change a task, mission, mandate, reservation or note also accept callerOrchestrator " +
	"(checkout_task also callerInstance), and tools that create a record createdBy, unlisted: who acts, by default your token's identity; " +
	"name it when your token may act as any orchestrator. send_message, check_messages and create_iframe_session accept the seed's tenantId label."

// toolSchema is the input schema of one registered tool.
type toolSchema struct {
	tool        string
	description string // for the example arguments of missing-field errors
	full        json.RawMessage
	advertised  json.RawMessage
	output      json.RawMessage // nil: the tool declares no outputSchema
	hidden      map[string]int

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
	// resultOf records each tool's ResultOf, for its test.
	resultOf map[string]string
}

// newSchemaSet loads schemas.json; inferOnly ignores it (generation).
func newSchemaSet(inferOnly bool) (*schemaSet, error) {
	set := &schemaSet{inferred: map[string]schemaEntry{}, declared: map[string]any{}, resultOf: map[string]string{}}
	if inferOnly {
		return set, nil
	}
	if err := json.Unmarshal(schemaFile, &set.cached); err != nil {
		return nil, fmt.Errorf("mcpserver: schemas.json: %w (run go generate ./shared/mcpserver)", err)
	}
	return set, nil
}

// schemaFor returns the schemas of tool t, whose arguments decode into In
// and whose handler returns Out. Its limits are part of the generated
// advertised schema; a core tool's output schema is inferred from Out.
func schemaFor[In, Out any](set *schemaSet, t tool) (*toolSchema, error) {
	typ, outTyp := reflect.TypeFor[In]().String(), ""
	if t.Core {
		outTyp = reflect.TypeFor[Out]().String()
		if t.ResultOf != "" {
			// In the cache key: a tool that gains or loses ResultOf is
			// inferred again, not served its former schema.
			outTyp += " (required members; in full: " + t.ResultOf + ")"
		}
	}
	set.declared[t.Name] = t.Limits
	if t.ResultOf != "" {
		set.resultOf[t.Name] = t.ResultOf
	}
	if e, ok := set.cached[t.Name]; ok && e.Type == typ && e.OutType == outTyp {
		return &toolSchema{tool: t.Name, description: t.Description, full: e.Schema, advertised: e.Advertised, output: e.Output, hidden: e.Hidden}, nil
	}
	e, err := inferSchema[In](t.Limits, t.Annotations == nil || !t.Annotations.ReadOnlyHint)
	if err != nil {
		return nil, fmt.Errorf("mcpserver: input schema of %s: %w", t.Name, err)
	}
	if t.Core {
		if e.Output, err = inferOutput[Out](t.ResultOf != ""); err != nil {
			return nil, fmt.Errorf("mcpserver: output schema of %s: %w", t.Name, err)
		}
		e.OutType = outTyp
	}
	set.inferred[t.Name] = e
	return &toolSchema{tool: t.Name, description: t.Description, full: e.Schema, advertised: e.Advertised, output: e.Output, hidden: e.Hidden}, nil
}

// inferOutput infers the output schema of a tool returning Out, as the
// SDK's typed AddTool would (a pointer's element type), then trims it the
// way leanOutput says, to the required members if requiredOnly (see
// tool.ResultOf): the structuredContent of every call still matches it
// (TestCoreOutputSchemas).
func inferOutput[Out any](requiredOnly bool) (json.RawMessage, error) {
	rt := reflect.TypeFor[Out]()
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	s, err := jsonschema.ForType(rt, &jsonschema.ForOptions{})
	if err != nil {
		return nil, err
	}
	if s.Type != "object" {
		// structuredContent is a JSON object (MCP 2025-06-18 and later).
		return nil, fmt.Errorf("the result must be a JSON object, not %q", s.Type)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var node map[string]any
	if err := json.Unmarshal(b, &node); err != nil {
		return nil, err
	}
	leanOutput(node)
	if requiredOnly {
		props, _ := node["properties"].(map[string]any)
		required, _ := node["required"].([]any)
		for name := range props {
			if !slices.Contains(required, any(name)) {
				delete(props, name)
			}
		}
	}
	return json.Marshal(node)
}

// leanOutput trims an inferred output schema to the members of the
// result, typed, within the tools/list budget, without letting any result
// of the Go type fail it. Of the root object it keeps each member's type
// and the required list; it drops descriptions (the tool's description
// says what it returns), "additionalProperties": false (encoding/json
// writes no other member) and the "null" of an optional member's type
// (omitempty omits a nil slice, map or pointer rather than writing null;
// a required member keeps its null). A member that is an object, or an
// array of objects, is typed as such without its own members: those are
// another tool's result (a task's in get_task, a message's in
// get_message), and spelling them out in every schema that nests them
// would cost more than the whole core profile may.
func leanOutput(root map[string]any) {
	delete(root, "additionalProperties")
	delete(root, "description")
	required := map[string]bool{}
	if req, ok := root["required"].([]any); ok {
		for _, r := range req {
			if name, ok := r.(string); ok {
				required[name] = true
			}
		}
	}
	props, _ := root["properties"].(map[string]any)
	for name, p := range props {
		child, ok := p.(map[string]any)
		if !ok {
			continue
		}
		if !required[name] {
			dropNull(child)
		}
		props[name] = shallow(child)
	}
}

// shallow is a member's schema with its type and, for an array of
// strings or numbers, its items' type: nothing below. (Of an array of
// objects, "items":{"type":"object"} would add nothing a model or client
// uses at this depth.)
func shallow(n map[string]any) map[string]any {
	out := map[string]any{}
	if t, ok := n["type"]; ok {
		out["type"] = t
	}
	if items, ok := n["items"].(map[string]any); ok {
		if t, ok := items["type"]; ok && t != "object" {
			out["items"] = map[string]any{"type": t}
		}
	}
	return out
}

// dropNull turns a type ["null", T] into T.
func dropNull(n map[string]any) {
	if types, ok := n["type"].([]any); ok && len(types) == 2 {
		for i, ty := range types {
			if ty == "null" {
				n["type"] = types[1-i]
			}
		}
	}
}

// inferSchema infers the full schema of In and derives the advertised
// one: lean, with the tool's limits (applied to the advertised schema
// only; the full one stays as inferred, see limits), without the
// compatibility arguments (writes: of a tool that writes).
func inferSchema[In any](lim any, writes bool) (schemaEntry, error) {
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
	hidden := hideCompatArgs(lean, writes)
	bounded, err := json.Marshal(lean)
	if err != nil {
		return schemaEntry{}, err
	}
	unlistStatedBounds(lean)
	advertised, err := json.Marshal(lean)
	if err != nil {
		return schemaEntry{}, err
	}
	return schemaEntry{Type: reflect.TypeFor[In]().String(), Schema: full, Advertised: advertised, Hidden: hidden, bounded: bounded}, nil
}

// hideCompatArgs takes the compatArgs out of an advertised schema and
// returns their maxLength, which decodeArgs still enforces.
func hideCompatArgs(lean map[string]any, writes bool) map[string]int {
	props, _ := lean["properties"].(map[string]any)
	var hidden map[string]int
	names := compatArgs
	if writes {
		names = append(slices.Clip(names), writerCompatArg)
	}
	for _, name := range names {
		p, ok := props[name].(map[string]any)
		if !ok {
			continue
		}
		if hidden == nil {
			hidden = map[string]int{}
		}
		ml, _ := p["maxLength"].(int)
		hidden[name] = ml
		delete(props, name)
	}
	return hidden
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
		ts.checker = &argChecker{tool: ts.tool, root: compileArgs(full, enforcedSchema(advertised, ts.hidden)), example: descriptionExample(ts.description)}
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
