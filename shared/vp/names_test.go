package vp_test

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestCheckNameRefusesSpoofableNames: identity fields display as what they
// are — no bidi controls, invisible or control characters — while names in
// any script stay accepted.
func TestCheckNameRefusesSpoofableNames(t *testing.T) {
	cases := []struct {
		name, v string
		ok      bool
		want    string // in the error
	}{
		{"plain", "alice", true, ""},
		{"instance", "sigma-vps-01", true, ""},
		{"accented", "josé", true, ""},
		{"other script", "Алиса", true, ""},
		{"inner space", "alice smith", true, ""},
		{"right-to-left override", "user\u202Egnp.exe", false, "formatting"},
		{"left-to-right isolate", "a\u2066b", false, "formatting"},
		{"right-to-left mark", "a\u200Fb", false, "formatting"},
		{"zero-width space", "ali\u200Bce", false, "formatting"},
		{"zero-width joiner", "ali\u200Dce", false, "formatting"},
		{"BOM", "\uFEFFalice", false, "formatting"},
		{"NUL", "a\x00b", false, "NUL"},
		{"newline", "alice\nbob", false, "control"},
		{"DEL", "a\x7fb", false, "control"},
		{"C1 control", "a\u0085b", false, "control"},
		{"no-break space", "alice\u00a0", false, "spaces"},
		{"ideographic space", "a\u3000b", false, "spaces"},
		{"line separator", "a\u2028b", false, "spaces"},
		{"leading space", " alice", false, "start or end"},
		{"trailing space", "alice ", false, "start or end"},
		{"key separator", "a#b", false, "'#'"},
		{"channel separator", "a,b", false, "','"},
		{"private use", "a\uE000b", false, "private-use"},
		{"non-character", "a\uFFFFb", false, "non-characters"},
		{"replacement character", "a\uFFFDb", false, "non-characters"},
		{"too long", strings.Repeat("a", vp.MaxNameBytes+1), false, "64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := vp.CheckName("op", "from", c.v, true)
			if c.ok {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !vp.IsKind(err, vp.KindInvalid) && !vp.IsKind(err, vp.KindTooLarge) {
				t.Fatalf("got %v, want a refusal", err)
			}
			if msg := err.Error(); !strings.Contains(msg, "from") || !strings.Contains(msg, c.want) {
				t.Errorf("error %q does not name the field and %q", msg, c.want)
			}
			if strings.ContainsRune(err.Error(), '\u202E') {
				t.Errorf("error echoes the override itself: %q", err)
			}
		})
	}
}
