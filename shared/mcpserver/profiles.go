package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/profile"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type getProfileIn struct {
	OrchestratorID string `json:"orchestratorId" jsonschema:"the orchestrator whose profile to read, e.g. alice"`
}

type updateProfileIn struct {
	OrchestratorID string            `json:"orchestratorId,omitempty" jsonschema:"whose profile; defaults to you"`
	InstanceID     string            `json:"instanceId,omitempty" jsonschema:"update one instance's row instead of the orchestrator's profile"`
	Name           *string           `json:"name,omitempty" jsonschema:"display name"`
	Static         *vp.ProfileStatic `json:"static,omitempty" jsonschema:"identity fields: role, workspace, capabilities (replaced as a whole)"`
	Dynamic        *vp.ProfileDyn    `json:"dynamic,omitempty" jsonschema:"runtime state: currentTask, lastSeen, sessionCount"`
}

type setSummaryIn struct {
	OrchestratorID string `json:"orchestratorId,omitempty" jsonschema:"who; defaults to you"`
	InstanceID     string `json:"instanceId" jsonschema:"which running instance, e.g. alice-main"`
	Summary        string `json:"summary" jsonschema:"what this instance is doing now (at most 4 KiB)"`
}

type setSummaryOut struct {
	OK      bool       `json:"ok"`
	Message string     `json:"message"`
	Profile vp.Profile `json:"profile"`
}

type noArgs struct{}

func (s *server) addProfileTools(m *mcp.Server) {
	c := s.opts.Profiles
	add(s, m, tool{Name: "whoami", Core: true, Annotations: readOnly,
		Description: "Who am I? Returns the tenant, the orchestrator ids your token may act as and its namespace prefixes. " +
			"Use it at the start of a session to learn your default identity. Example: {}"},
		func(_ context.Context, p vp.Principal, _ noArgs) (profile.Identity, error) { return c.WhoAmI(p), nil })

	add(s, m, tool{Name: "get_profile", Core: true, Annotations: readOnly,
		Limits: limits{"orchestratorId": maxLen(vp.MaxNameBytes)},
		Description: "Read an orchestrator's profile (role, workspace, capabilities, runtime state) with the presence of each of its instances. " +
			"Use it to learn about a peer before delegating to it. Example: {\"orchestratorId\":\"alice\"}"},
		func(ctx context.Context, p vp.Principal, in getProfileIn) (profile.View, error) {
			return c.GetProfile(ctx, p, in.OrchestratorID)
		})

	add(s, m, tool{Name: "update_profile", Annotations: idempotent,
		Limits: limits{
			"name": maxLen(vp.MaxShortTextBytes), "static.role": maxLen(vp.MaxShortTextBytes),
			"static.workspace": maxLen(vp.MaxShortTextBytes), "static.capabilities[]": maxLen(vp.MaxShortTextBytes),
			"dynamic.currentTask": maxLen(vp.MaxShortTextBytes), "instanceId": maxLen(vp.MaxNameBytes),
			"orchestratorId": maxLen(vp.MaxNameBytes),
		},
		Description: "Create or partially update an orchestrator profile; omitted fields keep their value. Having a profile puts you on the " +
			"'broadcast' channel. Example: {\"orchestratorId\":\"alice\",\"name\":\"Alice\",\"static\":{\"role\":\"frontend\",\"capabilities\":[\"react\"]}}"},
		func(ctx context.Context, p vp.Principal, in updateProfileIn) (vp.Profile, error) {
			return c.UpdateProfile(ctx, p, profile.Update{Orchestrator: in.OrchestratorID, InstanceID: in.InstanceID,
				Name: in.Name, Static: in.Static, Dynamic: in.Dynamic})
		})

	add(s, m, tool{Name: "set_summary", Core: true, Annotations: idempotent,
		Limits: limits{
			"summary": maxLen(vp.MaxSummaryBytes), "instanceId": maxLen(vp.MaxNameBytes),
			"orchestratorId": maxLen(vp.MaxNameBytes),
		},
		Description: "Announce what one of your instances is working on (presence), visible to peers through list_peers. Call it when a session " +
			"starts and when your focus changes. Example: {\"orchestratorId\":\"alice\",\"instanceId\":\"alice-main\",\"summary\":\"Migrating HeroSection — ETA 30 min\"}"},
		func(ctx context.Context, p vp.Principal, in setSummaryIn) (setSummaryOut, error) {
			pr, err := c.SetSummary(ctx, p, in.OrchestratorID, in.InstanceID, in.Summary)
			if err != nil {
				return setSummaryOut{}, err
			}
			return setSummaryOut{OK: true, Message: "Summary set for " + pr.Orchestrator + " (" + pr.InstanceID + ")", Profile: pr}, nil
		})

	add(s, m, tool{Name: "list_peers", Core: true, Annotations: readOnly,
		Limits: limits{"limit": between(1, listing.MaxLimit)},
		Description: "List every known orchestrator profile and running instance with its current summary, most recently active first. " +
			"Use it to see who is around before sending work. Paginated: {items, nextCursor?}. Example: {\"limit\":50,\"fields\":\"lite\"}"},
		func(ctx context.Context, p vp.Principal, in listing.Params) (listing.Page[any], error) {
			return c.ListPeers(ctx, p, in)
		})
}
