package mcpserver

import (
	"bytes"
	"encoding/json"
	"slices"
)

// InferredSchemas builds the full server with every input schema inferred
// by reflection and returns them as schemas.json holds them.
func InferredSchemas(o Options) ([]byte, error) {
	o.inferSchemas = true
	s, _ := build(o)
	// One tool per line: compact enough to load fast, and diffs name the
	// tools whose arguments changed.
	var b bytes.Buffer
	b.WriteString("{\n")
	names := make([]string, 0, len(s.schemas.inferred))
	for name := range s.schemas.inferred {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		k, _ := json.Marshal(name)
		v, err := json.Marshal(s.schemas.inferred[name])
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
		if i < len(names)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}")
	return b.Bytes(), nil
}
