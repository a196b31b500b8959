package mcpserver

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// How arguments are checked before they decode (decodeArgs), in the
// project's words rather than a schema validator's:
//
//   - null is the same as leaving the argument out, at every level of an
//     object: a required argument given null is refused as missing, an
//     optional one given null is absent. (Array entries are not arguments:
//     a null entry is refused as the wrong type.)
//   - a missing required argument is refused naming it, what it is and an
//     example taken from the tool's description;
//   - an unknown argument is refused naming the closest known one;
//   - a string longer than its advertised maxLength (bytes) is refused
//     naming the field and the limit, before the handler runs — so no
//     argument of any tool is unbounded, whatever its domain checks;
//   - no string may hold NUL, and an identity argument (identityArgs) must
//     be a displayable name (vp.NameProblem);
//   - an escaped lone surrogate, which a JSON decoder would silently turn
//     into U+FFFD, and nesting deeper than MaxArgumentDepth are refused
//     naming the argument.

// argNode is the compiled schema of one argument: what the checker needs
// from the full (validated) schema and the advertised one (its maxLength).
type argNode struct {
	types    []string // allowed JSON types, "null" excluded; empty: any value
	desc     string
	maxLen   int
	props    map[string]*argNode
	names    []string // of props, sorted: suggestions are the same on every call
	required []string
	closed   bool     // additionalProperties: false
	extra    *argNode // additionalProperties as a schema (a map's values)
	items    *argNode
	identity bool // a name (identityArgs): vp.CheckName's characters
}

// identityArgs are the arguments that name a principal: whatever the
// domain checks, they get vp.CheckName's discipline here (no bidi
// overrides, invisible or control characters), so that no tool can store
// a name that displays as another.
var identityArgs = map[string]bool{
	"orchestratorId": true, "orchestrator": true, "callerOrchestrator": true, "createdBy": true, "assignedTo": true,
	"assignedToInstance": true, "from": true, "to": true, "recipient": true, "recipientInstanceId": true,
	"fromInstanceId": true, "instanceId": true, "fulfilledBy": true, "requestedBy": true, "watcher": true,
	"verifiedBy": true, "fixedBy": true, "participants": true, "tenantId": true, "orchestrators": true,
}

