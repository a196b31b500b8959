package mcpserver

import (
	"strings"
	"testing"
)

type limitsProbe struct {
	Title string   `json:"title"`
	Tags  []string `json:"tags,omitempty"`
	Limit *int     `json:"limit,omitempty"`
	Inner *struct {
		Name string `json:"name"`
	} `json:"inner,omitempty"`
}

// TestLimitsNameArguments: a limit on a name that is no argument, or that
// does not fit the argument's type, fails schema generation instead of
// advertising nothing; the full (validated) schema never carries limits.
func TestLimitsNameArguments(t *testing.T) {
	ok := limits{"title": maxLen(10), "tags": maxItems(3), "tags[]": maxLen(5), "limit": between(1, 200), "inner.name": maxLen(7)}
	e, err := inferSchema[limitsProbe](ok)
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
	for _, bad := range []limits{
		{"titel": maxLen(10)},
		{"inner.nmae": maxLen(10)},
		{"title[]": maxLen(10)},
		{"title": maxItems(3)},
		{"tags": maxLen(3)},
		{"limit": maxLen(3)},
	} {
		if _, err := inferSchema[limitsProbe](bad); err == nil {
			t.Errorf("limits %v: no error", bad)
		}
	}
}
