//go:build conformance

package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixtures the official conformance suite calls by name
// (@modelcontextprotocol/conformance, its server scenarios). They exist only
// in a binary built with -tags conformance, never in a release build.

// A 1x1 PNG and a few WAV bytes: the suite checks that data and mimeType are
// present, not what they depict.
var (
	fixturePNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	fixtureWAV = []byte("RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00D\xac\x00\x00\x88X\x01\x00\x02\x00\x10\x00data\x00\x00\x00\x00")
)

func addConformanceFixtures(s *mcp.Server) {
	empty := map[string]any{"type": "object"}
	text := func(t string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: t}}}
	}
	embedded := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
		URI: "test://embedded-resource", MIMEType: "text/plain", Text: "This is an embedded resource content."}}
	tool := func(name string, h mcp.ToolHandler) {
		s.AddTool(&mcp.Tool{Name: name, Description: "conformance fixture", InputSchema: empty}, h)
	}
	tool("test_simple_text", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("This is a simple text response for testing."), nil
	})
	tool("test_image_content", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.ImageContent{Data: fixturePNG, MIMEType: "image/png"}}}, nil
	})
	tool("test_audio_content", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.AudioContent{Data: fixtureWAV, MIMEType: "audio/wav"}}}, nil
	})
	tool("test_embedded_resource", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{embedded}}, nil
	})
	tool("test_multiple_content_types", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Multiple content types test:"},
			&mcp.ImageContent{Data: fixturePNG, MIMEType: "image/png"}, embedded}}, nil
	})
	tool("test_error_handling", func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("This tool intentionally returns an error for testing")
		r.IsError = true
		return r, nil
	})

	s.AddResource(&mcp.Resource{URI: "test://static-text", Name: "static-text", MIMEType: "text/plain"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "text/plain",
				Text: "This is the content of the static text resource."}}}, nil
		})
	s.AddResource(&mcp.Resource{URI: "test://static-binary", Name: "static-binary", MIMEType: "image/png"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "image/png", Blob: fixturePNG}}}, nil
		})
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "test://template/{id}/data", Name: "template", MIMEType: "application/json"},
		func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			id := strings.TrimSuffix(strings.TrimPrefix(r.Params.URI, "test://template/"), "/data")
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, MIMEType: "application/json",
				Text: fmt.Sprintf(`{"id":%q,"templateTest":true,"data":"Data for ID: %s"}`, id, id)}}}, nil
		})

	user := func(c mcp.Content) *mcp.PromptMessage { return &mcp.PromptMessage{Role: "user", Content: c} }
	s.AddPrompt(&mcp.Prompt{Name: "test_simple_prompt", Description: "conformance fixture"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{Text: "This is a simple prompt for testing."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_arguments", Description: "conformance fixture",
		Arguments: []*mcp.PromptArgument{{Name: "arg1", Required: true}, {Name: "arg2", Required: true}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			a := r.Params.Arguments
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.TextContent{
				Text: fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", a["arg1"], a["arg2"])})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_embedded_resource", Description: "conformance fixture",
		Arguments: []*mcp.PromptArgument{{Name: "resourceUri", Required: true}}},
		func(_ context.Context, r *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			res := &mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: r.Params.Arguments["resourceUri"],
				MIMEType: "text/plain", Text: "Embedded resource content for testing."}}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(res), user(&mcp.TextContent{Text: "Please process the embedded resource above."})}}, nil
		})
	s.AddPrompt(&mcp.Prompt{Name: "test_prompt_with_image", Description: "conformance fixture"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{user(&mcp.ImageContent{Data: fixturePNG, MIMEType: "image/png"}),
				user(&mcp.TextContent{Text: "Please analyze the image above."})}}, nil
		})
}
