package fingerprint_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
)

var messageCases = []struct{ name, in, want string }{
	{"convex id", "User not found: k57ejhd9x8wv0d7kz0rxm0bf8s6wd3r1", "User not found: <id>"},
}

func TestMessage(t *testing.T) {
	for _, c := range messageCases {
		t.Run(c.name, func(t *testing.T) {
			if got := fingerprint.Message(c.in); got != c.want {
				t.Errorf("Message(%q)\n got  %q\n want %q", c.in, got, c.want)
			}
		})
	}
}
