package mcpserver

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// tool is the definition of one MCP tool, given to add with its handler
// (whose type parameter is the tool's input type): everything tools/list
// says about the tool is declared here, once.
type tool struct {
	Name string
	// Title is the tool's short human name, shown by hosts in place of
	// Name (tools/list "title"); every tool has one (TestToolsHaveTitles).
	Title string
	// Core puts the tool in the core profile (toolsets.go) and makes
	// tools/list declare its outputSchema, inferred from the handler's
	// result type (schemas.go): the everyday tools are the ones hosts
	// and clients check results of, and only their schemas fit the budget.
	Core bool
	// ResultOf names the core tool whose outputSchema spells out the
	// result type this core tool shares with it (get_task for the task
	// writers): this one's lists the required members only. The same 29
	// task members written out for five tools cost ~800 tokens of every
	// tools/list; the result still matches (TestResultOfNamesTheFullSchema).
	ResultOf    string
	Annotations *mcp.ToolAnnotations
	Description string
	// Limits are the bounds the domain enforces on the arguments, shown to
	// the model in the advertised input schema: the domain input type's
	// limits declaration, read by vp.LimitsOf. See applyLimits.
	Limits any
	// Marker maps the tool's JSON result to the UI marker (§15.3) appended
	// to its text when Options.EmitUIMarkers is set (uimarkers.go); false:
	// no marker. Nil for the tools that emit none.
	Marker markerFunc
	// UI names the MCP Apps view (a uimarker kind, resources.go) that
	// renders the tool's result: tools/list links it as _meta.ui.resourceUri.
	UI string
}

// A tool's limits are the limits declaration of the domain input type its
// arguments decode into (vp.LimitsOf), or, for an argument the domain does
// not bound, a vp.Limit written in the tool.
// A limit on a field that is no argument, a bound that does not fit the
// argument's type, or two limits on one field fail schema generation
// (TestSchemaFile), so a typo cannot silently advertise nothing.
//
// The bounds go into the advertised (lean) schema only, never into the
// full schema arguments are validated against: an oversize argument must
// still reach the domain, whose error names the field and the limit in
// its own words ("is 600 bytes; the limit is 512 bytes").
// GitHub's bounds: owner (39) / name (100); a URL as browsers keep it.
const (
	maxRepoBytes = 140
	maxURLBytes  = 2048
)

// MaxCursorBytes bounds a list cursor: a signed, base64 form of a few
// store keys, each made of bounded ids and key texts.
const MaxCursorBytes = 4 << 10

// defaultLengths bounds, by argument name, the string arguments a tool's
// Limits leave out: identifiers, enums, cursors and the few texts whose
// name means one thing in every tool. Every string argument (and string
// array item) of every tool gets a maxLength — from its tool's Limits or
// from here — or schema generation fails: no argument is unbounded, and
// decodeArgs enforces each one (decode.go). A name that means different
// things in different tools ("name") is not here: its tools give it.
var defaultLengths = map[string]int{
	// identities and ids
	"orchestratorId": vp.MaxNameBytes, "orchestrator": vp.MaxNameBytes, "callerOrchestrator": vp.MaxNameBytes,
	"createdBy": vp.MaxNameBytes, "assignedTo": vp.MaxNameBytes, "assignedToInstance": vp.MaxNameBytes,
	"from": vp.MaxNameBytes, "to": vp.MaxNameBytes, "recipient": vp.MaxNameBytes, "fulfilledBy": vp.MaxNameBytes,
	"requestedBy": vp.MaxNameBytes, "tenantId": vp.MaxNameBytes, "instanceId": vp.MaxNameBytes,
	"taskId": vp.MaxNameBytes, "taskIds": vp.MaxNameBytes, "callerInstance": vp.MaxNameBytes,
	"fromInstanceId": vp.MaxNameBytes, "recipientInstanceId": vp.MaxNameBytes, "receiptIds": vp.MaxNameBytes, "targetId": vp.MaxNameBytes, "userId": vp.MaxNameBytes, "pilot": vp.MaxNameBytes, "dependsOn": vp.MaxNameBytes, "missionId": vp.MaxNameBytes,
	"mandateId": vp.MaxNameBytes, "recurringTaskId": vp.MaxNameBytes, "patternId": vp.MaxNameBytes,
	"buId": vp.MaxNameBytes, "messageId": vp.MaxNameBytes, "memoryId": vp.MaxNameBytes, "linkedMemoryIds": vp.MaxNameBytes,
	"noteId": vp.MaxNameBytes, "sessionId": vp.MaxNameBytes, "episodeId": vp.MaxNameBytes, "errorId": vp.MaxNameBytes,
	"issueId": vp.MaxNameBytes, "watcher": vp.MaxNameBytes, "verifiedBy": vp.MaxNameBytes, "fixedBy": vp.MaxNameBytes,
	"commitSha": vp.MaxNameBytes, "componentId": vp.MaxNameBytes, "templateId": vp.MaxNameBytes, "deployment": vp.MaxNameBytes,
	// enums, dates and other short codes
	"status": vp.MaxNameBytes, "priority": vp.MaxNameBytes, "severity": vp.MaxNameBytes, "type": vp.MaxNameBytes,
	"fields": vp.MaxNameBytes, "source": vp.MaxNameBytes, "date": vp.MaxNameBytes, "ttl": vp.MaxNameBytes, "tool": vp.MaxNameBytes,
	"cursor": MaxCursorBytes, "repo": maxRepoBytes, "prUrl": maxURLBytes,
	// texts that mean the same in every tool
	"namespace": vp.MaxNamespaceBytes, "query": vp.MaxQueryBytes, "project": vp.MaxProjectBytes,
	"channel": vp.MaxChannelBytes, "topic": vp.MaxShortTextBytes, "team": vp.MaxShortTextBytes,
	"category": vp.MaxShortTextBytes, "completionNoteTemplate": vp.MaxCompletionNoteBytes,
	"agents": vp.MaxComponentNameBytes, "skills": vp.MaxComponentNameBytes, "hooks": vp.MaxComponentNameBytes,
	"plugins": vp.MaxComponentNameBytes,
}

