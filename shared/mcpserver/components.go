package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/component"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type registerComponentIn struct {
	Name      string `json:"name" jsonschema:"component name, unique per type, e.g. dev-convex-expert"`
	Type      string `json:"type" jsonschema:"one of agent, skill, hook, plugin"`
	Team      string `json:"team,omitempty" jsonschema:"owning team, e.g. development"`
	Content   string `json:"content" jsonschema:"the full file content, stored byte for byte (at most 256 KiB)"`
	Version   string `json:"version,omitempty" jsonschema:"your version label, e.g. 1.0.0"`
	Project   string `json:"project,omitempty" jsonschema:"project it belongs to"`
	CreatedBy string `json:"createdBy,omitempty" jsonschema:"owner; defaults to you"`
}

type getComponentIn struct {
	Name     string `json:"name" jsonschema:"component name"`
	Type     string `json:"type" jsonschema:"one of agent, skill, hook, plugin"`
	Revision int    `json:"revision,omitempty" jsonschema:"an earlier revision number to read (the last 50 are kept); omit for the current one"`
}

type updateComponentIn struct {
	Name               string  `json:"name" jsonschema:"component name"`
	Type               string  `json:"type" jsonschema:"one of agent, skill, hook, plugin"`
	Content            *string `json:"content,omitempty" jsonschema:"new full file content"`
	Version            *string `json:"version,omitempty" jsonschema:"new version label"`
	Team               *string `json:"team,omitempty" jsonschema:"new owning team"`
	Project            *string `json:"project,omitempty" jsonschema:"new project"`
	CallerOrchestrator string  `json:"callerOrchestrator,omitempty" jsonschema:"who is updating; must be the creator or system; defaults to you"`
}

type deleteComponentIn struct {
	Name               string `json:"name" jsonschema:"component name"`
	Type               string `json:"type" jsonschema:"one of agent, skill, hook, plugin"`
	CallerOrchestrator string `json:"callerOrchestrator,omitempty" jsonschema:"who is deleting; must be the creator or system; defaults to you"`
}

type listComponentsIn struct {
	listing.Params
	Type string `json:"type,omitempty" jsonschema:"only this type: agent, skill, hook or plugin"`
	Team string `json:"team,omitempty" jsonschema:"only this team's components"`
}

func (s *server) addComponentTools(m *mcp.Server) {
	c := s.opts.Components
	add(s, m, tool{Name: "register_component", Annotations: write,
		Limits: limits{
			"name": maxLen(vp.MaxComponentNameBytes), "content": maxLen(vp.MaxComponentContentBytes),
			"version": maxLen(vp.MaxNameBytes), "team": maxLen(vp.MaxShortTextBytes), "project": maxLen(vp.MaxShortTextBytes),
		},
		Description: "Register a new agent, skill, hook or plugin with its full file content: the fleet's inventory and a byte-exact backup. " +
			"A name is unique per type; to change a registered component use update_component. " +
			"Example: {\"name\":\"dev-convex-expert\",\"type\":\"agent\",\"team\":\"development\",\"content\":\"---\\nname: dev-convex-expert\\n---\\n...\",\"version\":\"1.0.0\"}"},
		func(ctx context.Context, p vp.Principal, in registerComponentIn) (vp.Component, error) {
			return c.RegisterComponent(ctx, p, component.RegisterInput{Name: in.Name, Type: in.Type, Team: in.Team, Content: in.Content,
				Version: in.Version, Project: in.Project, CreatedBy: in.CreatedBy})
		})

	add(s, m, tool{Name: "get_component", Annotations: readOnly,
		Description: "Fetch a component by name and type with its full content, e.g. to restore a lost file (compare contentHash first). " +
			"Example: {\"name\":\"dev-convex-expert\",\"type\":\"agent\"}"},
		func(ctx context.Context, p vp.Principal, in getComponentIn) (vp.Component, error) {
			return c.GetComponent(ctx, p, in.Name, in.Type, in.Revision)
		})

	add(s, m, tool{Name: "list_components", Annotations: readOnly,
		Description: "Browse the component registry, newest first, optionally by type and team. Paginated: {items, nextCursor?}; " +
			"use fields=lite to skip file contents. Example: {\"type\":\"skill\",\"team\":\"development\",\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listComponentsIn) (listing.Page[any], error) {
			return c.ListComponents(ctx, p, component.ListInput{Type: in.Type, Team: in.Team, Params: in.Params})
		})

	add(s, m, tool{Name: "update_component", Annotations: idempotent,
		Limits: limits{
			"name": maxLen(vp.MaxComponentNameBytes), "content": maxLen(vp.MaxComponentContentBytes),
			"version": maxLen(vp.MaxNameBytes), "team": maxLen(vp.MaxShortTextBytes), "project": maxLen(vp.MaxShortTextBytes),
		},
		Description: "Publish a new revision of a component you registered (creator or system only): new content, version, team or project; " +
			"the previous revision stays readable with get_component's revision. Example: {\"name\":\"dev-convex-expert\",\"type\":\"agent\",\"content\":\"...\",\"version\":\"1.1.0\"}"},
		func(ctx context.Context, p vp.Principal, in updateComponentIn) (vp.Component, error) {
			return c.UpdateComponent(ctx, p, component.Update{Name: in.Name, Type: in.Type, CallerOrchestrator: in.CallerOrchestrator,
				Content: in.Content, Version: in.Version, Team: in.Team, Project: in.Project})
		})

	add(s, m, tool{Name: "delete_component", Annotations: destructive,
		Description: "Remove a component and all its kept revisions from the registry (creator or system only). Cannot be undone. " +
			"Example: {\"name\":\"old-hook\",\"type\":\"hook\"}"},
		func(ctx context.Context, p vp.Principal, in deleteComponentIn) (component.DeleteResult, error) {
			return c.DeleteComponent(ctx, p, in.Name, in.Type, in.CallerOrchestrator)
		})
}
