package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/keyword"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type searchMessagesIn struct {
	Query   string `json:"query"`
	From    string `json:"from,omitempty"`
	Channel string `json:"channel,omitempty" jsonschema:"exactly as sent"`
	Limit   int    `json:"limit,omitempty" jsonschema:"default 10"`
}

type searchTasksIn struct {
	Query      string `json:"query"`
	Status     any    `json:"status,omitempty" jsonschema:"a status, an array of them, or open|active|all"`
	AssignedTo string `json:"assignedTo,omitempty"`
	Project    string `json:"project,omitempty"`
	MissionID  string `json:"missionId,omitempty"`
	Limit      int    `json:"limit,omitempty" jsonschema:"default 10"`
}

type searchBriefingsIn struct {
	Query string `json:"query"`
	Topic string `json:"topic,omitempty"`
	Limit int    `json:"limit,omitempty" jsonschema:"default 10"`
}

type searchComponentsIn struct {
	Query string `json:"query"`
	Type  string `json:"type,omitempty" jsonschema:"agent|skill|hook|plugin"`
	Limit int    `json:"limit,omitempty" jsonschema:"default 10"`
}

// addKeywordTools registers BM25 search over messages, tasks, briefing
// notes and components. Results are {items, count}, best first, each item
// the full entity with a score.
// KeywordTools are the tools of keyword search over c; none when c is nil.
func KeywordTools(c *keyword.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addKeywordTools(m, c) }}
}

func (s *server) addKeywordTools(m *mcp.Server, c *keyword.Service) {
	add(s, m, tool{Name: "search_messages_by_keyword", Title: "Search messages", Annotations: readOnly, Limits: keyword.SearchMessagesInput{}.Limits(),
		Description: "Keyword (BM25) search over message content. Example: {\"query\":\"schema migration\",\"from\":\"bob\"}"},
		func(ctx context.Context, p vp.Principal, in searchMessagesIn) (keyword.KeywordResult[keyword.MessageHit], error) {
			return c.SearchMessages(ctx, p, keyword.SearchMessagesInput{Query: in.Query, From: in.From, Channel: in.Channel, Limit: in.Limit})
		})

	add(s, m, tool{Name: "search_tasks_by_keyword", Title: "Search tasks", Annotations: readOnly, Limits: keyword.SearchTasksInput{}.Limits(),
		Description: "Keyword (BM25) search over task titles (weighted) and descriptions. Example: {\"query\":\"flaky deploy\",\"status\":\"open\"}"},
		func(ctx context.Context, p vp.Principal, in searchTasksIn) (keyword.KeywordResult[keyword.TaskHit], error) {
			return c.SearchTasks(ctx, p, keyword.SearchTasksInput{Query: in.Query, Status: in.Status, AssignedTo: in.AssignedTo,
				Project: in.Project, MissionID: in.MissionID, Limit: in.Limit})
		})

	add(s, m, tool{Name: "search_briefing_notes_by_keyword", Title: "Search briefing notes", Annotations: readOnly, Limits: keyword.SearchBriefingsInput{}.Limits(),
		Description: "Keyword (BM25) search over briefing notes (titles, content, decisions); cite the ids you use. Example: {\"query\":\"M4 release\"}"},
		func(ctx context.Context, p vp.Principal, in searchBriefingsIn) (keyword.KeywordResult[keyword.BriefingHit], error) {
			return c.SearchBriefingNotes(ctx, p, keyword.SearchBriefingsInput{Query: in.Query, Topic: in.Topic, Limit: in.Limit})
		})

	add(s, m, tool{Name: "search_components", Title: "Search components", Annotations: readOnly, Limits: keyword.SearchComponentsInput{}.Limits(),
		Description: "Keyword (BM25) search over components' name, team and front-matter description. Example: {\"query\":\"code review\",\"type\":\"agent\"}"},
		func(ctx context.Context, p vp.Principal, in searchComponentsIn) (keyword.KeywordResult[keyword.ComponentHit], error) {
			return c.SearchComponents(ctx, p, keyword.SearchComponentsInput{Query: in.Query, Type: in.Type, Limit: in.Limit})
		})
}
