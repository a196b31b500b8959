package mcpserver

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type limitsProbe struct {
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`
	Limit *int     `json:"limit,omitempty"`
	Inner *struct {
		Name string `json:"name"`
	} `json:"inner,omitempty"`
}

// probeLimits is a limits declaration as a domain writes one.
type probeLimits struct {
	Title, Tags vp.Limit
	Rest        vp.Limits
}

// TestLimitsNameArguments: a limit on a name that is no argument, that
// does not fit the argument's type, that names no field or is declared
// twice, and a declaration with no limit, fail schema generation instead
// of advertising nothing; the full (validated) schema never carries limits.
func TestLimitsNameArguments(t *testing.T) {
	ok := probeLimits{Title: vp.MaxBytes("title", 10), Tags: vp.MaxItems("tags", 3, 5),
		Rest: vp.Limits{vp.Between("limit", 1, 200), vp.MaxBytes("inner.name", 7)}}
	e, err := inferSchema[limitsProbe](ok, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"maxLength":10`, `"maxItems":3`, `"maxLength":5`, `"minimum":1`, `"maximum":200`, `"maxLength":7`} {
		if !strings.Contains(string(e.Advertised), want) {
			t.Errorf("advertised schema has no %s: %s", want, e.Advertised)
		}
	}
	if strings.Contains(string(e.Schema), "max") {
		t.Errorf("the validated schema carries limits: %s", e.Schema)
	}
	for _, bad := range []any{
		vp.MaxBytes("titel", 10),
		vp.MaxBytes("inner.nmae", 10),
		vp.MaxBytes("title[]", 10),
		vp.MaxItems("title", 3, 0),
		vp.MaxBytes("tags", 3),
		vp.MaxBytes("limit", 3),
		vp.MaxItems("inner", 3, 0),
		vp.Limits{vp.MaxBytes("title", 10), vp.MaxBytes("title", 12)},
		probeLimits{Title: vp.MaxBytes("title", 10)}, // Tags declared, left zero
		struct{ X int }{},                            // no limit at all
	} {
		if _, err := inferSchema[limitsProbe](bad, false); err == nil {
			t.Errorf("limits %v: no error", bad)
		}
	}
}
