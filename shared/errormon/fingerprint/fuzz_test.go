package fingerprint_test

import (
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint"
	"github.com/vantagepeers/vantagepeers/shared/errormon/fingerprint/corpus"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
)

// FuzzMessage: Message never panics, is idempotent (a stored message
// parameterised again is the same message, so a group's text is a fixed
// point) and bounded.
func FuzzMessage(f *testing.F) {
	for _, c := range messageCases {
		f.Add(c.in)
	}
	for _, e := range corpus.Generate(1, 1) {
		f.Add(e.Message)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m := fingerprint.Message(s)
		if len(m) > 1024 {
			t.Fatalf("Message(%q) is %d bytes", s, len(m))
		}
		if again := fingerprint.Message(m); again != m {
			t.Fatalf("not idempotent:\n in    %q\n once  %q\n twice %q", s, m, again)
		}
	})
}

// FuzzOf: no input panics Of or TopFrame, and the parts are bounded.
func FuzzOf(f *testing.F) {
	for _, c := range frameCases {
		f.Add("fn", "", "msg", c.stack)
	}
	for _, e := range corpus.Generate(1, 1) {
		f.Add(e.Function, e.Type, e.Message, e.Stack)
	}
	f.Fuzz(func(t *testing.T, fn, typ, msg, stack string) {
		fp := fingerprint.Of(source.Event{Function: fn, Type: typ, Message: msg, Stack: stack})
		if len(fp.Hash) != 32 || len(fp.Frame) > 256 || len(fp.Function) > 256 || len(fp.Type) > 128 {
			t.Fatalf("unbounded fingerprint %+v", fp)
		}
	})
}
