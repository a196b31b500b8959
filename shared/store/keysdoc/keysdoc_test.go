package keysdoc

import (
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
)

// TestGlobalIndexRow: a global index of tenant data is shown without the
// tenant prefix, the rest of the table with it.
func TestGlobalIndexRow(t *testing.T) {
	got := Render([]table.Doc{{Entity: "job", Keys: []table.Key{
		{PK: "JOB#{id}", SK: "JOB", Pattern: "job"},
		{Index: store.GSI2, Global: true, PK: "DUE", SK: "{at}#{tenant}#{id}", Pattern: "due jobs"},
	}}})
	for _, want := range []string{"| job | table | `T#t#JOB#<id>` | `JOB` |", "| due jobs | gsi2 | `DUE` | `<at>#<tenant>#<id>` |"} {
		if !strings.Contains(got, want) {
			t.Fatalf("KEYS.md lacks %q", want)
		}
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
