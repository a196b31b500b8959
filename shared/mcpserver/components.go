package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type registerComponentIn struct {
	Name      string `json:"name" jsonschema:"unique per type"`
	Type      string `json:"type" jsonschema:"agent|skill|hook|plugin"`
	Team      string `json:"team,omitempty"`
	Content   string `json:"content" jsonschema:"the whole file, kept byte for byte"`
	Version   string `json:"version,omitempty"`
	Project   string `json:"project,omitempty"`
	CreatedBy string `json:"createdBy,omitempty"`
}

type getComponentIn struct {
	Name     string `json:"name"`
	Type     string `json:"type" jsonschema:"agent|skill|hook|plugin"`
	Revision int    `json:"revision,omitempty" jsonschema:"an earlier revision (the last 50 are kept)"`
}

type updateComponentIn struct {
	Name               string  `json:"name"`
	Type               string  `json:"type" jsonschema:"agent|skill|hook|plugin"`
	Content            *string `json:"content,omitempty" jsonschema:"the whole file"`
	Version            *string `json:"version,omitempty"`
	Team               *string `json:"team,omitempty"`
	Project            *string `json:"project,omitempty"`
	CallerOrchestrator string  `json:"callerOrchestrator,omitempty"`
}

type deleteComponentIn struct {
	Name               string `json:"name"`
	Type               string `json:"type" jsonschema:"agent|skill|hook|plugin"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty"`
}

type listComponentsIn struct {
	listing.Params
	Type string `json:"type,omitempty" jsonschema:"agent|skill|hook|plugin"`
	Team string `json:"team,omitempty"`
}

// ComponentTools are the tools of the component registry over c; none when c is nil.
func ComponentTools(c *component.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addComponentTools(m, c) }}
}

func (s *server) addComponentTools(m *mcp.Server, c *component.Service) {
	add(s, m, tool{Name: "register_component", Title: "Register component", Annotations: write,
		Limits:      component.RegisterInput{}.Limits(),
		Description: "Register a new agent, skill, hook or plugin file (inventory and byte-exact backup); change it with update_component. Example: {\"name\":\"code-reviewer\",\"type\":\"agent\",\"content\":\"...\"}"},
		func(ctx context.Context, p vp.Principal, in registerComponentIn) (vp.Component, error) {
			return c.RegisterComponent(ctx, p, component.RegisterInput{Name: in.Name, Type: in.Type, Team: in.Team, Content: in.Content,
				Version: in.Version, Project: in.Project, CreatedBy: in.CreatedBy})
		})

	add(s, m, tool{Name: "get_component", Title: "Get component", Annotations: readOnly, Limits: component.NameLimit(),
		Description: "Fetch a component with its content, e.g. to restore a lost file (compare contentHash first). Example: {\"name\":\"code-reviewer\",\"type\":\"agent\"}"},
		func(ctx context.Context, p vp.Principal, in getComponentIn) (vp.Component, error) {
			return c.GetComponent(ctx, p, in.Name, in.Type, in.Revision)
		})

	add(s, m, tool{Name: "list_components", Title: "List components", Annotations: readOnly,
		Description: "List registered components, newest first; fields lite skips contents. Example: {\"type\":\"skill\",\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listComponentsIn) (listing.Page[any], error) {
			return c.ListComponents(ctx, p, component.ListInput{Type: in.Type, Team: in.Team, Params: in.Params})
		})

	add(s, m, tool{Name: "update_component", Title: "Update component", Annotations: idempotent,
		Limits:      component.Update{}.Limits(),
		Description: "Publish a new revision of a component (creator or system); get_component revision reads earlier ones. Example: {\"name\":\"code-reviewer\",\"type\":\"agent\",\"content\":\"...\"}"},
		func(ctx context.Context, p vp.Principal, in updateComponentIn) (vp.Component, error) {
			return c.UpdateComponent(ctx, p, component.Update{Name: in.Name, Type: in.Type, CallerOrchestrator: in.CallerOrchestrator,
				Content: in.Content, Version: in.Version, Team: in.Team, Project: in.Project})
		})

	add(s, m, tool{Name: "delete_component", Title: "Delete component", Annotations: destructive, Limits: component.NameLimit(),
		Description: "Delete a component and its revisions for good (creator or system). Example: {\"name\":\"old-hook\",\"type\":\"hook\"}"},
		func(ctx context.Context, p vp.Principal, in deleteComponentIn) (component.DeleteResult, error) {
			return c.DeleteComponent(ctx, p, in.Name, in.Type, in.CallerOrchestrator)
		})
}
