//go:build conformance

package main

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/conformance"
)

// The official conformance suite's fixtures (shared/conformance), only in a
// binary built with -tags conformance (tests/conformance_test.go), never in
// a release build.
func addConformanceFixtures(s *mcp.Server) { conformance.Add(s, conformance.Options{}) }

func conformanceOptions() func(*mcp.ServerOptions) { return conformance.ServerOptions }
