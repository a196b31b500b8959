//go:build !conformance

package main

import "github.com/modelcontextprotocol/go-sdk/mcp"

// A release build has no conformance fixtures (conformance_fixtures.go).
func addConformanceFixtures(*mcp.Server)           {}
func conformanceOptions() func(*mcp.ServerOptions) { return nil }
