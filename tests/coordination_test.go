package tests

import (
	"testing"
)

// TestCoordinationClient runs wait_for_activity, fail_task, block_task's
// blockedCause and check_messages' stuck work through the official MCP
// TypeScript SDK (clients/coordination.mjs), over Streamable HTTP and over
// stdio — there bob waits in a `vantagepeers stdio` child on the HTTP
// server's data dir, and alice's message, sent over HTTP, wakes him.
func TestCoordinationClient(t *testing.T) {
	requireNode(t)
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			tenant := "default" // the stdio child serves bob's token's tenant on the same data dir
			s := runClient(t, "coordination.mjs", transport, map[string]any{
				"url": srv.url, "bin": binPath, "dataDir": srv.dataDir,
				"tokens": map[string]string{"alice": createToken(t, tenant, "alice"), "bob": createToken(t, tenant, "bob")},
			})
			if s.Passed < 14 {
				t.Errorf("only %d checks passed", s.Passed)
			}
			t.Logf("%s: bob woken %v ms after alice began her send", transport, s.Facts["wakeMs"])
		})
	}
}
