package message_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/message"
)

// A name nobody has used is delivered (the peer may not have started) but
// flagged, with the known peers; a name with a profile, a sent message or
// one waiting is not.
func TestSendFlagsNamesNobodyHasUsed(t *testing.T) {
	eachBackend(t, func(t *testing.T, svc *services) {
		alice, carol := as("acme", "alice"), as("acme", "carol")
		if _, err := svc.SetSummary(ctx(), as("acme", "bob"), "", "bob-main", "reviewing"); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Send(ctx(), carol, message.SendInput{Channel: "alice", Content: "hi"}); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			channel string
			unknown []string
		}{
			{"bob", nil},               // a profile
			{"carol", nil},             // has sent a message
			{"bbo", []string{"bbo"}},   // a typo
			{"dave", []string{"dave"}}, // not started yet
			{"dave", nil},              // one waiting now
			{"bob,erin,bob,frank", []string{"erin", "frank"}},
			{"alice", nil}, // oneself
		} {
			res, err := svc.Send(ctx(), alice, message.SendInput{Channel: c.channel, Content: "x"})
			if err != nil {
				t.Fatalf("%s: %v", c.channel, err)
			}
			if strings.Join(res.UnknownRecipients, ",") != strings.Join(c.unknown, ",") {
				t.Errorf("%s: unknownRecipients %v, want %v", c.channel, res.UnknownRecipients, c.unknown)
			}
			if (res.Warning != "") != (len(c.unknown) > 0) {
				t.Errorf("%s: warning %q", c.channel, res.Warning)
			}
			if len(c.unknown) > 0 && (!strings.Contains(res.Warning, "known peers: bob") || !strings.Contains(res.Warning, c.unknown[0])) {
				t.Errorf("%s: warning %q should name %s and list the known peers", c.channel, res.Warning, c.unknown[0])
			}
		}
	})
}
