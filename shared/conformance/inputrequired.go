package conformance

//lint:file-ignore SA1019 the suite checks sampling, logging and roots, which the protocol deprecates (SEP-2577) but still defines: these fixtures must use them.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The input-required fixtures (SEP-2322, 2026-07-28): a call answers with
// the input it needs (elicitation, sampling, roots) and an opaque
// requestState; the client retries with the answers and the state. The
// server keeps nothing between rounds, so the state carries what it must
// remember, signed so that a changed state is refused.

// state signs and checks requestState values.
type state struct{ key []byte }

func (s state) mac(payload string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(payload))
	return m.Sum(nil)
}

// sign returns payload with its MAC: "<payload b64>.<mac b64>".
func (s state) sign(payload string) string {
	enc := base64.RawURLEncoding
	return enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(s.mac(payload))
}

// open returns the payload of a state sign made; ok is false for anything
// else (tampered, truncated, from another key).
func (s state) open(v string) (payload string, ok bool) {
	enc := base64.RawURLEncoding
	p, m, found := strings.Cut(v, ".")
	if !found {
		return "", false
	}
	pb, err1 := enc.DecodeString(p)
	mb, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(mb, s.mac(string(pb))) {
		return "", false
	}
	return string(pb), true
}

func invalidState() error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "invalid requestState: not one this server issued, or changed"}
}

// missingCapability is SEP-2575's MissingRequiredClientCapabilityError
// (-32021), which the SDK answers with HTTP 400.
func missingCapability(need *mcp.ClientCapabilities, what string) error {
	data, err := json.Marshal(mcp.MissingRequiredClientCapabilityData{RequiredCapabilities: need})
	if err != nil {
		return err
	}
	return &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities,
		Message: what + " capability required but not declared by the client", Data: data}
}

func objectOf(prop string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{prop: {Type: "string"}}, Required: []string{prop}}
}

func askName() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "What is your name?", RequestedSchema: objectOf("name")}
}

func askConfirm() *mcp.ElicitParams {
	return &mcp.ElicitParams{Message: "Please confirm", RequestedSchema: &jsonschema.Schema{Type: "object",
		Properties: map[string]*jsonschema.Schema{"ok": {Type: "boolean"}}, Required: []string{"ok"}}}
}

func askSampling(prompt string, maxTokens int64) *mcp.CreateMessageParams {
	return &mcp.CreateMessageParams{MaxTokens: maxTokens,
		Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: prompt}}}}
}

// accepted is the content of an elicitation the user accepted, else nil.
func accepted(in mcp.InputResponseMap, key string) map[string]any {
	if r, ok := in[key].(*mcp.ElicitResult); ok && r != nil && r.Action == "accept" {
		return r.Content
	}
	return nil
}

// sampled is the first text of a sampling answer.
func sampled(in mcp.InputResponseMap, key string) (string, bool) {
	switch r := in[key].(type) {
	case *mcp.CreateMessageWithToolsResult:
		if r == nil {
			return "", false
		}
		for _, c := range r.Content {
			if t, ok := c.(*mcp.TextContent); ok {
				return t.Text, true
			}
		}
		return "(non-text response)", true
	case *mcp.CreateMessageResult:
		if t, ok := r.Content.(*mcp.TextContent); ok && r != nil {
			return t.Text, true
		}
		return "(non-text response)", r != nil
	}
	return "", false
}

func needs(in mcp.InputRequestMap, requestState string) *mcp.CallToolResult {
	return &mcp.CallToolResult{InputRequests: in, RequestState: requestState}
}

