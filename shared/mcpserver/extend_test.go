package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

// TestExtendReachesTheSDKOptions: Options.Extend sets what the SDK takes
// only at construction (here a completion handler, as the conformance build
// does), and it shows in the capabilities; without it the server offers no
// completions.
func TestExtendReachesTheSDKOptions(t *testing.T) {
	ctx := context.Background()
	p := vp.Principal{Tenant: "t1", Orchestrators: []string{"alice"}}
	words := []string{"paris", "park", "party", "rome"}
	complete := func(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		var out []string
		for _, w := range words {
			if strings.HasPrefix(w, r.Params.Argument.Value) {
				out = append(out, w)
			}
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: out, Total: len(out)}}, nil
	}
	params := &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "any"},
		Argument: mcp.CompleteParamsArgument{Name: "city", Value: "par"}}

	extended := connect(t, p, func(o *mcpserver.Options) {
		o.Extend = func(so *mcp.ServerOptions) { so.CompletionHandler = complete }
	})
	if caps := extended.InitializeResult().Capabilities; caps.Completions == nil {
		t.Error("Extend set a completion handler but the server declares no completions capability")
	}
	res, err := extended.Complete(ctx, params)
	if err != nil {
		t.Fatalf("completion/complete with Extend: %v", err)
	}
	if got := strings.Join(res.Completion.Values, ","); got != "paris,park,party" {
		t.Errorf("completion values = %q, want the three words starting with par", got)
	}

	plain := connect(t, p)
	if caps := plain.InitializeResult().Capabilities; caps.Completions != nil {
		t.Error("a server without Extend declares completions")
	}
	if _, err := plain.Complete(ctx, params); err == nil {
		t.Error("completion/complete answered on a server without a completion handler")
	}
}
