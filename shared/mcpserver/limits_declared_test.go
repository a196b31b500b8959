package mcpserver

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestAdvertisedLimitsAreTheDeclaredOnes: every bound tools/list shows
// (schemas.json, as served), with the default it leaves to the server's
// instructions (enforcedSchema), is one of the tool's declared limits (the
// domain's declaration, vp.Limit) or the default length of a string
// argument's name (defaultLengths), with the same value, and every
// declared limit is shown. A bound written by hand — in schemas.json or
// by a schema pass — fails here, and so does a declaration that advertises
// nothing. (The domain's checks read the same declarations, so the bounds
// shown are the bounds enforced; TestLimitsProbeTheDomain probes them.)
func TestAdvertisedLimitsAreTheDeclaredOnes(t *testing.T) {
	s, _ := build(Options{Toolsets: EveryToolset()})
	var served map[string]schemaEntry
	if err := json.Unmarshal(schemaFile, &served); err != nil {
		t.Fatal(err)
	}
	if len(s.schemas.declared) < 80 || len(served) != len(s.schemas.declared) {
		t.Fatalf("%d tools registered, %d in schemas.json", len(s.schemas.declared), len(served))
	}
	declaredTotal := 0
	for _, name := range slices.Sorted(maps.Keys(s.schemas.declared)) {
		want := map[string]float64{} // "path keyword" → value
		for _, l := range vp.LimitsOf(s.schemas.declared[name]) {
			declaredTotal++
			switch {
			case l.Range:
				want[l.Field+" minimum"], want[l.Field+" maximum"] = l.Min, l.Max
			case l.Items > 0:
				want[l.Field+" maxItems"] = float64(l.Items)
				if l.Bytes > 0 {
					want[l.Field+"[] maxLength"] = float64(l.Bytes)
				}
			default:
				want[l.Field+" maxLength"] = float64(l.Bytes)
			}
		}
		got := map[string]float64{}
		defaults := map[string]float64{}
		var listed map[string]any
		if err := json.Unmarshal(served[name].Advertised, &listed); err != nil {
			t.Fatal(err)
		}
		collectBounds(enforcedSchema(listed, nil), "", "", got, defaults)
		for k, v := range got {
			if w, ok := want[k]; ok {
				if w != v {
					t.Errorf("%s: %s is %v, the declaration says %v", name, k, v, w)
				}
				continue
			}
			if d, ok := defaults[k]; ok && d == v {
				continue
			}
			t.Errorf("%s: %s %v is neither declared nor the default length of its argument's name", name, k, v)
		}
		for k, w := range want {
			if _, ok := got[k]; !ok {
				t.Errorf("%s: the declared %s %v is not advertised", name, k, w)
			}
		}
	}
	if declaredTotal == 0 {
		t.Fatal("no tool declares a limit")
	}
}

// collectBounds records every bound under node by "path keyword" (paths as
// vp.Limit spells them), and in defaults the default length of each string
// argument's name.
func collectBounds(node map[string]any, path, name string, got, defaults map[string]float64) {
	for _, kw := range []string{"maxLength", "maxItems", "minimum", "maximum", "maxProperties", "exclusiveMinimum", "exclusiveMaximum"} {
		if v, ok := node[kw].(float64); ok {
			got[path+" "+kw] = v
		}
	}
	if n, ok := defaultLengths[name]; ok {
		defaults[path+" maxLength"] = float64(n)
	}
	if items, ok := node["items"].(map[string]any); ok {
		collectBounds(items, path+"[]", name, got, defaults)
	}
	if extra, ok := node["additionalProperties"].(map[string]any); ok {
		collectBounds(extra, path+".*", name, got, defaults)
	}
	props, _ := node["properties"].(map[string]any)
	for k, v := range props {
		child, _ := v.(map[string]any)
		p := k
		if path != "" {
			p = path + "." + k
		}
		collectBounds(child, p, k, got, defaults)
	}
}

// TestAdvertisedLimitsCatchAHandWrittenBound: the check above fails on a
// bound nobody declared.
func TestAdvertisedLimitsCatchAHandWrittenBound(t *testing.T) {
	schema := map[string]any{"properties": map[string]any{
		"title": map[string]any{"type": "string", "maxLength": 10.0},
		"tags":  map[string]any{"type": "array", "maxItems": 3.0, "items": map[string]any{"type": "string", "maxLength": 64.0}},
	}}
	got, defaults := map[string]float64{}, map[string]float64{}
	collectBounds(schema, "", "", got, defaults)
	want := fmt.Sprint(map[string]float64{"title maxLength": 10, "tags maxItems": 3, "tags[] maxLength": 64})
	if fmt.Sprint(got) != want {
		t.Fatalf("bounds found: %v, want %s", got, want)
	}
	if _, ok := defaults["title maxLength"]; ok || strings.Contains(fmt.Sprint(defaults), "tags[]") {
		t.Errorf("title and tags have no default length, got %v", defaults)
	}
}

// TestListedSchemasLeaveOutOnlyTheDefault: tools/list shows no maxLength
// of DefaultStringBytes (the server's instructions state it once), and
// the schema the checker enforces, rebuilt from the listed one, is
// exactly the schema with every bound generation gave: nothing the
// listing leaves out goes unenforced, and nothing else is left out.
func TestListedSchemasLeaveOutOnlyTheDefault(t *testing.T) {
	s, _ := build(Options{Toolsets: EveryToolset(), inferSchemas: true})
	if len(s.schemas.inferred) < 80 {
		t.Fatalf("%d tools inferred, want every tool (80+)", len(s.schemas.inferred))
	}
	dflt := fmt.Sprintf(`"maxLength":%d,`, DefaultStringBytes)
	restored := 0
	for _, name := range slices.Sorted(maps.Keys(s.schemas.inferred)) {
		e := s.schemas.inferred[name]
		if strings.Contains(string(e.Advertised), dflt) || strings.Contains(string(e.Advertised), strings.TrimSuffix(dflt, ",")+"}") {
			t.Errorf("%s: tools/list shows the default bound: %s", name, e.Advertised)
		}
		var listed, bounded map[string]any
		if err := json.Unmarshal(e.Advertised, &listed); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(e.bounded, &bounded); err != nil {
			t.Fatalf("%s: no bounded schema recorded: %v", name, err)
		}
		restored += strings.Count(string(e.bounded), strings.TrimSuffix(dflt, ","))
		enforced := enforcedSchema(listed, nil)
		if got, want := mustJSON(t, enforced), mustJSON(t, bounded); got != want {
			t.Errorf("%s: enforced\n%s\nwant every bound generation gave\n%s", name, got, want)
		}
	}
	if restored < 150 {
		t.Errorf("%d default bounds restored; the tools have more than 150", restored)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