func addInputRequired(s *mcp.Server, st state) {
	tool(s, "test_input_required_result_elicitation", "asks for the caller's name", nil, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if name, _ := accepted(r.Params.InputResponses, "user_name")["name"].(string); name != "" {
			return text(fmt.Sprintf("Hello, %s!", name)), nil
		}
		return needs(mcp.InputRequestMap{"user_name": askName()}, ""), nil
	})
	tool(s, "test_input_required_result_sampling", "asks the client's model a question", nil, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if t, ok := sampled(r.Params.InputResponses, "capital_question"); ok {
			return text("Sampling response: " + t), nil
		}
		return needs(mcp.InputRequestMap{"capital_question": askSampling("What is the capital of France?", 100)}, ""), nil
	})
	tool(s, "test_input_required_result_list_roots", "asks for the client's roots", nil, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if roots, ok := r.Params.InputResponses["client_roots"].(*mcp.ListRootsResult); ok && roots != nil {
			var uris []string
			for _, x := range roots.Roots {
				uris = append(uris, x.URI)
			}
			return text(fmt.Sprintf("Client exposed %d root(s): %s", len(roots.Roots), strings.Join(uris, ", "))), nil
		}
		return needs(mcp.InputRequestMap{"client_roots": &mcp.ListRootsParams{}}, ""), nil
	})
	// confirmWithState is the request-state and tampered-state fixture: the
	// retry must bring back the state unchanged.
	confirmWithState := func(payload string) mcp.ToolHandler {
		return func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r.Params.RequestState != "" {
				if got, ok := st.open(r.Params.RequestState); !ok || got != payload {
					return nil, invalidState()
				}
				if accepted(r.Params.InputResponses, "confirm") != nil {
					return text("state-ok: requestState received and confirmation accepted"), nil
				}
			}
			return needs(mcp.InputRequestMap{"confirm": askConfirm()}, st.sign(payload)), nil
		}
	}
	tool(s, "test_input_required_result_request_state", "round-trips a signed requestState", nil, confirmWithState("request_state"))
	tool(s, "test_input_required_result_tampered_state", "refuses a changed requestState", nil, confirmWithState("tampered_state"))
	tool(s, "test_input_required_result_multiple_inputs", "asks for a name, a greeting and the roots at once", nil, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		in := r.Params.InputResponses
		name, _ := accepted(in, "user_name")["name"].(string)
		greeting, sampledOK := sampled(in, "greeting")
		roots, rootsOK := in["client_roots"].(*mcp.ListRootsResult)
		if name != "" && sampledOK && rootsOK && roots != nil {
			return text(fmt.Sprintf("%s %s — %d root(s) visible", greeting, name, len(roots.Roots))), nil
		}
		return needs(mcp.InputRequestMap{"user_name": askName(), "greeting": askSampling("Generate a greeting", 50),
			"client_roots": &mcp.ListRootsParams{}}, st.sign("multiple_inputs")), nil
	})
	tool(s, "test_input_required_result_multi_round", "two elicitation rounds, the first answer kept in the state", nil, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r.Params.RequestState == "" {
			return needs(mcp.InputRequestMap{"step1": &mcp.ElicitParams{
				Message: "Step 1: What is your name?", RequestedSchema: objectOf("name")}}, st.sign("round=1")), nil
		}
		payload, ok := st.open(r.Params.RequestState)
		if !ok {
			return nil, invalidState()
		}
		if payload == "round=1" {
			name, _ := accepted(r.Params.InputResponses, "step1")["name"].(string)
			if name == "" {
				name = "unknown"
			}
			return needs(mcp.InputRequestMap{"step2": &mcp.ElicitParams{Message: "Step 2: What is your favorite color?",
				RequestedSchema: objectOf("color")}}, st.sign("round=2;name="+name)), nil
		}
		name, isRound2 := strings.CutPrefix(payload, "round=2;name=")
		if !isRound2 {
			return nil, invalidState()
		}
		color, _ := accepted(r.Params.InputResponses, "step2")["color"].(string)
		if color == "" {
			color = "unknown"
		}
		return text(fmt.Sprintf("Multi-round complete: %s likes %s", name, color)), nil
	})
	tool(s, "test_input_required_result_capabilities", "asks only for the input kinds the client declared", nil, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if len(r.Params.InputResponses) > 0 {
			return text("Capability-aware input requests fulfilled"), nil
		}
		c, in := r.ClientCapabilities(), mcp.InputRequestMap{}
		if c != nil && c.Elicitation != nil {
			in["user_name"] = askName()
		}
		if c != nil && c.Sampling != nil {
			in["greeting"] = askSampling("Generate a short greeting", 50)
		}
		if c != nil && (c.RootsV2 != nil || c.Roots.ListChanged) {
			in["client_roots"] = &mcp.ListRootsParams{}
		}
		if len(in) == 0 {
			return text("No declared client capability supports an in-band input request"), nil
		}
		return needs(in, ""), nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "test_input_required_result_prompt", Description: "prompts/get that asks for context first"},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			if c := accepted(r.Params.InputResponses, "user_context"); c != nil {
				v, _ := c["context"].(string)
				return &mcp.GetPromptResult{Description: "A prompt with elicited context",
					Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "Context: " + v}}}}, nil
			}
			return &mcp.GetPromptResult{InputRequests: mcp.InputRequestMap{"user_context": &mcp.ElicitParams{
				Message: "Please provide context for the prompt", RequestedSchema: objectOf("context")}}}, nil
		})
}
