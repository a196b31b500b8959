package mcpserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	embedlocal "github.com/vantagepeers/vantagepeers/shared/embed/local"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/memory"
	"github.com/vantagepeers/vantagepeers/shared/queue/storequeue"
	searchlocal "github.com/vantagepeers/vantagepeers/shared/search/local"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// countingStore counts the writes that reach the store.
type countingStore struct {
	store.Store
	writes atomic.Int64
}

func (c *countingStore) Write(ctx context.Context, ops ...store.Op) error {
	c.writes.Add(1)
	return c.Store.Write(ctx, ops...)
}

// connectCounting is connect with every tool registered on a store that
// counts its writes.
func connectCounting(t *testing.T, p vp.Principal) (*mcp.ClientSession, *countingStore) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db"), Synchronous: "OFF"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	cst := &countingStore{Store: st}
	key, _ := auth.EnsureKey(ctx, cst, "cursor")
	signer, _ := listing.NewSigner(key)
	idx, err := searchlocal.Open(ctx, searchlocal.Options{Path: filepath.Join(t.TempDir(), "search.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = idx.Close() })
	mem := memory.New(memory.Options{Store: cst, Index: idx, Embedder: embedlocal.New(embedlocal.Options{}),
		Queue: storequeue.New(storequeue.Options{Store: cst, Name: "embed"}), Cursors: signer})
	o := mcpserver.Options{Toolsets: []mcpserver.Toolset{mcpserver.KeywordTools(keyword.New(keyword.Options{Store: cst, Cursors: signer, Index: idx})),
		mcpserver.MemoryTools(mem)}, Views: mcpserver.Views{Memory: mem}, Version: "test", LocalPrincipal: &p}
	return clientOf(t, mcpserver.New(withLeaves(o, cst, signer, idx))), cst
}

// stringArg is a string argument found in an advertised schema: its path
// in limits syntax ("a.b", "a[]", "a.*") and its maxLength (0: none).
type stringArg struct {
	path   string
	maxLen int
}

func stringArgs(node map[string]any, path string, out *[]stringArg) {
	_, typed := node["type"]
	if node["type"] == "string" || (!typed && node["properties"] == nil && path != "") { // untyped: may be a string
		ml, _ := node["maxLength"].(float64)
		*out = append(*out, stringArg{path, int(ml)})
		return
	}
	if items, ok := node["items"].(map[string]any); ok {
		stringArgs(items, path+"[]", out)
	}
	if extra, ok := node["additionalProperties"].(map[string]any); ok {
		stringArgs(extra, path+".*", out)
	}
	props, _ := node["properties"].(map[string]any)
	for name, p := range props {
		child, _ := p.(map[string]any)
		if path != "" {
			name = path + "." + name
		}
		stringArgs(child, name, out)
	}
}

// placeholder is a value of the node's type (its required fields filled).
func placeholder(node map[string]any) any {
	switch typ, _ := node["type"].(string); typ {
	case "string":
		return "x"
	case "integer", "number":
		return 1
	case "boolean":
		return false
	case "array":
		return []any{}
	case "object":
		obj := map[string]any{}
		props, _ := node["properties"].(map[string]any)
		for _, r := range asStrings(node["required"]) {
			child, _ := props[r].(map[string]any)
			obj[r] = placeholder(child)
		}
		return obj
	}
	return "x"
}

func asStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// withValue returns args (the tool's required arguments) with the
// argument at path set to v, creating the objects and arrays on the way.
func withValue(schema map[string]any, path string, v any) map[string]any {
	args, _ := placeholder(schema).(map[string]any)
	var set func(obj map[string]any, node map[string]any, segs []string)
	set = func(obj map[string]any, node map[string]any, segs []string) {
		name, items := strings.CutSuffix(segs[0], "[]")
		props, _ := node["properties"].(map[string]any)
		child, _ := props[name].(map[string]any)
		if len(segs) == 1 && segs[0] == "*" {
			return
		}
		if len(segs) == 2 && segs[1] == "*" {
			obj[name] = map[string]any{"k": v}
			return
		}
		if len(segs) == 1 {
			if items {
				obj[name] = []any{v}
			} else {
				obj[name] = v
			}
			return
		}
		if items {
			itemNode, _ := child["items"].(map[string]any)
			inner, _ := placeholder(itemNode).(map[string]any)
			set(inner, itemNode, segs[1:])
			obj[name] = []any{inner}
			return
		}
		inner, _ := obj[name].(map[string]any)
		if inner == nil {
			inner, _ = placeholder(child).(map[string]any)
		}
		set(inner, child, segs[1:])
		obj[name] = inner
	}
	set(args, schema, strings.Split(path, "."))
	return args
}

// TestEveryStringArgumentIsBounded walks the schema the server enforces
// for every registered tool: each string argument (and string array
// item, and map value) has a bound, tools/list shows it or it is the
// default the server's instructions state, and a value one byte over it
// is refused with an error naming the field and the limit — before
// anything is written.
func TestEveryStringArgumentIsBounded(t *testing.T) {
	cs, st := connectCounting(t, auth.MasterPrincipal("acme"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	enforced, err := mcpserver.EnforcedSchemas()
	if err != nil {
		t.Fatal(err)
	}
	stated := mcpserver.StatedBounds()
	if stated[""] != mcpserver.DefaultStringBytes || len(stated) < 2 {
		t.Fatalf("stated bounds %v", stated)
	}
	for name, n := range stated {
		say := name + " " + strconv.Itoa(n)
		if name == "" {
			say = "without maxLength is at most " + strconv.Itoa(n) + " bytes"
		}
		if !strings.Contains(cs.InitializeResult().Instructions, say) {
			t.Errorf("the instructions do not say %q: %s", say, cs.InitializeResult().Instructions)
		}
	}
	before := st.writes.Load()
	checked, unlisted := 0, 0
	for _, tool := range res.Tools {
		b, _ := json.Marshal(tool.InputSchema)
		var listed map[string]any
		if err := json.Unmarshal(b, &listed); err != nil {
			t.Fatal(err)
		}
		schema, ok := enforced[tool.Name]
		if !ok {
			t.Errorf("%s: no enforced schema", tool.Name)
			continue
		}
		var args []stringArg
		stringArgs(schema, "", &args)
		shown := map[string]int{}
		var listedArgs []stringArg
		stringArgs(listed, "", &listedArgs)
		for _, a := range listedArgs {
			shown[a.path] = a.maxLen
		}
		for _, a := range args {
			t.Run(tool.Name+"/"+a.path, func(t *testing.T) {
				if a.maxLen <= 0 {
					t.Fatal("unbounded: no maxLength enforced")
				}
				name := strings.TrimSuffix(a.path[strings.LastIndex(a.path, ".")+1:], "[]")
				said, ok := stated[name]
				if !ok {
					said = stated[""]
				}
				if ml, ok := shown[a.path]; ok && ml != a.maxLen && (ml != 0 || a.maxLen != said) {
					t.Errorf("tools/list shows maxLength %d; %d is enforced, the instructions state %d", ml, a.maxLen, said)
				}
				if ml, ok := shown[a.path]; ok && ml == 0 {
					unlisted++
				}
				res, text := call(t, cs, tool.Name, withValue(schema, a.path, strings.Repeat("a", a.maxLen+1)))
				leaf := a.path[strings.LastIndexAny(a.path, ".")+1:]
				leaf = strings.TrimSuffix(leaf, "[]")
				if leaf == "*" {
					leaf = strings.TrimSuffix(a.path, ".*")
				}
				if !res.IsError || !strings.Contains(text, "too_large") || !strings.Contains(text, leaf) ||
					!strings.Contains(text, "limit is "+strconv.Itoa(a.maxLen)) {
					t.Errorf("one byte over %d: %s", a.maxLen, trim(text))
				}
			})
			checked++
		}
		for path := range shown {
			if !slices.ContainsFunc(args, func(a stringArg) bool { return a.path == path }) {
				t.Errorf("%s: tools/list shows %s, which the server does not check", tool.Name, path)
			}
		}
	}
	if checked < 300 {
		t.Errorf("checked %d string arguments; the tools have more than 300", checked)
	}
	if unlisted < 150 {
		t.Errorf("%d arguments rely on the stated default; expected the ids and names (150+)", unlisted)
	}
	if n := st.writes.Load() - before; n != 0 {
		t.Errorf("%d writes reached the store from oversize calls", n)
	}
}

// rawCall sends arguments exactly as given, escapes and all.
func rawCall(t *testing.T, cs *mcp.ClientSession, name, args string) (*mcp.CallToolResult, string) {
	t.Helper()
	return call(t, cs, name, json.RawMessage(args))
}

// TestHostileArguments: the decoding rules of decode.go, tool by tool.
func TestHostileArguments(t *testing.T) {
	cs, _ := connectMemory(t, auth.MasterPrincipal("acme"))
	fix := `"symptom":"s","rootCause":"r","stack":[],"sourceProject":"p","severity":"minor","createdBy":"alice"`
	task := `"title":"t","assignedTo":"alice","createdBy":"alice","priority":"low"`
	cases := []struct {
		name, tool, args string
		ok               bool
		want             []string // in the result (error or not)
	}{
		// null is absence
		{"required array given null", "create_fix_pattern", `{` + fix + `,"tags":null}`, false, []string{"invalid_argument", "tags: required"}},
		{"required array left out", "create_fix_pattern", `{` + fix + `}`, false, []string{"tags: required"}},
		{"optional text given null", "create_task", `{` + task + `,"description":null}`, true, []string{`"title":"t"`}},
		{"required text given null", "send_message", `{"channel":"bob","content":null}`, false, []string{"content: required"}},
		{"nested null", "store_memory", `{"namespace":"global","type":"fact","content":"c","createdBy":"alice","episode":null}`, true, []string{`"memoryId"`}},
		{"null arguments", "whoami", `null`, true, []string{"acme"}},
		{"null array entry", "create_task", `{` + task + `,"tags":[null]}`, false, []string{"tags[0]", "must be a string, got null"}},
		// missing and unknown arguments
		{"missing, with an example", "get_profile", `{}`, false, []string{"orchestratorId: required — the orchestrator this applies to", `e.g. "`}},
		{"unknown, nearest by prefix", "create_recurring_task", `{"title":"t","assignedTo":"alice","cron":"0 6 * * *","priority":"low","createdBy":"alice"}`, false,
			[]string{`"cron" is not an argument`, "did you mean cronExpression?"}},
		{"unknown, nearest by distance", "send_message", `{"channel":"bob","contnet":"x"}`, false, []string{"did you mean content?"}},
		{"wrong type", "send_message", `{"channel":"bob","content":42}`, false, []string{"content: must be a string, got the number 42"}},
		{"fraction for an integer", "check_messages", `{"limit":1.5}`, false, []string{"limit: must be a whole number"}},
		{"not an object", "whoami", `[1]`, false, []string{"must be a JSON object"}},
		// lone surrogates, in every kind of field
		{"lone high surrogate", "send_message", `{"channel":"bob","content":"before\ud800after"}`, false, []string{"content", `\ud800`, "surrogate"}},
		{"lone low surrogate", "create_task", `{` + task + `,"description":"x\uDC00"}`, false, []string{"description", "surrogate"}},
		{"high then a non-low escape", "store_memory", `{"namespace":"global","type":"fact","content":"\ud800\u0041","createdBy":"alice"}`, false, []string{"content", "surrogate"}},
		{"in an array item", "create_task", `{` + task + `,"tags":["ok","\ud83d"]}`, false, []string{"tags[1]", "surrogate"}},
		{"in a nested field", "store_memory", `{"namespace":"global","type":"fact","content":"c","createdBy":"alice","relations":[{"type":"references","targetId":"\udfff"}]}`, false, []string{"relations[0].targetId", "surrogate"}},
		{"in a key", "send_message", `{"channel":"bob","content":"x","\ud800":1}`, false, []string{"surrogate"}},
		{"a valid pair is a character", "send_message", `{"from":"alice","channel":"bob","content":"smile \ud83d\ude00"}`, true, []string{"messageId"}},
		// depth
		{"deep argument", "store_memory", `{"namespace":"global","type":"fact","content":"c","createdBy":"alice","relations":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, false,
			[]string{"relations", "deeper than the limit of 64 levels"}},
		{"oversize entry of a status array", "list_tasks", `{"status":["todo","` + strings.Repeat("x", 65) + `"]}`, false, []string{"status[1]", "limit is 64 bytes"}},
		// NUL, identities
		{"NUL in a label", "check_messages", `{"recipient":"bob","tenantId":"a\u0000b"}`, false, []string{"tenantId", "NUL"}},
		{"oversize label", "check_messages", `{"recipient":"bob","tenantId":"` + strings.Repeat("😀", 10_000) + `"}`, false, []string{"tenantId", "limit is 64 bytes"}},
		{"bidi override in from", "send_message", `{"from":"user\u202Egnp.exe","channel":"bob","content":"x"}`, false, []string{"from", "formatting"}},
		{"bidi override in createdBy", "create_task", `{"title":"t","assignedTo":"alice","createdBy":"al\u202Eice","priority":"low"}`, false, []string{"createdBy", "formatting"}},
		{"control character in assignedTo", "create_task", `{"title":"t","assignedTo":"ali\u0007ce","createdBy":"alice","priority":"low"}`, false, []string{"assignedTo", "control"}},
		{"zero-width in orchestratorId", "set_summary", `{"orchestratorId":"ali\u200bce","instanceId":"a1","summary":"s"}`, false, []string{"orchestratorId", "formatting"}},
		{"override in instanceId", "set_summary", `{"orchestratorId":"alice","instanceId":"a\u202e1","summary":"s"}`, false, []string{"instanceId", "formatting"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, text := rawCall(t, cs, c.tool, c.args)
			t.Log(trim(text))
			if res.IsError == c.ok {
				t.Fatalf("isError %v: %s", res.IsError, trim(text))
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("%q does not contain %q", trim(text), w)
				}
			}
			for _, leak := range []string{"reflect", "jsonschema", "unmarshal", "Go value", "validating"} {
				if strings.Contains(text, leak) {
					t.Errorf("%q shows internals (%s)", trim(text), leak)
				}
			}
		})
	}
}

// TestNullIsTheSameEverywhere: create and update treat a null description
// alike — as absent — and a stored task never holds U+FFFD from an escape.
func TestNullIsTheSameEverywhere(t *testing.T) {
	cs := connect(t, auth.MasterPrincipal("acme"))
	res, text := rawCall(t, cs, "create_task", `{"title":"t","assignedTo":"alice","createdBy":"alice","priority":"low","description":"keep"}`)
	if res.IsError {
		t.Fatal(text)
	}
	id := decodeAs[struct {
		ID string `json:"_id"`
	}](t, text).ID
	res, text = rawCall(t, cs, "update_task", `{"taskId":"`+id+`","callerOrchestrator":"alice","priority":"high","description":null}`)
	if res.IsError || !strings.Contains(text, `"description":"keep"`) {
		t.Fatalf("update with a null description: %s", trim(text))
	}
	res, text = rawCall(t, cs, "create_task", `{"title":"t","assignedTo":"alice","createdBy":"alice","priority":"low","description":null}`)
	if res.IsError || strings.Contains(text, `"description"`) && !strings.Contains(text, `"description":""`) {
		t.Fatalf("create with a null description: %s", trim(text))
	}
	_, text = call(t, cs, "list_tasks", map[string]any{})
	if strings.ContainsRune(text, '\uFFFD') {
		t.Errorf("a stored task holds U+FFFD: %s", trim(text))
	}
	if n := len(decodeAs[listing.Page[any]](t, text).Items); n != 2 {
		t.Errorf("list_tasks: %d tasks, want 2", n)
	}
}
