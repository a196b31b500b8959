package tests

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

var keywordTools = []string{"search_messages_by_keyword", "search_tasks_by_keyword", "search_briefing_notes_by_keyword", "search_components"}

type keywordPage struct {
	Items []struct {
		ID    string  `json:"_id"`
		Name  string  `json:"name"`
		Score float64 `json:"score"`
	} `json:"items"`
	Count int `json:"count"`
}

// seedKeyword writes one row of each searchable kind, all with word in it,
// through the tools, as the master acting in tenant; it returns the ids
// (the component's name) by tool.
func seedKeyword(t *testing.T, url, tenant, word string) map[string]string {
	t.Helper()
	call := func(name string, args map[string]any) json.RawMessage {
		t.Helper()
		r, err := tryCallToolAt(url, masterToken, tenant, name, args)
		if err != nil {
			t.Fatal(err)
		}
		if r.IsError {
			t.Fatalf("%s: %s", name, r.text())
		}
		return r.StructuredContent
	}
	var sent struct{ MessageID string }
	var task, note struct {
		ID string `json:"_id"`
	}
	_ = json.Unmarshal(call("send_message", map[string]any{"from": "alice", "channel": "bob", "content": "the " + word + " rollout is done"}), &sent)
	_ = json.Unmarshal(call("create_task", map[string]any{"createdBy": "alice", "title": "Review the " + word + " rollout", "assignedTo": "bob", "priority": "low"}), &task)
	_ = json.Unmarshal(call("create_briefing_note", map[string]any{"createdBy": "alice", "title": word + " retro", "topic": "retro", "participants": []string{"alice"}, "content": "fine"}), &note)
	call("register_component", map[string]any{"createdBy": "alice", "name": word + "-agent", "type": "agent", "content": "x"})
	return map[string]string{
		"search_messages_by_keyword": sent.MessageID, "search_tasks_by_keyword": task.ID,
		"search_briefing_notes_by_keyword": note.ID, "search_components": word + "-agent",
	}
}

// checkKeyword asserts that each keyword tool returns exactly the seeded row.
func checkKeyword(t *testing.T, url, tenant, word string, want map[string]string) {
	t.Helper()
	for _, tool := range keywordTools {
		r, err := tryCallToolAt(url, masterToken, tenant, tool, map[string]any{"query": word})
		if err != nil {
			t.Fatal(err)
		}
		p := decode[keywordPage](t, r)
		got := ""
		if len(p.Items) == 1 {
			got = p.Items[0].ID
			if tool == "search_components" {
				got = p.Items[0].Name
			}
		}
		if p.Count != 1 || got != want[tool] || p.Items[0].Score <= 0 {
			t.Errorf("%s %q in %s = %s, want the one row %s", tool, word, tenant, r.StructuredContent, want[tool])
		}
	}
}

// TestKeywordSearchOverHTTP: the four keyword tools are listed and find a
// row the moment it is written, in its tenant only.
func TestKeywordSearchOverHTTP(t *testing.T) {
	r, err := tryCallRaw(masterToken, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range r.Tools {
		names = append(names, tool.Name)
	}
	for _, want := range keywordTools {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s", want)
		}
	}
	tenant, other := newTenant("kw"), newTenant("kwother")
	want := seedKeyword(t, srv.url, tenant, "marmot")
	checkKeyword(t, srv.url, tenant, "marmot", want)
	for _, tool := range keywordTools {
		p := decode[keywordPage](t, callTool(t, masterToken, other, tool, map[string]any{"query": "marmot"}))
		if p.Count != 0 {
			t.Errorf("%s in another tenant found %d rows", tool, p.Count)
		}
	}
}

// TestKeywordIndexRebuiltAtStart: the search index is derived data. A
// server started on a data dir whose index file is gone indexes the
// tenants' messages, tasks, briefing notes and components again.
func TestKeywordIndexRebuiltAtStart(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	env := map[string]string{"VP_MASTER_TOKEN": masterToken}
	s, err := startServer(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	tenant := newTenant("kwrebuild")
	createTokenIn(t, dir, tenant, "alice") // the start-up job finds tenants through their tokens
	want := seedKeyword(t, s.url, tenant, "pangolin")
	if err := s.stop(15 * time.Second); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"search.db", "search.db-wal", "search.db-shm"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	s, err = startServer(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := s.stop(15 * time.Second); err != nil {
			t.Error(err)
		}
	}()
	// The backfill runs in the background at start: wait for it.
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := tryCallToolAt(s.url, masterToken, tenant, "search_tasks_by_keyword", map[string]any{"query": "pangolin"})
		if err != nil {
			t.Fatal(err)
		}
		if p := decode[keywordPage](t, r); p.Count == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index was not rebuilt within 20s:\n%s", s.logTail())
		}
		time.Sleep(100 * time.Millisecond)
	}
	checkKeyword(t, s.url, tenant, "pangolin", want)
}

// tryCallToolAt is tryCallTool against the server at url (srv's or
// another), without touching the shared srv.
func tryCallToolAt(url, token, tenant, name string, args any) (*toolResult, error) {
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": rpcID.Add(1), "method": "tools/call",
		"params": map[string]any{"name": name, "arguments": args}})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-VP-Tenant", tenant)
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	var r rpcResponse
	if err := json.Unmarshal(b, &r); err != nil || r.Result == nil {
		return nil, fmt.Errorf("tools/call %s: HTTP %d: %s", name, resp.StatusCode, b)
	}
	return r.Result, nil
}

// createTokenIn creates a token of tenant in dataDir (createToken's, for
// another data dir than srv's).
func createTokenIn(t *testing.T, dataDir, tenant, as string) {
	t.Helper()
	cmd := exec.Command(binPath, "token", "create", "--data-dir", dataDir, "--tenant", tenant, "--as", as, "--read", "*", "--write", "*")
	cmd.Env = childEnv(map[string]string{"VP_MASTER_TOKEN": masterToken})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("token create: %v\n%s", err, out)
	}
}
