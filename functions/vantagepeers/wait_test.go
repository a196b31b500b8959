package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/testproc"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// waitServer is `vantagepeers serve` on a fresh data dir, with a token per
// agent.
type waitServer struct {
	base, dir string
	tokens    map[string]string
}

func startWaitServer(t testing.TB, agents ...string) *waitServer {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Setenv("VP_MASTER_TOKEN", strings.Repeat("ab", 32))
	t.Setenv("VP_SQLITE_SYNC", "NORMAL")
	t.Setenv("VP_PUBLIC_BASE_URL", "")
	t.Setenv("PUBLIC_BASE_URL", "")
	w := &waitServer{dir: filepath.Join(t.TempDir(), "data"), tokens: map[string]string{}}
	a, err := openApp(ctx, w.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range agents {
		rd, wr := defaultGrants(name)
		secret, _, err := a.Tokens.Create(ctx, auth.Spec{Tenant: vp.DefaultTenant, ActsAs: []string{name}, ReadPrefixes: rd, WritePrefixes: wr})
		if err != nil {
			t.Fatal(err)
		}
		w.tokens[name] = secret
	}
	_ = a.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	errc := make(chan error, 1)
	var stderr bytes.Buffer
	go func() {
		errc <- run(ctx, []string{"serve", "--addr", addr, "--data-dir", w.dir}, strings.NewReader(""), io.Discard, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	w.base = "http://" + addr
	for deadline := time.Now().Add(20 * time.Second); ; {
		if r, err := http.Get(w.base + "/health"); err == nil {
			_ = r.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve did not start: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return w
}

// client is an MCP session over HTTP with agent's token.
func (w *waitServer) client(t testing.TB, agent string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: agent}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: w.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{w.tokens[agent]}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// stdioChild is `vantagepeers stdio` on the same data dir in another
// process, as a host starts it (no VP_TOKEN: the local admin).
func (w *waitServer) stdioChild(t testing.TB) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMainExitStatus$")
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "VP_TOKEN=") }),
		"VP_TEST_MAIN_ARGS=stdio --data-dir "+w.dir)
	testproc.DieWithParent(cmd)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// call calls a tool and decodes its structured result into out; a tool
// error is returned as an error with its text.
func call(cs *mcp.ClientSession, name string, args map[string]any, out any) error {
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err
	}
	if res.IsError {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return fmt.Errorf("%s: %s", name, b.String())
	}
	if out == nil {
		return nil
	}
	b, _ := json.Marshal(res.StructuredContent)
	return json.Unmarshal(b, out)
}

type waited struct {
	res activity.Result
	err error
	at  time.Time
}

// waitOn starts a wait_for_activity call and returns its answer.
func waitOn(cs *mcp.ClientSession, args map[string]any) <-chan waited {
	out := make(chan waited, 1)
	go func() {
		var r activity.Result
		err := call(cs, "wait_for_activity", args, &r)
		out <- waited{r, err, time.Now()}
	}()
	return out
}

func sendTo(t testing.TB, cs *mcp.ClientSession, args map[string]any) time.Time {
	t.Helper()
	if err := call(cs, "send_message", args, nil); err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// wait_for_activity end to end: over HTTP and stdio, woken within 100 ms
// of a send from another HTTP client, from another process on the data
// dir (stdio), and in that process by a send over HTTP; at the timeout it
// answers with nothing.
func TestWaitForActivityWokenOverHTTPAndStdio(t *testing.T) {
	w := startWaitServer(t, "alice", "bob")
	alice, bob, other := w.client(t, "alice"), w.client(t, "bob"), w.stdioChild(t)
	for _, c := range []struct {
		name         string
		waiter, from *mcp.ClientSession
		waitArgs     map[string]any
		sendArgs     map[string]any
	}{
		{"HTTP client to HTTP waiter", bob, alice, nil, map[string]any{"channel": "bob", "content": "over http"}},
		{"other process (stdio) to HTTP waiter", bob, other, nil, map[string]any{"from": "alice", "channel": "bob", "content": "from stdio"}},
		{"HTTP client to a waiter in the other process", other, alice, map[string]any{"recipient": "bob"}, map[string]any{"channel": "bob", "content": "to stdio"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"timeoutMs": 10_000, "since": time.Now().UnixMilli()}
			for k, v := range c.waitArgs {
				args[k] = v
			}
			got := waitOn(c.waiter, args)
			time.Sleep(300 * time.Millisecond)
			select {
			case a := <-got:
				t.Fatalf("answered before the send: %+v, %v", a.res, a.err)
			default:
			}
			sent := sendTo(t, c.from, c.sendArgs)
			a := <-got
			if a.err != nil || a.res.Count != 1 || a.res.Items[0].Title != c.sendArgs["content"] || a.res.Items[0].From != "alice" {
				t.Fatalf("got %+v, err %v", a.res, a.err)
			}
			lat := a.at.Sub(sent)
			t.Logf("woken %v after send_message returned", lat)
			if lat > 100*time.Millisecond {
				t.Fatalf("woken %v after the send; want within 100 ms", lat)
			}
		})
	}
	start := time.Now()
	a := <-waitOn(bob, map[string]any{"timeoutMs": 300, "since": time.Now().UnixMilli()})
	if took := time.Since(start); a.err != nil || !a.res.TimedOut || a.res.Count != 0 || took < 300*time.Millisecond || took > 2*time.Second {
		t.Fatalf("nothing to wait for: %+v, err %v, after %v; want timedOut after 300 ms", a.res, a.err, took)
	}
	var inbox struct {
		Count int `json:"count"`
	}
	if err := call(bob, "check_messages", nil, &inbox); err != nil || inbox.Count != 3 {
		t.Fatalf("check_messages: %d unread, %v; want the 3 messages still unread", inbox.Count, err)
	}
}
