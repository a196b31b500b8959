package mcpserver_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/briefing"
	"github.com/vantagepeers/vantagepeers/shared/businessunit"
	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/diary"
	"github.com/vantagepeers/vantagepeers/shared/iframe"
	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/mandate"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/message"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/search"
	"github.com/vantagepeers/vantagepeers/shared/store"
	"github.com/vantagepeers/vantagepeers/shared/store/sqlite"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// connect starts the server in process and returns a client session acting
// as principal p; tweaks change its options.
func connect(t testing.TB, p vp.Principal, tweaks ...func(*mcpserver.Options)) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "vp.db"), Synchronous: "NORMAL"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	key, _ := auth.EnsureKey(ctx, st, "cursor")
	signer, _ := listing.NewSigner(key)
	o := mcpserver.Options{Toolsets: []mcpserver.Toolset{mcpserver.KeywordTools(keyword.New(keyword.Options{Store: st, Cursors: signer}))},
		Version: "test", LocalPrincipal: &p}
	for _, f := range tweaks {
		f(&o)
	}
	return clientOf(t, mcpserver.New(withLeaves(o, st, signer, nil)))
}

// withLeaves sets o's leaf aggregate services (briefings, ...) on st,
// indexing for keyword search into idx when it is not nil.
func withLeaves(o mcpserver.Options, st store.Store, signer *listing.Signer, idx search.Index) mcpserver.Options {
	w := &search.Writer{Index: idx}
	o.Views.Briefings = briefing.New(briefing.Options{Store: st, Cursors: signer, Search: w})
	o.Views.Diary = diary.New(diary.Options{Store: st, Cursors: signer})
	o.Toolsets = append(o.Toolsets, mcpserver.BriefingTools(o.Views.Briefings),
		mcpserver.ComponentTools(component.New(component.Options{Store: st, Cursors: signer, Search: w})),
		mcpserver.BusinessUnitTools(businessunit.New(businessunit.Options{Store: st, Cursors: signer})), mcpserver.DiaryTools(o.Views.Diary))
	talkServices(&o, st, signer, idx)
	return withTasks(o, st, signer, idx)
}

// talkServices wires profiles, messages, iframe sessions and mandates into
// o as the binaries do; idx, when set, makes messages searchable.
func talkServices(o *mcpserver.Options, st store.Store, signer *listing.Signer, idx search.Index) {
	profiles := profile.New(profile.Options{Store: st, Cursors: signer})
	o.Views.Messages = message.New(message.Options{Store: st, Cursors: signer, Directory: profiles, Search: &search.Writer{Index: idx}})
	o.Toolsets = append(o.Toolsets, mcpserver.ProfileTools(profiles), mcpserver.MessageTools(o.Views.Messages),
		mcpserver.IframeTools(iframe.New(iframe.Options{Store: st})), mcpserver.MandateTools(mandate.New(mandate.Options{Store: st, Cursors: signer})))
}

// clientOf connects a client to server over in-memory transports.
func clientOf(t testing.TB, server *mcp.Server) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	if _, err := server.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// wantTools are the tools of the foundation; later capabilities add more.
var wantTools = []string{
	"check_messages", "delete_message", "get_message", "get_profile", "list_broadcast_status", "list_messages",
	"list_peers", "mark_as_read", "send_message", "set_summary", "update_profile", "whoami",
}

func TestToolsAreDescribed(t *testing.T) {
	cs := connect(t, auth.MasterPrincipal("acme"))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if !strings.Contains(tool.Description, "Example: {") {
			t.Errorf("%s: description has no example", tool.Name)
		}
		if tool.Annotations == nil || tool.InputSchema == nil {
			t.Errorf("%s: missing annotations or input schema", tool.Name)
			continue
		}
		reader := strings.HasPrefix(tool.Name, "get_") || strings.HasPrefix(tool.Name, "list_") || tool.Name == "whoami" || tool.Name == "check_messages"
		if reader && !tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: a reader without readOnlyHint", tool.Name)
		}
		writer := strings.HasPrefix(tool.Name, "create_") || strings.HasPrefix(tool.Name, "update_") || strings.HasPrefix(tool.Name, "delete_") || tool.Name == "send_message"
		if writer && tool.Annotations.ReadOnlyHint {
			t.Errorf("%s: a writer marked readOnlyHint", tool.Name)
		}
		if strings.HasPrefix(tool.Name, "delete_") && (tool.Annotations.DestructiveHint == nil || !*tool.Annotations.DestructiveHint) {
			t.Errorf("%s: not marked destructive", tool.Name)
		}
		// destructiveHint means something only when readOnlyHint is false
		// (MCP 2025-11-25 ToolAnnotations): a reader that sends it spends
		// tools/list on nothing; a writer that leaves it out is, by its
		// default, destructive.
		if ro, d := tool.Annotations.ReadOnlyHint, tool.Annotations.DestructiveHint; ro == (d != nil) {
			t.Errorf("%s: readOnlyHint %v with destructiveHint %v", tool.Name, ro, d != nil)
		}
		// openWorldHint defaults to true; every tool here works on the
		// tenant's own store, so each says false.
		if ow := tool.Annotations.OpenWorldHint; ow == nil || *ow {
			t.Errorf("%s: openWorldHint is not false", tool.Name)
		}
	}
	for _, w := range wantTools {
		if !slices.Contains(names, w) {
			t.Errorf("tool %s is not advertised (got %v)", w, names)
		}
	}
	b, _ := json.Marshal(res)
	t.Logf("tools/list: %d tools, %d bytes, ~%d tokens", len(res.Tools), len(b), len(b)/4)
}

