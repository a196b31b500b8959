package app

import (
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/jobs"
	"github.com/vantagepeers/vantagepeers/shared/mcpserver"
	"github.com/vantagepeers/vantagepeers/shared/store/table"
)

// Tables are every module's key declarations, in module order: KEYS.md
// (go generate ./shared/app writes them through this package.s
// test) and the CDK table follow them.
func Tables() []table.Doc {
	var docs []table.Doc
	for _, m := range Modules() {
		if m.Tables != nil {
			docs = append(docs, m.Tables()...)
		}
	}
	return docs
}

// Catalogue is every module's jobs, bound to s. With s empty it is the
// static view (names, schedules, functions) the CDK stack and `vantagepeers
// jobs list` read; each job's Build then says it is not wired.
func Catalogue(s *Services) jobs.Catalogue {
	if s == nil {
		s = &Services{}
	}
	var out jobs.Catalogue
	for _, m := range Modules() {
		if m.Jobs != nil {
			out = append(out, m.Jobs(s)...)
		}
	}
	return out
}

// Routes are the core routes (httpapi.Routes) and every module's, their
// handlers built over s; with s nil, the table alone.
func Routes(s *Services) []httpapi.Route {
	return append(httpapi.Routes(), ModuleRoutes(s)...)
}

// ModuleRoutes are the modules' routes (httpapi.Options.Routes).
func ModuleRoutes(s *Services) []httpapi.Route {
	if s == nil {
		s = &Services{}
	}
	var out []httpapi.Route
	for _, m := range Modules() {
		if m.Routes != nil {
			out = append(out, m.Routes(s)...)
		}
	}
	return out
}

// MCPOptions are the options of the MCP server over s: the modules' tools
// in module order (a module not built offers none) and the views' data;
// o carries the rest (version, logger, profile).
func MCPOptions(s *Services, o mcpserver.Options) mcpserver.Options {
	for _, m := range Modules() {
		if m.Tools != nil {
			o.Toolsets = append(o.Toolsets, m.Tools(s)...)
		}
	}
	o.Views = mcpserver.Views{Tasks: s.Tasks, Messages: s.Messages, Diary: s.Diary, Missions: s.Missions,
		Briefings: s.Briefings, Memory: s.Memory}
	return o
}
