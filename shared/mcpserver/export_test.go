package mcpserver

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/businessunit"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/digest"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/mission"
	"github.com/vantagepeers/vantagepeers/shared/okfsvc"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/recurring"
	"github.com/vantagepeers/vantagepeers/shared/reservation"
	"github.com/vantagepeers/vantagepeers/shared/task"
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

// EveryToolset is every capability's tools over zero services, for the
// tests that read tools/list and never call a tool (schemas, limits).
func EveryToolset() []Toolset {
	return []Toolset{
		BriefingTools(&briefing.Service{}), ComponentTools(&component.Service{}), BusinessUnitTools(&businessunit.Service{}),
		DiaryTools(&diary.Service{}), ProfileTools(&profile.Service{}), MessageTools(&message.Service{}),
		MandateTools(&mandate.Service{}), MemoryTools(&memory.Service{}), IframeTools(&iframe.Service{}),
		TaskTools(&task.Service{}), MissionTools(&mission.Service{}), RecurringTools(&recurring.Service{}),
		KeywordTools(&keyword.Service{}), DigestTools(&digest.Service{}), IssueTools(&issue.Service{}, &memory.Service{}),
		ErrorTools(&errormon.Service{}), OKFTools(&okfsvc.Service{}, nil), ActivityTools(&activity.Service{}),
		ReservationTools(&reservation.Service{}),
	}
}

// EnforcedSchemas are the input schemas the checker enforces, by tool:
// schemas.json's listed schemas with every bound they leave unlisted.
func EnforcedSchemas() (map[string]map[string]any, error) {
	var entries map[string]schemaEntry
	if err := json.Unmarshal(schemaFile, &entries); err != nil {
		return nil, err
	}
	out := map[string]map[string]any{}
	for name, e := range entries {
		var listed map[string]any
		if err := json.Unmarshal(e.Advertised, &listed); err != nil {
			return nil, err
		}
		out[name] = enforcedSchema(listed, e.Hidden)
	}
	return out, nil
}

// StatedBounds are the string bounds tools/list leaves to the server's
// instructions, by argument name ("": any other).
func StatedBounds() map[string]int { return maps.Clone(statedBounds) }
