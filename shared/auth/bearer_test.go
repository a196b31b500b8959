package auth_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/auth"
)

func TestParseBearer(t *testing.T) {
	for _, c := range []struct {
		header, secret string
		ok             bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER abc", "abc", true},
		{"bEaReR abc", "abc", true},
		{"Bearer   abc  ", "abc", true},
		{"  Bearer abc", "abc", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Basic abc", "", false},
		{"Bearerabc", "", false},
		{"", "", false},
	} {
		secret, ok := auth.ParseBearer(c.header)
		if secret != c.secret || ok != c.ok {
			t.Errorf("ParseBearer(%q) = %q, %v; want %q, %v", c.header, secret, ok, c.secret, c.ok)
		}
	}
}
