package tests

import (
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestHTTPClient drives `vantagepeers serve` with the official MCP
// TypeScript SDK over Streamable HTTP (clients/http.mjs). Each scenario gets
// tenants of its own, so the scenarios run in parallel and count exactly.
func TestHTTPClient(t *testing.T) {
	requireNode(t)

	t.Run("tools", func(t *testing.T) {
		t.Parallel()
		s := runClient(t, "http.mjs", "tools", map[string]any{"url": srv.url, "master": masterToken})
		if n, _ := s.Facts["toolCount"].(float64); n < 12 {
			t.Errorf("toolCount = %v, want at least 12", s.Facts["toolCount"])
		}
		if s.Passed < 12*5 {
			t.Errorf("only %d checks passed; the scenario checks at least 5 per tool", s.Passed)
		}
	})

	t.Run("messaging", func(t *testing.T) {
		t.Parallel()
		tenant := newTenant("msg")
		s := runClient(t, "http.mjs", "messaging", map[string]any{
			"url": srv.url, "master": masterToken, "tenant": tenant,
			"tokens": map[string]string{"alice": createToken(t, tenant, "alice"), "bob": createToken(t, tenant, "bob")},
		})
		if got := fmt.Sprint(s.Facts["broadcastRecipients"]); got != "[bob carol]" {
			t.Errorf("broadcastRecipients = %s, want [bob carol]", got)
		}
		// Cross-check with a different client (raw HTTP, the master acting
		// in the tenant): the message is stored, and only in that tenant.
		id, _ := s.Facts["messageId"].(string)
		m := decode[struct {
			From, Channel, Content string
		}](t, callTool(t, masterToken, tenant, "get_message", map[string]any{"messageId": id}))
		if m.From != "bob" || m.Channel != "alice" || !strings.HasPrefix(m.Content, "API schema merged") {
			t.Errorf("get_message %s over raw HTTP = %+v", id, m)
		}
		if r := callTool(t, masterToken, "", "get_message", map[string]any{"messageId": id}); !r.IsError || !strings.Contains(r.text(), "not_found") {
			t.Errorf("get_message %s from the default tenant: isError=%v %q, want not_found", id, r.IsError, r.text())
		}
	})

	t.Run("paging", func(t *testing.T) {
		t.Parallel()
		tenant := newTenant("pages")
		s := runClient(t, "http.mjs", "paging", map[string]any{
			"url": srv.url, "master": masterToken, "tenant": tenant, "messages": 45, "peers": 33,
			"tokens": map[string]string{"alice": createToken(t, tenant, "alice")},
		})
		if got := fmt.Sprint(s.Facts["messagePageSizes"]); got != "[20 20 5]" {
			t.Errorf("messagePageSizes = %s, want [20 20 5]", got)
		}
		if got := s.Facts["messageItems"]; got != float64(45) {
			t.Errorf("messageItems = %v, want 45", got)
		}
		if got := s.Facts["lastPageHasNextCursorKey"]; got != false {
			t.Errorf("lastPageHasNextCursorKey = %v, want false", got)
		}
		if got := s.Facts["peers"]; got != float64(33) {
			t.Errorf("peers = %v, want 33", got)
		}
		// The same walk over raw HTTP, looking at the bytes: the last page's
		// structuredContent and text must not mention nextCursor at all
		// (absent, never null or "").
		var sizes []int
		cursor := ""
		for page := 0; page < 10; page++ {
			args := map[string]any{"limit": 20}
			if cursor != "" {
				args["cursor"] = cursor
			}
			r := callTool(t, masterToken, tenant, "list_messages", args)
			p := decode[struct {
				Items      []json.RawMessage `json:"items"`
				NextCursor *string           `json:"nextCursor"`
			}](t, r)
			sizes = append(sizes, len(p.Items))
			if p.NextCursor == nil {
				if strings.Contains(string(r.StructuredContent), "nextCursor") || strings.Contains(r.text(), "nextCursor") {
					t.Errorf("last page mentions nextCursor: %s", r.StructuredContent)
				}
				break
			}
			if *p.NextCursor == "" {
				t.Fatalf("page %d: nextCursor is the empty string", page+1)
			}
			cursor = *p.NextCursor
		}
		if !slices.Equal(sizes, []int{20, 20, 5}) {
			t.Errorf("raw HTTP page sizes = %v, want [20 20 5]", sizes)
		}
	})

	t.Run("errors", func(t *testing.T) {
		t.Parallel()
		tenant := newTenant("errs")
		s := runClient(t, "http.mjs", "errors", map[string]any{
			"url": srv.url, "master": masterToken, "tenant": tenant,
			"tokens": map[string]string{"alice": createToken(t, tenant, "alice")},
		})
		for key, want := range map[string][]string{
			"tooLargeText":       {"content", "65536"},
			"forbiddenFromText":  {"from", "bob"},
			"tamperedCursorText": {"cursor"},
		} {
			got, _ := s.Facts[key].(string)
			for _, w := range want {
				if !strings.Contains(got, w) {
					t.Errorf("%s = %q, want it to name %q", key, got, w)
				}
			}
		}
	})

	t.Run("isolation", func(t *testing.T) {
		t.Parallel()
		a, b := newTenant("ta"), newTenant("tb")
		s := runClient(t, "http.mjs", "isolation", map[string]any{
			"url": srv.url, "master": masterToken, "tenantB": b,
			"tokens": map[string]string{"a": createToken(t, a, "alice"), "b": createToken(t, b, "*")},
		})
		if got, _ := s.Facts["crossTenantCursorText"].(string); !strings.Contains(got, "cursor") {
			t.Errorf("crossTenantCursorText = %q, want it to name cursor", got)
		}
		if got, _ := s.Facts["crossTenantGetMessageText"].(string); !strings.Contains(got, "not_found") {
			t.Errorf("crossTenantGetMessageText = %q, want not_found", got)
		}
	})

	t.Run("unauthorized", func(t *testing.T) {
		t.Parallel()
		s := runClient(t, "http.mjs", "unauthorized", map[string]any{"url": srv.url, "master": masterToken})
		if got, _ := s.Facts["connectError"].(string); !strings.Contains(got, "invalid_token") && !strings.Contains(got, "401") {
			t.Errorf("connectError = %q, want 401 / invalid_token", got)
		}
	})
}

// TestStdioClient drives `vantagepeers stdio` with the TypeScript SDK's
// StdioClientTransport, on the data dir of the running HTTP server (two
// processes on one SQLite database).
func TestStdioClient(t *testing.T) {
	requireNode(t)

	t.Run("owner", func(t *testing.T) {
		marker := fmt.Sprintf("marker-%d", tenantSeq.Add(1))
		s := runClient(t, "stdio.mjs", "owner", map[string]any{
			"bin": binPath, "dataDir": srv.dataDir, "marker": marker, "masterToken": masterToken,
		})
		if n, _ := s.Facts["toolCount"].(float64); n < 12 {
			t.Errorf("toolCount = %v, want at least 12", s.Facts["toolCount"])
		}
		// What the stdio process wrote is visible to the HTTP server.
		id, _ := s.Facts["messageId"].(string)
		m := decode[struct{ From, Content string }](t, callTool(t, masterToken, "", "get_message", map[string]any{"messageId": id}))
		if m.From != "alice" || !strings.Contains(m.Content, marker) {
			t.Errorf("message %s sent over stdio, read over HTTP: %+v", id, m)
		}
	})

	t.Run("token", func(t *testing.T) {
		s := runClient(t, "stdio.mjs", "token", map[string]any{
			"bin": binPath, "dataDir": srv.dataDir, "marker": "tok", "masterToken": masterToken,
			"token": createToken(t, "default", "alice"),
		})
		if s.Passed < 8 {
			t.Errorf("only %d checks passed", s.Passed)
		}
	})
}

// expectedTools are the profile and messaging tools. Other capabilities add
// tools of their own; these must be there.
var expectedTools = []string{"check_messages", "delete_message", "get_message", "get_profile", "list_broadcast_status",
	"list_messages", "list_peers", "mark_as_read", "send_message", "set_summary", "update_profile", "whoami"}

// TestInspectorCLI drives the server with the MCP Inspector CLI.
func TestInspectorCLI(t *testing.T) {
	requireNode(t)
	auth := "Authorization: Bearer " + masterToken

	t.Run("tools/list", func(t *testing.T) {
		out, errOut, err := runInspector(t, "--method", "tools/list", "--header", auth)
		if err != nil {
			t.Fatalf("inspector tools/list: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
		}
		var res struct {
			Tools []struct {
				Name        string         `json:"name"`
				Description string         `json:"description"`
				Annotations map[string]any `json:"annotations"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("inspector output is not JSON: %v\n%s", err, out)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
			if tool.Description == "" || len(tool.Annotations) == 0 || tool.InputSchema["type"] != "object" {
				t.Errorf("tool %s: description %q, annotations %v, inputSchema.type %v", tool.Name, tool.Description, tool.Annotations, tool.InputSchema["type"])
			}
		}
		for _, want := range expectedTools {
			if !slices.Contains(names, want) {
				t.Errorf("inspector tools/list lacks %s; it lists %v", want, names)
			}
		}
	})

	t.Run("tools/call whoami", func(t *testing.T) {
		out, errOut, err := runInspector(t, "--method", "tools/call", "--tool-name", "whoami", "--header", auth)
		if err != nil {
			t.Fatalf("inspector tools/call whoami: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
		}
		var res struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Tenant string   `json:"tenant"`
				Admin  bool     `json:"admin"`
				ActsAs []string `json:"actsAs"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil {
			t.Fatalf("inspector output is not JSON: %v\n%s", err, out)
		}
		if res.IsError || res.StructuredContent.Tenant != "default" || !res.StructuredContent.Admin || !slices.Equal(res.StructuredContent.ActsAs, []string{"*"}) {
			t.Errorf("whoami via inspector = %s", out)
		}
	})

	t.Run("tools/call send_message with args", func(t *testing.T) {
		tenant := newTenant("insp")
		out, errOut, err := runInspector(t, "--method", "tools/call", "--tool-name", "send_message",
			"--tool-arg", "from=alice", "--tool-arg", "channel=bob", "--tool-arg", "content=sent by the inspector",
			"--header", auth, "--header", "X-VP-Tenant: "+tenant)
		if err != nil {
			t.Fatalf("inspector tools/call send_message: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
		}
		var res struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				MessageID string `json:"messageId"`
			} `json:"structuredContent"`
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || res.IsError || res.StructuredContent.MessageID == "" {
			t.Fatalf("send_message via inspector: %v\n%s", err, out)
		}
		inbox := decode[struct {
			Messages []struct{ MessageID, From, Content string }
		}](t, callTool(t, masterToken, tenant, "check_messages", map[string]any{"recipient": "bob"}))
		if len(inbox.Messages) != 1 || inbox.Messages[0].MessageID != res.StructuredContent.MessageID ||
			inbox.Messages[0].From != "alice" || inbox.Messages[0].Content != "sent by the inspector" {
			t.Errorf("bob's inbox in %s = %+v", tenant, inbox.Messages)
		}
	})

	t.Run("tools/call error", func(t *testing.T) {
		out, errOut, err := runInspector(t, "--method", "tools/call", "--tool-name", "list_peers",
			"--tool-arg", "fields=medium", "--header", auth)
		// Inspector 2 exits 5 (tool_is_error) on an isError result.
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 5 || !strings.Contains(errOut, "tool_is_error") {
			t.Fatalf("inspector: %v, want exit status 5 (tool_is_error)\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
		}
		if !strings.Contains(out, `"isError": true`) || !strings.Contains(out, "fields") {
			t.Errorf("list_peers fields=medium via inspector: want an isError result naming fields, got\n%s", out)
		}
	})

	t.Run("no token", func(t *testing.T) {
		// --stored-auth-only: report the 401 instead of starting an
		// interactive OAuth sign-in.
		out, errOut, err := runInspector(t, "--method", "tools/list", "--stored-auth-only")
		if err == nil {
			t.Fatalf("inspector without a token succeeded:\n%s", out)
		}
		if !strings.Contains(out+errOut, "invalid_token") {
			t.Errorf("inspector without a token: want the server's invalid_token error, got\nstdout:\n%s\nstderr:\n%s", out, errOut)
		}
	})
}
