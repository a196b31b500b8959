package app_test

import (
	"flag"
	"os"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/app"
	"github.com/vantagepeers/vantagepeers/shared/store/keysdoc"
)

//go:generate go test -run TestKeysFile -update .

var update = flag.Bool("update", false, "rewrite shared/store/KEYS.md from the modules' declarations")

// keysFile is KEYS.md, from this package's directory.
const keysFile = "../store/KEYS.md"

// TestKeysFile: KEYS.md is what the modules' table declarations say.
func TestKeysFile(t *testing.T) {
	got := keysdoc.Render(app.Tables())
	if *update {
		if err := os.WriteFile(keysFile, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(keysFile)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Fatal("shared/store/KEYS.md is stale: run go generate ./shared/app")
	}
}
