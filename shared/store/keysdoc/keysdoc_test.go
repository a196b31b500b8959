package keysdoc

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
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

// TestRenderKeys: the tenant prefix is shown on tenant partition keys only,
// never on a sort key or a global key.
func TestRenderKeys(t *testing.T) {
	got := Render([]table.Doc{
		{Entity: "widget", Keys: []table.Key{{Index: store.Primary, PK: "W#{id}", SK: "W", Pattern: "widget by id"},
			{Index: store.GSI1, PK: "WS", SK: "{at}#{id}", Pattern: "widgets", Note: "sparse"}}},
		{Entity: "token", Global: true, Keys: []table.Key{{Index: store.Primary, PK: "TOK#{hash}", SK: "TOK", Pattern: "token by hash"}}},
	})
	for _, row := range []string{
		"| widget by id | table | `T#t#W#<id>` | `W` |  |\n",
		"| widgets | gsi1 | `T#t#WS` | `<at>#<id>` | sparse |\n",
		"| token by hash | table | `TOK#<hash>` | `TOK` |  |\n",
	} {
		if !strings.Contains(got, row) {
			t.Errorf("KEYS.md lacks the row %q", row)
		}
	}
}
