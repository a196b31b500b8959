package mcpserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
)

var update = flag.Bool("update", false, "rewrite schemas.json from the tools' argument types")

// TestSchemaFile: schemas.json holds, for every tool, the schema inferred
// from its argument type today — a stale file fails here (run
// go generate ./shared/mcpserver).
func TestSchemaFile(t *testing.T) {
	// Services are only registered, never called: zero values will do.
	got, err := mcpserver.InferredSchemas(mcpserver.Options{Toolsets: mcpserver.EveryToolset()})
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile("schemas.json", got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile("schemas.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("schemas.json is stale: run go generate ./shared/mcpserver")
	}
	var entries map[string]struct {
		Schema json.RawMessage `json:"schema"`
	}
	if err := json.Unmarshal(want, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) < 80 {
		t.Fatalf("schemas.json has %d tools, want every tool (80+)", len(entries))
	}
	for name, e := range entries {
		// decodeArgs does not apply defaults: arguments decode as sent.
		if strings.Contains(string(e.Schema), `"default"`) {
			t.Errorf("%s: the schema has a default, which decodeArgs would not apply", name)
		}
	}
}