// applyLimits writes the limits declaration decl into the lean schema of
// a tool, then bounds every string argument it leaves out (defaultLengths).
func applyLimits(schema map[string]any, decl any) error {
	lim := vp.LimitsOf(decl)
	if decl != nil && len(lim) == 0 {
		return fmt.Errorf("limits: a %T declares no limits", decl)
	}
	if err := applyExplicit(schema, lim); err != nil {
		return err
	}
	return boundStrings(schema)
}

// boundStrings gives each string node under schema without a maxLength
// the default length of its argument's name.
func boundStrings(schema map[string]any) error {
	return eachString(schema, "", "", func(node map[string]any, path, name string) error {
		if _, ok := node["maxLength"]; ok {
			return nil
		}
		n, ok := defaultLengths[name]
		if !ok {
			return fmt.Errorf("limits: %s: a string argument without a maxLength: give it one in the tool's Limits", path)
		}
		node["maxLength"] = n
		return nil
	})
}

// eachString calls fn on every node under node that holds a string: a
// string argument, array entry or map value, or an argument of any type
// (a status: one or an array of them), which maxLength bounds when it is
// a string and decodeArgs applies to the strings of an array too. path
// is in limits syntax; name is the argument's name.
func eachString(node map[string]any, path, name string, fn func(node map[string]any, path, name string) error) error {
	typ, _ := node["type"].(string)
	if _, typed := node["type"]; !typed && node["properties"] == nil && path != "" {
		typ = "string"
	}
	if typ == "string" {
		return fn(node, path, name)
	}
	if items, ok := node["items"].(map[string]any); ok {
		if err := eachString(items, path+"[]", name, fn); err != nil {
			return err
		}
	}
	props, _ := node["properties"].(map[string]any)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		child, ok := props[k].(map[string]any)
		if !ok { // the schema true (a Go any without a description): an object can carry the bound
			child = map[string]any{}
			props[k] = child
		}
		p := k
		if path != "" {
			p = path + "." + k
		}
		if err := eachString(child, p, k, fn); err != nil {
			return err
		}
	}
	if extra, ok := node["additionalProperties"].(map[string]any); ok {
		if err := eachString(extra, path+".*", name, fn); err != nil {
			return err
		}
	}
	return nil
}

// DefaultStringBytes is the bound of every string argument or array
// entry that tools/list shows without a maxLength: ids, names and enum
// words, two thirds of all string arguments. The server's instructions
// state it once (statedBoundsNote) rather than every schema repeating
// "maxLength":64, ~800 tokens of each tools/list; the checker enforces
// it all the same (enforcedSchema).
const DefaultStringBytes = vp.MaxNameBytes

// statedBounds are the bounds tools/list leaves to the server's
// instructions (statedBoundsNote), by argument name ("": any other
// string): the default above, and the bounds of the arguments that mean
// one thing in every tool (defaultLengths), which twenty tools would
// otherwise each repeat. A bound that differs from these is listed. (The
// paging limit's 1..200 stays listed: it is advice, clamped rather than
// enforced, and the search tools' limit shows none.)
var statedBounds = map[string]int{
	"": DefaultStringBytes, "cursor": MaxCursorBytes, "namespace": vp.MaxNamespaceBytes, "query": vp.MaxQueryBytes,
	"project": vp.MaxProjectBytes, "channel": vp.MaxChannelBytes, "topic": vp.MaxShortTextBytes,
	"team": vp.MaxShortTextBytes, "category": vp.MaxShortTextBytes, "repo": maxRepoBytes,
}

