package mcpserver

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/keyword"
)

// tool is the definition of one MCP tool, given to add with its handler
// (whose type parameter is the tool's input type): everything tools/list
// says about the tool is declared here, once.
type tool struct {
	Name string
	// Core puts the tool in the core profile (toolsets.go).
	Core        bool
	Annotations *mcp.ToolAnnotations
	Description string
	// Limits are the bounds the domain enforces on the arguments, shown to
	// the model in the advertised input schema. See limits.
	Limits limits
	// Marker maps the tool's JSON result to the UI marker (§15.3) appended
	// to its text when Options.EmitUIMarkers is set (uimarkers.go); false:
	// no marker. Nil for the tools that emit none.
	Marker markerFunc
	// UI names the MCP Apps view (a uimarker kind, resources.go) that
	// renders the tool's result: tools/list links it as _meta.ui.resourceUri.
	UI string
}

// limits maps an argument to its bounds. The key is the argument's JSON
// name; "a.b" is field b of object a, and "a[]" the items of array a
// ("tags[]", "relations[].targetId"). A key that names no argument, or a
// bound that does not fit the argument's type, fails schema generation
// (TestSchemaFile), so a typo cannot silently advertise nothing.
//
// The bounds go into the advertised (lean) schema only, never into the
// full schema arguments are validated against: an oversize argument must
// still reach the domain, whose error names the field and the limit in
// its own words ("is 600 bytes; the limit is 512 bytes").
type limits map[string]limit

// limit is one argument's bounds; zero values are absent.
type limit struct {
	maxLength int // strings: bytes, a safe maxLength (a string never has more characters than bytes)
	maxItems  int // arrays
	hasRange  bool
	min, max  float64 // numbers
}

func maxLen(n int) limit   { return limit{maxLength: n} }
func maxItems(n int) limit { return limit{maxItems: n} }

// between bounds a number; a list's limit, clamped by the domain rather
// than refused, is advertised this way too.
func between(lo, hi float64) limit { return limit{hasRange: true, min: lo, max: hi} }

// applyLimits writes lim into the lean schema of a tool.
func applyLimits(schema map[string]any, lim limits) error {
	paths := make([]string, 0, len(lim))
	for p := range lim {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, path := range paths {
		node, err := schemaAt(schema, path)
		if err != nil {
			return fmt.Errorf("limits: %w", err)
		}
		l := lim[path]
		typ, _ := node["type"].(string)
		switch {
		case l.maxLength > 0 && typ == "string":
			node["maxLength"] = l.maxLength
		case l.maxItems > 0 && typ == "array":
			node["maxItems"] = l.maxItems
		case l.hasRange && (typ == "integer" || typ == "number"):
			node["minimum"], node["maximum"] = l.min, l.max
		default:
			return fmt.Errorf("limits: %s: a %+v bound does not fit an argument of type %q", path, l, typ)
		}
	}
	return nil
}

// schemaAt finds the schema of the argument at path (see limits).
func schemaAt(schema map[string]any, path string) (map[string]any, error) {
	node := schema
	for seg := range strings.SplitSeq(path, ".") {
		name, items := strings.CutSuffix(seg, "[]")
		props, _ := node["properties"].(map[string]any)
		child, ok := props[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %q is not an argument", path, name)
		}
		if items {
			if child, ok = child["items"].(map[string]any); !ok {
				return nil, fmt.Errorf("%s: %q is not an array", path, name)
			}
		}
		node = child
	}
	return node, nil
}

// keywordLimit bounds the limit of the keyword searches (clamped, like a
// list's limit).
var keywordLimit = between(1, keyword.MaxKeywordLimit)
