package hostconfig_test

import (
	"path/filepath"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/hostconfig"
)

// TestCommandNameIsRunnable: the binary as the user can run it again
// from wd: a bare name stays (the shell found it in PATH), a path under
// wd becomes ./rel, any other its absolute path.
func TestCommandNameIsRunnable(t *testing.T) {
	base := t.TempDir()
	wd := filepath.Join(base, "vp")
	dot := "." + string(filepath.Separator)
	for _, c := range []struct{ arg0, want string }{
		{"vantagepeers", "vantagepeers"},
		{filepath.FromSlash("./bin/vantagepeers"), dot + filepath.FromSlash("bin/vantagepeers")},
		{filepath.FromSlash("bin/vantagepeers"), dot + filepath.FromSlash("bin/vantagepeers")},
		{filepath.Join(wd, "bin", "vantagepeers"), dot + filepath.FromSlash("bin/vantagepeers")},
		{filepath.Join(base, "elsewhere", "vantagepeers"), filepath.Join(base, "elsewhere", "vantagepeers")},
		{filepath.FromSlash("../other/vantagepeers"), filepath.Join(base, "other", "vantagepeers")},
	} {
		if got := hostconfig.CommandName(c.arg0, wd); got != c.want {
			t.Errorf("CommandName(%q, %q) = %q, want %q", c.arg0, wd, got, c.want)
		}
	}
}