// statedBoundsNote says statedBounds in the server's instructions.
func statedBoundsNote() string {
	var named []string
	for _, name := range slices.Sorted(maps.Keys(statedBounds)) {
		if name != "" {
			named = append(named, name+" "+strconv.Itoa(statedBounds[name]))
		}
	}
	return "A string argument or array entry without maxLength is at most " + strconv.Itoa(DefaultStringBytes) +
		" bytes, or if named so: " + strings.Join(named, ", ") + "."
}

// eachStated calls fn on every string node with its stated maxLength.
func eachStated(schema map[string]any, fn func(node map[string]any, stated int)) {
	_ = eachString(schema, "", "", func(node map[string]any, _, name string) error {
		n, ok := statedBounds[name]
		if !ok {
			n = statedBounds[""]
		}
		fn(node, n)
		return nil
	})
}

// unlistStatedBounds takes the stated bounds out of a schema for
// tools/list.
func unlistStatedBounds(schema map[string]any) {
	eachStated(schema, func(node map[string]any, stated int) {
		if n, ok := number(node["maxLength"]); ok && n == stated {
			delete(node, "maxLength")
		}
	})
}

// enforcedSchema is the listed schema of a tool with every bound the
// checker enforces: its compatibility arguments (hidden, with their
// maxLength) and the stated bounds where it shows none.
func enforcedSchema(listed map[string]any, hidden map[string]int) map[string]any {
	if props, ok := listed["properties"].(map[string]any); ok {
		for name, ml := range hidden {
			props[name] = map[string]any{"maxLength": float64(ml)}
		}
	}
	eachStated(listed, func(node map[string]any, stated int) {
		if _, ok := node["maxLength"]; !ok {
			node["maxLength"] = float64(stated)
		}
	})
	return listed
}

// number reads a bound written by the generator (int) or decoded from
// JSON (float64).
func number(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case float64:
		return int(n), n == float64(int(n))
	}
	return 0, false
}

// applyExplicit writes lim into the lean schema of a tool.
func applyExplicit(schema map[string]any, lim vp.Limits) error {
	lim = slices.Clone(lim)
	slices.SortStableFunc(lim, func(a, b vp.Limit) int { return strings.Compare(a.Field, b.Field) })
	for i, l := range lim {
		if l.Field == "" {
			return fmt.Errorf("limits: a %+v bound names no field", l)
		}
		if i > 0 && lim[i-1].Field == l.Field {
			return fmt.Errorf("limits: %s: two limits", l.Field)
		}
		node, err := schemaAt(schema, l.Field)
		if err != nil {
			return fmt.Errorf("limits: %w", err)
		}
		typ, _ := node["type"].(string)
		switch {
		case l.Items > 0 && typ == "array":
			node["maxItems"] = l.Items
			if l.Bytes == 0 {
				break
			}
			items, _ := node["items"].(map[string]any)
			if t, _ := items["type"].(string); t != "string" {
				return fmt.Errorf("limits: %s: a byte bound on entries that are not strings", l.Field)
			}
			items["maxLength"] = l.Bytes
		case l.Bytes > 0 && l.Items == 0 && !l.Range && typ == "string":
			node["maxLength"] = l.Bytes
		case l.Range && l.Bytes == 0 && l.Items == 0 && (typ == "integer" || typ == "number"):
			node["minimum"], node["maximum"] = l.Min, l.Max
		default:
			return fmt.Errorf("limits: %s: a %+v bound does not fit an argument of type %q", l.Field, l, typ)
		}
	}
	return nil
}

// schemaAt finds the schema of the argument at path (see limits).
func schemaAt(schema map[string]any, path string) (map[string]any, error) {
	node := schema
	for seg := range strings.SplitSeq(path, ".") {
		if seg == "*" {
			child, ok := node["additionalProperties"].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: not a map", path)
			}
			node = child
			continue
		}
		name, items := strings.CutSuffix(seg, "[]")
		props, _ := node["properties"].(map[string]any)
		child, ok := props[name].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %q is not an argument", path, name)
		}
		if items {
			if child, ok = child["items"].(map[string]any); !ok {
				return nil, fmt.Errorf("%s: %q is not an array", path, name)
			}
		}
		node = child
	}
	return node, nil
}
