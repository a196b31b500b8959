package keysdoc

import (
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../KEYS.md from the declarations")

// TestKeysFile: KEYS.md is what the declarations say.
func TestKeysFile(t *testing.T) {
	got := Render(All())
	if *update {
		if err := os.WriteFile("../KEYS.md", []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("../KEYS.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Fatal("shared/store/KEYS.md is stale: run go generate ./shared/store/keysdoc")
	}
}
