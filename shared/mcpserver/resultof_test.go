package mcpserver

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
)

// TestResultOfNamesTheFullSchema: a tool whose outputSchema lists only the
// required members (tool.ResultOf) names a core tool of the same result
// type that lists every member, so tools/list still spells out the type
// once; its own schema has exactly the required members.
func TestResultOfNamesTheFullSchema(t *testing.T) {
	s, _ := build(Options{Toolsets: EveryToolset(), inferSchemas: true})
	if len(s.schemas.resultOf) < 4 {
		t.Fatalf("%d tools name a ResultOf; the four task writers do", len(s.schemas.resultOf))
	}
	type output struct {
		Properties map[string]any `json:"properties"`
		Required   []string       `json:"required"`
	}
	read := func(name string) (output, string) {
		e, ok := s.schemas.inferred[name]
		if !ok || e.Output == nil {
			t.Fatalf("%s: no outputSchema", name)
		}
		var o output
		if err := json.Unmarshal(e.Output, &o); err != nil {
			t.Fatal(err)
		}
		typ, _, _ := strings.Cut(e.OutType, " ")
		return o, typ
	}
	for _, name := range slices.Sorted(maps.Keys(s.schemas.resultOf)) {
		full := s.schemas.resultOf[name]
		brief, typ := read(name)
		whole, wholeTyp := read(full)
		if _, ok := s.schemas.resultOf[full]; ok || typ != wholeTyp {
			t.Errorf("%s: ResultOf %s, of type %s (itself brief: %v); its own type is %s", name, full, wholeTyp, ok, typ)
		}
		if got := slices.Sorted(maps.Keys(brief.Properties)); !slices.Equal(got, slices.Sorted(slices.Values(brief.Required))) || len(got) == 0 {
			t.Errorf("%s: members %v, required %v", name, got, brief.Required)
		}
		if len(whole.Properties) <= len(brief.Properties) {
			t.Errorf("%s lists %d members, %s %d: not the full type", full, len(whole.Properties), name, len(brief.Properties))
		}
	}
}