func call(t testing.TB, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error %v", name, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			text.WriteString(tc.Text)
		}
	}
	return res, text.String()
}

func TestToolErrorsNameTheField(t *testing.T) {
	cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}})
	cases := []struct {
		name, tool string
		args       map[string]any
		want       []string
	}{
		{"missing field", "send_message", map[string]any{"channel": "bob"}, []string{"content"}},
		{"wrong type", "send_message", map[string]any{"channel": "bob", "content": 42}, []string{"content"}},
		{"unknown argument", "send_message", map[string]any{"channel": "bob", "content": "x", "colour": "red"}, []string{"colour"}},
		{"unknown enum value", "list_messages", map[string]any{"fields": "medium"}, []string{"fields", "lite"}},
		{"oversize", "send_message", map[string]any{"channel": "bob", "content": strings.Repeat("é", 40000)}, []string{"content", "65536"}},
		{"impersonation", "send_message", map[string]any{"from": "bob", "channel": "carol", "content": "x"}, []string{"forbidden", "from", "bob"}},
		{"tampered cursor", "list_peers", map[string]any{"cursor": "eyJwIjoiVCNhY21lI1BST0ZJTEUjYWxpY2UifQ"}, []string{"cursor"}},
		{"unknown message", "get_message", map[string]any{"messageId": "msg_nope"}, []string{"not_found", "messageId"}},
		{"empty receipts", "mark_as_read", map[string]any{"receiptIds": []string{}}, []string{"receiptIds"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, text := call(t, cs, c.tool, c.args)
			if !res.IsError {
				t.Fatalf("not an error: %s", text)
			}
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("error %q does not mention %q", text, w)
				}
			}
		})
	}
	// The server still serves after all of that.
	res, text := call(t, cs, "whoami", map[string]any{})
	if res.IsError || !strings.Contains(text, `"alice"`) {
		t.Fatalf("whoami after errors: %s", text)
	}
}

func TestRoundTripThroughTools(t *testing.T) {
	cs := connect(t, auth.MasterPrincipal("acme"))
	res, text := call(t, cs, "send_message", map[string]any{"from": "alice", "channel": "bob", "content": "hello"})
	if res.IsError {
		t.Fatal(text)
	}
	var sent message.SendResult
	if err := json.Unmarshal([]byte(text), &sent); err != nil || sent.MessageID == "" {
		t.Fatalf("send result %s", text)
	}
	_, text = call(t, cs, "check_messages", map[string]any{"recipient": "bob"})
	var inbox message.Inbox
	if err := json.Unmarshal([]byte(text), &inbox); err != nil || inbox.Count != 1 {
		t.Fatalf("inbox %s", text)
	}
	_, text = call(t, cs, "mark_as_read", map[string]any{"receiptIds": []string{inbox.Messages[0].ID}})
	if text != `{"marked":1}` {
		t.Fatalf("mark: %s", text)
	}
	res, text = call(t, cs, "list_messages", map[string]any{"limit": 500})
	if res.IsError || strings.Contains(text, "nextCursor") || !strings.Contains(text, sent.MessageID) {
		t.Fatalf("list: %s", text)
	}
}

// FuzzToolArguments throws arbitrary JSON at every tool: the server must
// answer each call (a result or an isError result), never fail the protocol
// exchange or panic.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []string{
		`{}`, `{"channel":"bob","content":"x"}`, `{"receiptIds":["rcp_x"]}`, `{"limit":-1,"fields":"lite"}`,
		`{"cursor":"AAAA"}`, `{"orchestratorId":"a#b"}`, `{"since":-9007199254740993}`, `{"content":"\u0000"}`,
		`{"static":{"capabilities":[1,2]}}`, `{"sessionDay":1e300}`, `{"channel":"broadcast","content":"x","from":"system"}`,
	} {
		for i := range wantTools {
			f.Add(uint8(i), seed)
		}
	}
	cs := connect(f, auth.MasterPrincipal("acme"))
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		var m map[string]any
		if json.Unmarshal([]byte(args), &m) != nil {
			return
		}
		name := wantTools[int(tool)%len(wantTools)]
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: m}); err != nil {
			t.Fatalf("%s(%s): protocol error %v", name, args, err)
		}
	})
}

func TestCoreProfileAdvertisesLessButAllowsAll(t *testing.T) {
	p := auth.MasterPrincipal("acme")
	p.ToolProfile = mcpserver.ToolProfileCore
	cs := connect(t, p)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if slices.Contains(names, "list_broadcast_status") || !slices.Contains(names, "send_message") {
		t.Fatalf("core profile advertises %v", names)
	}
	full := connect(t, auth.MasterPrincipal("acme"))
	all, _ := full.ListTools(context.Background(), nil)
	if len(res.Tools) >= len(all.Tools) {
		t.Fatalf("core (%d tools) is not smaller than full (%d)", len(res.Tools), len(all.Tools))
	}
	b, _ := json.Marshal(res)
	t.Logf("core tools/list: %d tools, ~%d tokens; full: %d tools", len(res.Tools), len(b)/4, len(all.Tools))
	// Not advertised, still callable.
	if r, text := call(t, cs, "list_broadcast_status", map[string]any{"messageId": "msg_x"}); !r.IsError || !strings.Contains(text, "not_found") {
		t.Fatalf("hidden tool call: %s", text)
	}
}
