package mcpserver_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/vantagepeers/vantagepeers/shared/emf"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(t *testing.T) []map[string]any {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(l.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// One Info line per tool call naming the tool, tenant, acting
// orchestrator, outcome and duration; the SDK's own records only at Debug;
// with EMF, the line carries the call's CloudWatch figures.
func TestEachToolCallLogsOneLine(t *testing.T) {
	for _, withEMF := range []bool{false, true} {
		var buf lockedBuffer
		log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
		cs := connect(t, vp.Principal{Tenant: "acme", Orchestrators: []string{"alice"}, TokenID: "tok_a"}, func(o *mcpserver.Options) {
			o.Logger = log
			if withEMF {
				o.EMF = &emf.Recorder{Function: "fn-mcp"}
			}
		})
		calls := []struct {
			tool    string
			args    map[string]any
			outcome string
		}{
			{"set_summary", map[string]any{"summary": "on it"}, "ok"},
			{"get_task", map[string]any{"taskId": "tsk_nope"}, "not_found"},
			{"send_message", map[string]any{"channel": "bob", "content": "hi", "from": "carol"}, "forbidden"},
			{"create_task", map[string]any{"title": 42}, "invalid_argument"},
		}
		for _, c := range calls {
			call(t, cs, c.tool, c.args)
		}
		var got []map[string]any
		for _, l := range buf.lines(t) {
			if l["msg"] == "tool call" {
				got = append(got, l)
			} else if l["level"] == "INFO" {
				t.Errorf("an Info line that is not a tool call: %v", l)
			}
		}
		if len(got) != len(calls) {
			t.Fatalf("%d tool call lines for %d calls: %v", len(got), len(calls), got)
		}
		for i, c := range calls {
			l := got[i]
			if l["tool"] != c.tool || l["outcome"] != c.outcome || l["tenant"] != "acme" || l["orchestrator"] != "alice" || l["tokenId"] != "tok_a" {
				t.Errorf("line %d = %v, want tool %s outcome %s for acme/alice", i, l, c.tool, c.outcome)
			}
			if d, ok := l["durationMs"].(float64); !ok || d < 0 {
				t.Errorf("line %d: durationMs %v", i, l["durationMs"])
			}
			if _, has := l["_aws"]; has != withEMF {
				t.Errorf("line %d: _aws present %v, want %v", i, has, withEMF)
			}
			if withEMF {
				wantErr := 0.0
				if c.outcome != "ok" {
					wantErr = 1
				}
				if l["Tool"] != c.tool || l["Calls"] != 1.0 || l["Errors"] != wantErr || l["Faults"] != 0.0 || l["FunctionName"] != "fn-mcp" {
					t.Errorf("line %d EMF figures: %v", i, l)
				}
			}
		}
		for _, l := range buf.lines(t) {
			if s, _ := l["msg"].(string); strings.Contains(s, "server connecting") || strings.Contains(s, "disconnected") {
				t.Errorf("SDK chatter at Info: %v", l)
			}
		}
	}
}
