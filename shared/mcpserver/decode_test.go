package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// fuzzIn exercises every shape decodeArgs handles: required and optional
// strings, identities, numbers, arrays, nested objects, maps and any.
type fuzzIn struct {
	Title     string            `json:"title"`
	CreatedBy string            `json:"createdBy,omitempty"`
	Note      *string           `json:"note,omitempty"`
	Count     int               `json:"count,omitempty"`
	Tags      []string          `json:"tags"`
	Nested    *fuzzNested       `json:"nested,omitempty"`
	Context   map[string]string `json:"context,omitempty"`
	Status    any               `json:"status,omitempty"`
}

type fuzzNested struct {
	Type  string  `json:"type"`
	Score float64 `json:"score,omitempty"`
}

func fuzzSchema(t testing.TB) *toolSchema {
	lim := vp.Limits{vp.MaxBytes("title", 32), vp.MaxBytes("note", 16), vp.MaxBytes("tags[]", 8), vp.MaxBytes("nested.type", 8), vp.MaxBytes("context.*", 8)}
	e, err := inferSchema[fuzzIn](lim, false)
	if err != nil {
		t.Fatal(err)
	}
	return &toolSchema{tool: "fuzz_tool", description: `Example: {"title":"a title","tags":["x"]}`, full: e.Schema, advertised: e.Advertised}
}

// FuzzDecodeArgs throws arbitrary argument text — nulls, surrogate
// escapes, deep nesting — at decodeArgs: it never panics; every refusal is
// a *vp.Error of kind invalid or too_large that shows no Go internals; and
// what it accepts holds no U+FFFD the sender did not send, no string over
// its limit, and a required field present.
func FuzzDecodeArgs(f *testing.F) {
	for _, seed := range []string{
		`{}`, `null`, `[]`, `"x"`, `{"title":null,"tags":null}`, `{"title":"t","tags":[]}`,
		`{"title":"t","tags":[null]}`, `{"title":"t","tags":[],"note":null,"nested":null}`,
		`{"title":"a\ud800b","tags":[]}`, `{"title":"\udc00","tags":[]}`, `{"title":"\ud83d\ude00","tags":[]}`,
		`{"title":"\ud83d\u0041","tags":[]}`, `{"title":"t","tags":["\ud800"]}`, `{"\ud800":1}`,
		`{"title":"t","tags":[],"status":` + strings.Repeat("[", 70) + strings.Repeat("]", 70) + `}`,
		`{"title":"t","tags":[],"nested":{"type":null,"score":1e400}}`, `{"title":"t","tags":[],"count":1.5}`,
		`{"title":"t","tags":[],"count":1e300}`, `{"title":"t","tags":[],"context":{"k":null,"j":"\u0000"}}`,
		`{"title":"t","tags":[],"createdBy":"a\u202eb"}`, `{"titel":"t"}`, `{"title":"t","tags":[],"x":{"y":[`,
		`{"title":"` + strings.Repeat("a", 33) + `","tags":[]}`, `{"title":"t\\","tags":[]}`, `{"title":"\u`, `{"a":"\ud800\`,
	} {
		f.Add(seed)
	}
	ts := fuzzSchema(f)
	f.Fuzz(func(t *testing.T, raw string) {
		in, err := decodeArgs[fuzzIn](ts, json.RawMessage(raw))
		if err != nil {
			var e *vp.Error
			if !asVPError(err, &e) || (e.Kind != vp.KindInvalid && e.Kind != vp.KindTooLarge) {
				t.Fatalf("%q: %T %v, want an invalid or too_large *vp.Error", raw, err, err)
			}
			for _, leak := range []string{"reflect", "jsonschema", "json:", "unmarshal", "Go value", "main."} {
				if strings.Contains(err.Error(), leak) {
					t.Fatalf("%q: error shows internals: %v", raw, err)
				}
			}
			return
		}
		if in.Title == "" && !strings.Contains(raw, `"title"`) {
			t.Fatalf("%q: accepted without the required title", raw)
		}
		sentFFFD := strings.Contains(raw, "\uFFFD") || strings.Contains(strings.ToLower(raw), `\ufffd`) || !utf8.ValidString(raw)
		for _, s := range append([]string{in.Title, in.CreatedBy}, in.Tags...) {
			if strings.ContainsRune(s, utf8.RuneError) && !sentFFFD {
				t.Fatalf("%q: accepted, and %q holds U+FFFD it was not sent", raw, s)
			}
			if strings.ContainsRune(s, 0) {
				t.Fatalf("%q: accepted a NUL", raw)
			}
		}
		if len(in.Title) > 32 || (in.Note != nil && len(*in.Note) > 16) {
			t.Fatalf("%q: accepted over the limit", raw)
		}
		for _, tag := range in.Tags {
			if len(tag) > 8 {
				t.Fatalf("%q: accepted a tag over the limit", raw)
			}
		}
		if vp.NameProblem(in.CreatedBy) != "" {
			t.Fatalf("%q: accepted createdBy %q", raw, in.CreatedBy)
		}
	})
}

func asVPError(err error, e **vp.Error) bool {
	x, ok := err.(*vp.Error)
	*e = x
	return ok
}

// TestScanJSON: ScanJSON finds lone surrogates and depth, with the path,
// and nothing in what a decoder reads faithfully.
func TestScanJSON(t *testing.T) {
	cases := []struct {
		name, in  string
		path, bad string
		depth     int
	}{
		{"clean", `{"a":"b","c":[1,{"d":"\u00e9\ud83d\ude00"}]}`, "", "", 0},
		{"lone high", `{"a":"x\ud800y"}`, "a", `\ud800`, 0},
		{"lone low", `{"a":["ok","\uDFFF"]}`, "a[1]", `\uDFFF`, 0},
		{"high then high", `{"a":{"b":"\ud800\ud800"}}`, "a.b", `\ud800`, 0},
		{"high at the end", `{"a":"\ud800"}`, "a", `\ud800`, 0},
		{"escaped backslash is no escape", `{"a":"\\ud800"}`, "", "", 0},
		{"in a key", `{"\udc00":1}`, `\udc00`, `\udc00`, 0},
		{"in a later member", `{"a":"b","c":{"d":1,"e":"\udc00"}}`, "c.e", `\udc00`, 0},
		{"depth at the limit", `{"a":[[1]]}`, "", "", 0},
		{"depth over", `{"a":[[[1]]]}`, "a[0][0]", "", 3},
		{"unterminated", `{"a":"\ud8`, "", "", 0},
		{"not JSON", `}}]]"`, "", "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := ScanJSON([]byte(c.in), 3, true)
			if c.path == "" && c.bad == "" && c.depth == 0 {
				if p != nil {
					t.Fatalf("found %+v", *p)
				}
				return
			}
			if p == nil || p.Path != c.path || p.Surrogate != c.bad || p.Depth != c.depth {
				t.Fatalf("got %+v, want path %q surrogate %q depth %d", p, c.path, c.bad, c.depth)
			}
		})
	}
}

// TestClosest: an unknown argument is matched to the nearest known one.
func TestClosest(t *testing.T) {
	known := []string{"assignedTo", "createdBy", "cronExpression", "priority", "timezone", "title"}
	for in, want := range map[string]string{
		"cron": "cronExpression", "Title": "title", "prio": "priority", "asignedTo": "assignedTo",
		"timeZone": "timezone", "createdby": "createdBy", "titles": "title",
	} {
		if got := closest(in, known); got != want {
			t.Errorf("closest(%q) = %q, want %q", in, got, want)
		}
	}
}
