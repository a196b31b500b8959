package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type getProfileIn struct {
	OrchestratorID string `json:"orchestratorId"`
}

type updateProfileIn struct {
	OrchestratorID string            `json:"orchestratorId,omitempty"`
	InstanceID     string            `json:"instanceId,omitempty" jsonschema:"update this instance's row instead"`
	Name           *string           `json:"name,omitempty"`
	Static         *vp.ProfileStatic `json:"static,omitempty" jsonschema:"replaced whole"`
	Dynamic        *vp.ProfileDyn    `json:"dynamic,omitempty"`
}

type setSummaryIn struct {
	OrchestratorID string `json:"orchestratorId,omitempty"`
	InstanceID     string `json:"instanceId,omitempty" jsonschema:"default main"`
	Summary        string `json:"summary"`
}

// defaultInstance is set_summary's instance when none is named: most agents
// run one session at a time, and should not have to invent an id for it.
const defaultInstance = "main"

type setSummaryOut struct {
	OK      bool       `json:"ok"`
	Message string     `json:"message"`
	Profile vp.Profile `json:"profile"`
}

type noArgs struct{}

// ProfileTools are the tools of the profiles and presence over c; none when c is nil.
func ProfileTools(c *profile.Service) Toolset {
	if c == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addProfileTools(m, c) }}
}

func (s *server) addProfileTools(m *mcp.Server, c *profile.Service) {
	add(s, m, tool{Name: "whoami", Title: "Who am I", Core: true, Annotations: readOnly,
		Description: "Who am I: tenant, default orchestrator, the ids your token may act as, the namespaces it may read and write. Example: {}"},
		func(_ context.Context, p vp.Principal, _ noArgs) (profile.Identity, error) { return c.WhoAmI(p), nil })

	add(s, m, tool{Name: "get_profile", Title: "Get profile", Core: true, Annotations: readOnly,
		Description: "Read an orchestrator's profile and its instances' presence, e.g. before delegating. Example: {\"orchestratorId\":\"alice\"}"},
		func(ctx context.Context, p vp.Principal, in getProfileIn) (profile.View, error) {
			return c.GetProfile(ctx, p, in.OrchestratorID)
		})

	add(s, m, tool{Name: "update_profile", Title: "Update profile", Annotations: idempotent,
		Limits:      profile.Update{}.Limits(),
		Description: "Create or partly update a profile (omitted fields kept); a profile puts you on the broadcast channel. Example: {\"name\":\"Alice\",\"static\":{\"role\":\"frontend\"}}"},
		func(ctx context.Context, p vp.Principal, in updateProfileIn) (vp.Profile, error) {
			return c.UpdateProfile(ctx, p, profile.Update{Orchestrator: in.OrchestratorID, InstanceID: in.InstanceID,
				Name: in.Name, Static: in.Static, Dynamic: in.Dynamic})
		})

	add(s, m, tool{Name: "set_summary", Title: "Set summary", Core: true, Annotations: idempotent,
		Limits:      profile.SummaryLimit(),
		Description: "Announce what you are doing (shown by list_peers) at session start and when your focus changes; instanceId names this session. Example: {\"summary\":\"Migrating checkout\"}"},
		func(ctx context.Context, p vp.Principal, in setSummaryIn) (setSummaryOut, error) {
			if in.InstanceID == "" {
				in.InstanceID = defaultInstance
			}
			pr, err := c.SetSummary(ctx, p, in.OrchestratorID, in.InstanceID, in.Summary)
			if err != nil {
				return setSummaryOut{}, err
			}
			return setSummaryOut{OK: true, Message: "Summary set for " + pr.Orchestrator + " (" + pr.InstanceID + ")", Profile: pr}, nil
		})

	add(s, m, tool{Name: "list_peers", Title: "List peers", Core: true, Annotations: readOnly,
		Limits:      listing.Params{}.Limits(),
		Description: "List the team: profiles and running instances with their summaries, most recently active first: who to message or assign to. Example: {\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listing.Params) (listing.Page[any], error) {
			return c.ListPeers(ctx, p, in)
		})
}
