package httpapi_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/httpapi"
)

func TestMuxPatterns(t *testing.T) {
	for _, tc := range []struct {
		r    httpapi.Route
		want string
	}{
		{httpapi.Route{Path: "/mcp"}, "/mcp"},
		{httpapi.Route{Path: "/oauth/{proxy+}"}, "/oauth/"},
		{httpapi.Route{Path: "/health", Methods: []string{"GET"}}, "GET /health"},
		{httpapi.Route{Path: "/x", Methods: []string{"GET", "POST"}}, "GET /x,POST /x"},
		{httpapi.Route{Path: "/webhooks/github/{tenant}", Methods: []string{"POST"}}, "POST /webhooks/github/{tenant}"},
	} {
		if got := strings.Join(tc.r.MuxPatterns(), ","); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}
