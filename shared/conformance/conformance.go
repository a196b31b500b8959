// Package conformance holds the fixtures the official MCP conformance suite
// (@modelcontextprotocol/conformance, its server scenarios) calls by exact
// name: tools, resources, prompts, completion and subscriptions. Only
// functions/vantagepeers/conformance_fixtures.go (build tag conformance)
// imports it, so a release binary does not link it (its test checks the
// release build's dependencies).
//
// The fixtures follow the suite's descriptions and the go-sdk's own
// conformance server (go-sdk conformance/everything-server), on this
// project's transport: stateless Streamable HTTP with JSON responses. What
// that transport cannot carry (requests from the server, notifications
// during a call) is listed with the reason in tests/conformance-*.yml.
package conformance

//lint:file-ignore SA1019 the suite checks sampling, logging and roots, which the protocol deprecates (SEP-2577) but still defines: these fixtures must use them.

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configures Add.
type Options struct {
	// StateKey signs the requestState of the input-required fixtures
	// (HMAC-SHA256). Empty: a random key, so a state only holds for this
	// process, which is all one suite run needs.
	StateKey []byte
}

// ServerOptions sets the handlers the SDK takes only at construction:
// completion/complete and resources/(un)subscribe. The SDK derives the
// completions and resources.subscribe capabilities from them.
func ServerOptions(so *mcp.ServerOptions) {
	so.CompletionHandler = complete
	// A stateless server forgets a subscription with its request; the
	// suite checks that both calls are accepted.
	so.SubscribeHandler = func(context.Context, *mcp.SubscribeRequest) error { return nil }
	so.UnsubscribeHandler = func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
}

// Add registers every fixture on s.
func Add(s *mcp.Server, o Options) {
	key := o.StateKey
	if len(key) == 0 {
		key = make([]byte, 32)
		_, _ = rand.Read(key) // never fails (crypto/rand, Go 1.24+)
	}
	addContentTools(s)
	addSessionTools(s)
	addStatelessTools(s)
	addInputRequired(s, state{key: key})
	addResources(s)
	addPrompts(s)
}

// The suite checks that data and mimeType are present and decode; these
// are the go-sdk's and the TypeScript everything-server's (a 1x1 PNG, a
// silent WAV).
const (
	pngBase64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
	wavBase64 = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
)

func decoded(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err) // a constant above
	}
	return b
}

var emptyObject = json.RawMessage(`{"type":"object"}`)

// tool registers a fixture whose handler reads its arguments itself: the
// suite sends the exact shapes it means to test.
func tool(s *mcp.Server, name, description string, schema json.RawMessage, h mcp.ToolHandler) {
	if schema == nil {
		schema = emptyObject
	}
	s.AddTool(&mcp.Tool{Name: name, Description: description, InputSchema: schema}, h)
}

func text(t string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
}

func addContentTools(s *mcp.Server) {
	png, wav := decoded(pngBase64), decoded(wavBase64)
	embedded := func(uri string) *mcp.EmbeddedResource {
		return &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: uri, MIMEType: "text/plain", Text: "This is an embedded resource content."}}
	}
	tool(s, "test_simple_text", "returns one text block", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("This is a simple text response for testing."), nil
	})
	tool(s, "test_image_content", "returns one image block", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: png, MIMEType: "image/png"}}}, nil
	})
	tool(s, "test_audio_content", "returns one audio block", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: wav, MIMEType: "audio/wav"}}}, nil
	})
	tool(s, "test_embedded_resource", "returns one embedded resource", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{embedded("test://embedded-resource")}}, nil
	})
	tool(s, "test_multiple_content_types", "returns text, image and resource", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: png, MIMEType: "image/png"}, embedded("test://mixed-content-resource")}}, nil
	})
	tool(s, "test_error_handling", "returns an isError result", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("This tool intentionally returns an error for testing")
		r.IsError = true
		return r, nil
	})
	// SEP-1613/SEP-2106: the 2020-12 keywords must reach tools/list verbatim.
	tool(s, "json_schema_2020_12_tool", "tool with JSON Schema 2020-12 features", json.RawMessage(`{
		"$schema": "https://json-schema.org/draft/2020-12/schema",
		"type": "object",
		"$defs": {"address": {"$anchor": "addressDef", "type": "object",
			"properties": {"street": {"type": "string"}, "city": {"type": "string"}}}},
		"properties": {
			"name": {"type": "string"},
			"address": {"$ref": "#/$defs/address"},
			"contactMethod": {"type": "string", "enum": ["phone", "email"]},
			"phone": {"type": "string"},
			"email": {"type": "string"}
		},
		"allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
		"if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
		"then": {"required": ["phone"]},
		"else": {"required": ["email"]},
		"additionalProperties": false
	}`), func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(fmt.Sprintf("JSON Schema 2020-12 tool called with: %s", r.Params.Arguments)), nil
	})
	// SEP-2243: a string argument mirrored into the Mcp-Param-Region header,
	// which the SDK checks against the body.
	tool(s, "test_x_mcp_header", "argument region is mirrored into Mcp-Param-Region", json.RawMessage(`{
		"type": "object",
		"properties": {
			"region": {"type": "string", "x-mcp-header": "Region"},
			"level": {"type": "integer"}
		}
	}`), func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var a struct {
			Region string `json:"region"`
		}
		_ = json.Unmarshal(r.Params.Arguments, &a)
		return text("region=" + a.Region), nil
	})
}

