package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/auth"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/profile"
)

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestGuardStdioKeepsTheSessionAlive: over stdio (the SDK's IOTransport on
// pipes, driven by hand as a client writes it), a 10,000-deep argument is
// answered with an error naming it, and the session goes on; unguarded,
// the SDK's decoder ends the session.
func TestGuardStdioKeepsTheSessionAlive(t *testing.T) {
	p := auth.MasterPrincipal("acme")
	for _, guarded := range []bool{true, false} {
		t.Run(map[bool]string{true: "guarded", false: "unguarded"}[guarded], func(t *testing.T) {
			cs := mcpserver.New(mcpserver.Options{Toolsets: []mcpserver.Toolset{mcpserver.ProfileTools(&profile.Service{})}, LocalPrincipal: &p, Version: "t"})
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			var r io.Reader = inR
			var w io.Writer = outW
			if guarded {
				r, w = mcpserver.GuardStdio(inR, outW)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = cs.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(r), Writer: nopWriteCloser{w}}) }()
			lines := make(chan string, 16)
			go func() {
				sc := bufio.NewScanner(outR)
				sc.Buffer(nil, 1<<20)
				for sc.Scan() {
					lines <- sc.Text()
				}
				close(lines)
			}()
			// Writes go through a goroutine: once the SDK stops reading (the
			// unguarded case) a pipe write would block the test.
			sends := make(chan string, 16)
			go func() {
				for s := range sends {
					if _, err := inW.Write([]byte(s + "\n")); err != nil {
						return
					}
				}
			}()
			t.Cleanup(func() {
				close(sends)
				_ = inR.Close()
				_ = outW.Close()
			})
			send := func(s string) { sends <- s }
			wait := 5 * time.Second
			if !guarded {
				wait = time.Second // it will not answer
			}
			recv := func() (string, bool) {
				select {
				case l, ok := <-lines:
					return l, ok
				case <-time.After(wait):
					return "", false
				}
			}
			send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`)
			if l, ok := recv(); !ok || !strings.Contains(l, `"id":1`) {
				t.Fatalf("initialize: %q", l)
			}
			send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
			deep := strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000)
			send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{"deep":` + deep + `}}}`)
			l, ok := recv()
			if !guarded {
				if ok && strings.Contains(l, `argument \"deep\"`) {
					t.Fatalf("unguarded, the SDK named the argument: %q", l)
				}
				return
			}
			var rpc struct {
				ID    int `json:"id"`
				Error struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if !ok || json.Unmarshal([]byte(l), &rpc) != nil || rpc.ID != 2 || rpc.Error.Code != -32602 || !strings.Contains(rpc.Error.Message, `argument "deep"`) {
				t.Fatalf("deep call: %q", l)
			}
			send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`)
			if l, ok := recv(); !ok || !strings.Contains(l, `"id":3`) || !strings.Contains(l, "acme") {
				t.Fatalf("the session did not go on: %q", l)
			}
		})
	}
}