// compileArgs builds the argNode tree of full, taking maxLength from the
// matching nodes of advertised.
func compileArgs(full, advertised map[string]any) *argNode {
	n := &argNode{}
	switch t := full["type"].(type) {
	case string:
		n.types = []string{t}
	case []any:
		for _, x := range t {
			if s, _ := x.(string); s != "" && s != "null" {
				n.types = append(n.types, s)
			}
		}
	}
	n.desc, _ = full["description"].(string)
	if ml, ok := advertised["maxLength"].(float64); ok {
		n.maxLen = int(ml)
	}
	if props, ok := full["properties"].(map[string]any); ok {
		aprops, _ := advertised["properties"].(map[string]any)
		n.props = map[string]*argNode{}
		for name, p := range props {
			pm, _ := p.(map[string]any)
			am, _ := aprops[name].(map[string]any)
			child := compileArgs(pm, am)
			if identityArgs[name] {
				child.identity = true
				if child.items != nil {
					child.items.identity = true
				}
			}
			n.props[name] = child
			n.names = append(n.names, name)
		}
		slices.Sort(n.names)
	}
	for _, r := range asSlice(full["required"]) {
		if s, ok := r.(string); ok {
			n.required = append(n.required, s)
		}
	}
	switch ap := full["additionalProperties"].(type) {
	case bool:
		n.closed = !ap
	case map[string]any:
		am, _ := advertised["additionalProperties"].(map[string]any)
		n.extra = compileArgs(ap, am)
	}
	if items, ok := full["items"].(map[string]any); ok {
		am, _ := advertised["items"].(map[string]any)
		n.items = compileArgs(items, am)
	}
	return n
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

// argChecker checks the decoded arguments of one tool.
type argChecker struct {
	tool    string
	root    *argNode
	example map[string]any // the tool description's example arguments
}

// check applies the rules above to v, the decoded arguments, dropping the
// null members of its objects on the way.
func (c *argChecker) check(v any) error {
	if _, ok := v.(map[string]any); !ok {
		return vp.Errorf(c.tool, vp.KindInvalid, "", "the arguments must be a JSON object such as {\"name\": \"value\"}, got %s", jsonType(v))
	}
	return c.value(v, c.root, "")
}

func (c *argChecker) value(v any, n *argNode, path string) error {
	if len(n.types) > 0 && !slices.ContainsFunc(n.types, func(t string) bool { return isType(v, t) }) {
		return vp.Errorf(c.tool, vp.KindInvalid, path, "must be %s, got %s", typePhrase(n.types), jsonType(v))
	}
	switch x := v.(type) {
	case string:
		if n.maxLen > 0 && len(x) > n.maxLen {
			return vp.Errorf(c.tool, vp.KindTooLarge, path, "is %d bytes; the limit is %d bytes — shorten it or split it", len(x), n.maxLen)
		}
		if !utf8.ValidString(x) {
			return vp.Errorf(c.tool, vp.KindInvalid, path, "is not valid UTF-8")
		}
		if strings.IndexByte(x, 0) >= 0 {
			return vp.Errorf(c.tool, vp.KindInvalid, path, "must not contain NUL characters")
		}
		if n.identity {
			if why := vp.NameProblem(x); why != "" {
				return vp.Errorf(c.tool, vp.KindInvalid, path, "%+q %s", x, why)
			}
		}
	case []any:
		if len(n.types) == 0 && n.maxLen > 0 { // any type: bound the strings of an array too
			for i, e := range x {
				if s, ok := e.(string); ok && len(s) > n.maxLen {
					return vp.Errorf(c.tool, vp.KindTooLarge, path+"["+strconv.Itoa(i)+"]", "is %d bytes; the limit is %d bytes — shorten it or split it", len(s), n.maxLen)
				}
			}
		}
		if n.items != nil {
			for i, e := range x {
				if err := c.value(e, n.items, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k) // null is absence
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the first error is the same on every call
		// Unknown arguments first: "cron" for cronExpression is one
		// mistake, better named as such than as a missing cronExpression.
		for _, k := range keys {
			if _, ok := n.props[k]; !ok && n.extra == nil && n.closed {
				return c.unknown(n, path, k)
			}
		}
		for _, r := range n.required {
			if _, ok := x[r]; !ok {
				return c.missing(n, join(path, r), r)
			}
		}
		for _, k := range keys {
			p, ok := n.props[k]
			if !ok {
				if p = n.extra; p == nil {
					continue
				}
			}
			if err := c.value(x[k], p, join(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// missing words the refusal of a required argument left out (or null):
// what it is and, when the tool's description has one, an example value.
func (c *argChecker) missing(parent *argNode, path, name string) error {
	msg := "required"
	if p := parent.props[name]; p != nil {
		switch {
		case p.desc != "":
			msg += " — " + p.desc
		case argHint(name) != "":
			msg += " — " + argHint(name)
		case len(p.types) > 0:
			msg += " — " + typePhrase(p.types)
		}
		if ex, ok := exampleAt(c.example, path); ok {
			b, _ := json.Marshal(ex)
			msg += ", e.g. " + string(b)
		}
	}
	return vp.E(c.tool, vp.KindInvalid, path, msg+" (null counts as absent)")
}

// argHints say what the common undescribed arguments are.
var argHints = map[string]string{
	"orchestratorId":     "the orchestrator this applies to",
	"orchestrator":       "the orchestrator this applies to",
	"callerOrchestrator": "the orchestrator you act as",
	"createdBy":          "the orchestrator creating it",
	"assignedTo":         "the orchestrator who will do it",
	"from":               "the orchestrator sending it (default: you)",
	"instanceId":         "your instance: one machine or session of an orchestrator",
}

// argHint describes an argument by its name: argHints, or "fooBarId" is
// "the id of the foo bar".
func argHint(name string) string {
	if h, ok := argHints[name]; ok {
		return h
	}
	base, ok := strings.CutSuffix(name, "Id")
	if !ok || base == "" {
		return ""
	}
	var words strings.Builder
	for i, r := range base {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				words.WriteByte(' ')
			}
			r += 'a' - 'A'
		}
		words.WriteRune(r)
	}
	return "the id of the " + words.String()
}

// exampleAt finds the value at path ("a.b") in the example arguments.
func exampleAt(ex map[string]any, path string) (any, bool) {
	var cur any = ex
	for seg := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return cur, cur != nil
}

// unknown refuses an argument the tool does not take, suggesting the known
// one closest to it.
func (c *argChecker) unknown(n *argNode, path, name string) error {
	shown := name
	if len(shown) > 64 {
		shown = shown[:64] + "…"
	}
	msg := fmt.Sprintf("%q is not an argument of %s", shown, c.tool)
	if path != "" {
		msg = fmt.Sprintf("%q is not a field of %s", shown, path)
	}
	if best := closest(name, n.names); best != "" {
		msg += "; did you mean " + best + "?"
	} else if len(n.names) == 0 {
		msg += "; it takes none"
	}
	return vp.E(c.tool, vp.KindInvalid, join(path, shown), msg)
}

// closest returns the candidate nearest to name: one that it is a
// case-insensitive prefix of, or of it, first; else the smallest edit
// distance (ties: the first in order).
func closest(name string, candidates []string) string {
	lname := strings.ToLower(name)
	best, bestD := "", math.MaxInt
	for _, cand := range candidates {
		lc := strings.ToLower(cand)
		d := editDistance(lname, lc)
		if strings.HasPrefix(lc, lname) || strings.HasPrefix(lname, lc) {
			d = len(lc) - 1_000_000 // a prefix match beats any distance; the shortest wins
		}
		if d < bestD {
			best, bestD = cand, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b (bytes; both
// are short argument names, and a long unknown one is cut to 64 bytes).
func editDistance(a, b string) int {
	if len(a) > 64 {
		a = a[:64]
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func isType(v any, t string) bool {
	switch t {
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "array":
		_, ok := v.([]any)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	}
	return true
}

func typePhrase(types []string) string {
	words := make([]string, len(types))
	for i, t := range types {
		words[i] = map[string]string{"string": "a string", "boolean": "true or false", "number": "a number",
			"integer": "a whole number", "array": "an array", "object": "an object"}[t]
		if words[i] == "" {
			words[i] = t
		}
	}
	return strings.Join(words, " or ")
}

// jsonType names the JSON type of a decoded value, for errors.
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64:
		if x == math.Trunc(x) {
			return "the number " + strconv.FormatFloat(x, 'g', -1, 64)
		}
		return "a number with a fraction (" + strconv.FormatFloat(x, 'g', 6, 64) + ")"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "an unexpected value"
}

// descriptionExample reads the example arguments of a tool description
// ("... Example: {\"channel\":\"bob\"}"); nil when it has none.
func descriptionExample(desc string) map[string]any {
	_, after, ok := strings.Cut(desc, "Example: {")
	if !ok {
		return nil
	}
	var ex map[string]any
	dec := json.NewDecoder(strings.NewReader("{" + after))
	if dec.Decode(&ex) != nil {
		return nil
	}
	return ex
}

// scanArgs refuses raw arguments that ScanJSON finds fault with, naming
// the argument.
func scanArgs(tool string, raw []byte) error {
	p := ScanJSON(raw, MaxArgumentDepth, true)
	if p == nil {
		return nil
	}
	if p.Depth > 0 {
		// The argument, not the path down to the limit: that is a
		// hundred "[0]"s.
		arg := p.Path[:min(len(p.Path), 64)]
		if i := strings.IndexAny(arg, ".["); i >= 0 {
			arg = arg[:i]
		}
		return vp.Errorf(tool, vp.KindInvalid, arg, "nests arrays or objects deeper than the limit of %d levels (the arguments object is level 1); flatten it", p.Depth)
	}
	return vp.Errorf(tool, vp.KindInvalid, p.Path, "contains the escape %s, a lone UTF-16 surrogate that encodes no character: "+
		"send the character itself, or a valid surrogate pair", p.Surrogate)
}
