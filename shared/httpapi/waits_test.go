package httpapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/activity"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
)

// nothing is a source where nothing ever arrives.
type nothing struct{}

func (nothing) Kind() string { return activity.KindMessages }
func (nothing) Pending(context.Context, activity.Query) ([]activity.Item, bool, error) {
	return nil, false, nil
}

// TestWaitsDoNotTakeTheTokensRequestSlots: a token whose waits fill its
// waiting budget still has every one of its request slots for other calls
// (before, two waits took both slots and the next call got 429); a wait
// beyond the budget is refused at once, naming the limit.
func TestWaitsDoNotTakeTheTokensRequestSlots(t *testing.T) {
	f := start(t, func(o *httpapi.Options) {
		o.MaxConcurrentPerToken = 2
		o.MaxWaitsPerToken = 2
		o.MCP = mcpserver.New(mcpserver.Options{Version: "t",
			Toolsets: []mcpserver.Toolset{mcpserver.ActivityTools(activity.New(activity.Options{Sources: []activity.Source{nothing{}}}))}})
	})
	cs := client(t, f.url+"/mcp", map[string]string{"Authorization": "Bearer " + f.alice})
	wait := func(ms int) <-chan error {
		out := make(chan error, 1)
		go func() {
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "wait_for_activity", Arguments: map[string]any{"timeoutMs": ms}})
			if err == nil && res.IsError {
				err = toolError(res)
			}
			out <- err
		}()
		return out
	}
	held := []<-chan error{wait(3000), wait(3000)}
	time.Sleep(300 * time.Millisecond) // both wait
	for i := range 2 {
		if status, _, body := post(t, f, "Bearer "+f.alice, toolsList); status != 200 {
			t.Fatalf("call %d of a token with 2 waits: %d %.300s", i, status, body)
		}
	}
	start := time.Now()
	err := <-wait(3000)
	if err == nil || !strings.Contains(err.Error(), "2 calls of wait_for_activity waiting") || time.Since(start) > time.Second {
		t.Fatalf("a third wait: %v after %v; want refused at once naming the limit of 2", err, time.Since(start))
	}
	for _, h := range held {
		if err := <-h; err != nil {
			t.Fatal(err)
		}
	}
	if err := <-wait(100); err != nil {
		t.Fatalf("after the waits returned their slots: %v", err)
	}
}

func toolError(res *mcp.CallToolResult) error {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return &toolErr{b.String()}
}

type toolErr struct{ s string }

func (e *toolErr) Error() string { return e.s }