// addSessionTools are the fixtures that talk back to the client during the
// call: log messages, progress, sampling and elicitation requests.
func addSessionTools(s *mcp.Server) {
	tool(s, "test_tool_with_logging", "logs three info messages during the call", nil, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		for _, m := range []string{"Tool execution started", "Tool processing data", "Tool execution completed"} {
			_ = r.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: m})
		}
		return text("Tool with logging executed successfully"), nil
	})
	tool(s, "test_tool_with_progress", "reports progress 0, 50 and 100 of 100", nil, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := r.Params.GetProgressToken()
		if tok != nil {
			for _, p := range []float64{0, 50, 100} {
				_ = r.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: p, Total: 100,
					Message: fmt.Sprintf("Completed step %.0f of 100", p)})
			}
		}
		return text(fmt.Sprint(tok)), nil
	})
	tool(s, "test_sampling", "asks the client's model to answer prompt", json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`),
		func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Prompt string `json:"prompt"`
			}
			_ = json.Unmarshal(r.Params.Arguments, &a)
			res, err := r.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 100,
				Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: a.Prompt}}}})
			if err != nil {
				return nil, fmt.Errorf("sampling failed: %w", err)
			}
			if t, ok := res.Content.(*mcp.TextContent); ok {
				return text("LLM response: " + t.Text), nil
			}
			return text("LLM response: (non-text response)"), nil
		})
	elicit := func(name, description string, params func(*mcp.CallToolRequest) *mcp.ElicitParams) {
		tool(s, name, description, nil, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := r.Session.Elicit(ctx, params(r))
			if err != nil {
				return nil, fmt.Errorf("elicitation failed: %w", err)
			}
			return text(fmt.Sprintf("Elicitation result: action=%s, content=%v", res.Action, res.Content)), nil
		})
	}
	elicit("test_elicitation", "asks the user for a username", func(r *mcp.CallToolRequest) *mcp.ElicitParams {
		var a struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(r.Params.Arguments, &a)
		return &mcp.ElicitParams{Message: a.Message, RequestedSchema: &jsonschema.Schema{Type: "object",
			Properties: map[string]*jsonschema.Schema{"username": {Type: "string", Description: "Your preferred username"}},
			Required:   []string{"username"}}}
	})
	elicit("test_elicitation_sep1034_defaults", "elicitation with default values (SEP-1034)", func(*mcp.CallToolRequest) *mcp.ElicitParams {
		return &mcp.ElicitParams{Message: "Test defaults for primitives", RequestedSchema: json.RawMessage(`{"type":"object","properties":{
			"name":{"type":"string","description":"User name","default":"John Doe"},
			"age":{"type":"integer","description":"User age","default":30},
			"score":{"type":"number","description":"User score","default":95.5},
			"status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
			"verified":{"type":"boolean","description":"Verification status","default":true}}}`)}
	})
	elicit("test_elicitation_sep1330_enums", "elicitation with enum schemas (SEP-1330)", func(*mcp.CallToolRequest) *mcp.ElicitParams {
		return &mcp.ElicitParams{Message: "Test enum schemas", RequestedSchema: json.RawMessage(`{"type":"object","properties":{
			"untitledSingle":{"type":"string","enum":["option1","option2","option3"]},
			"titledSingle":{"type":"string","oneOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
			"legacyEnum":{"type":"string","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
			"untitledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
			"titledMulti":{"type":"array","minItems":1,"maxItems":3,"items":{"anyOf":[{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]}}}}`)}
	})
}

// addStatelessTools are the SEP-2575 diagnostics of the server-stateless
// scenario (2026-07-28).
func addStatelessTools(s *mcp.Server) {
	tool(s, "test_missing_capability", "needs the client's sampling capability", nil, func(_ context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if c := r.ClientCapabilities(); c != nil && c.Sampling != nil {
			return text("Client declared the sampling capability; tool executed."), nil
		}
		return nil, missingCapability(&mcp.ClientCapabilities{Sampling: &mcp.SamplingCapabilities{}}, "sampling")
	})
	tool(s, "test_streaming_elicitation", "answers on the response stream with its result only", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("stream observed: result frames only, no top-level requests"), nil
	})
	tool(s, "test_logging_tool", "logs once; the SDK drops it unless the request set a log level", nil, func(ctx context.Context, r *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		_ = r.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: "test_logging_tool executed"})
		return text("Log attempted."), nil
	})
	// Each call re-adds a tool or prompt: the SDK sends list_changed to the
	// open subscriptions/listen streams.
	tool(s, "test_trigger_tool_change", "changes the tool list", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tool(s, "test_transient_tool", "added by test_trigger_tool_change", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text("transient"), nil
		})
		return text("tools_list_changed published"), nil
	})
	tool(s, "test_trigger_prompt_change", "changes the prompt list", nil, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.AddPrompt(&mcp.Prompt{Name: "test_transient_prompt", Description: "added by test_trigger_prompt_change"},
			func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				return &mcp.GetPromptResult{}, nil
			})
		return text("prompts_list_changed published"), nil
	})
}

// complete offers the values of the prompt argument that start with what
// was typed.
func complete(_ context.Context, r *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var out []string
	for _, v := range []string{"paris", "park", "party", "test", "testing"} {
		if strings.HasPrefix(v, r.Params.Argument.Value) {
			out = append(out, v)
		}
	}
	return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: append([]string{}, out...), Total: len(out)}}, nil
}
