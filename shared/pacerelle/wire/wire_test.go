package wire

import (
	"bytes"
	"strings"
	"testing"
)

func TestValidateWidget(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     string // "" = valid; else a fragment of the error
	}{
		{"confirm", `{"type":"widget.standard","v":1,"id":"w1","kind":"confirm","spec":{"title":"Publier ?"}}`, ""},
		{"not an object", `[1]`, "must be a JSON object"},
		{"unknown field", `{"type":"widget.standard","v":1,"id":"w1","kind":"confirm","spec":{},"x":1}`, "x: unknown field"},
		{"wrong type", `{"type":"other","v":1,"id":"w1","kind":"confirm","spec":{}}`, `type: must be "widget.standard"`},
		{"version", `{"type":"widget.standard","v":2,"id":"w1","kind":"confirm","spec":{}}`, "v: must be 1"},
		{"no id", `{"type":"widget.standard","v":1,"kind":"confirm","spec":{}}`, "id: is required"},
		{"long id", `{"type":"widget.standard","v":1,"id":"` + strings.Repeat("é", MaxWidgetID+1) + `","kind":"confirm","spec":{}}`, "1 to 100 characters"},
		{"bad kind", `{"type":"widget.standard","v":1,"id":"w1","kind":"Confirm!","spec":{}}`, "kind: is required"},
		{"spec not object", `{"type":"widget.standard","v":1,"id":"w1","kind":"confirm","spec":"x"}`, "spec: is required and must be an object"},
		{"spec null", `{"type":"widget.standard","v":1,"id":"w1","kind":"confirm","spec":null}`, "spec: is required"},
		{"field of wrong type", `{"type":"widget.standard","v":"1","id":"w1","kind":"confirm","spec":{}}`, "wrong type"},
		{"too large", `{"type":"widget.standard","v":1,"id":"w1","kind":"confirm","spec":{"t":"` + strings.Repeat("a", MaxWidgetBytes) + `"}}`, "the limit is 32768"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ValidateWidget([]byte(tc.in))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "" && !bytes.Contains(out, []byte(`"kind":"confirm"`)):
				t.Fatalf("canonical form %s", out)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// FuzzValidateWidget: any input is refused or accepted without a panic,
// and an accepted widget's canonical form is accepted again unchanged.
func FuzzValidateWidget(f *testing.F) {
	f.Add([]byte(`{"type":"widget.standard","v":1,"id":"w1","kind":"confirm","spec":{"title":"Publier ?"}}`))
	f.Add([]byte(`{"type":"widget.standard","v":1,"id":"\u0000","kind":"a","spec":{"a":[1,{"b":null}]}}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := ValidateWidget(in)
		if err != nil {
			return
		}
		again, err := ValidateWidget(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("canonical %s is not stable: %s, %v", out, again, err)
		}
	})
}
