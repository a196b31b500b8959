package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/digest"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type improvisationDigestIn struct {
	WindowDays    *int     `json:"windowDays,omitempty" jsonschema:"days to look back, default 7"`
	Orchestrators []string `json:"orchestrators,omitempty" jsonschema:"only these authors; omit for all"`
}

// addDigestTools registers the advisory improvisation digest (platform
// spec §14.9): a pure read, registered only when the service is set.
// DigestTools are the tools of the improvisation digest over d; none when d is nil.
func DigestTools(d *digest.Service) Toolset {
	if d == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addDigestTools(m, d) }}
}

func (s *server) addDigestTools(m *mcp.Server, d *digest.Service) {
	add(s, m, tool{Name: "improvisation_digest", Annotations: readOnly,
		Limits: digest.Input{}.Limits(),
		Description: "Find unsourced claims: tasks, messages and memories of the last windowDays that claim concrete work " +
			"(a commit SHA, an issue #NNN, a Convex id, or merged|deployed|approved|shipped|released|fixed) with no `VP-Sources:` line saying where it was checked. " +
			"Use it in a review to see who reports work without evidence; system and cron-* authors are skipped. Returns countsByOrch, countsByCategory, samples (newest first, ≤ 50) and total; " +
			"never blocks, writes nothing. Example: {\"windowDays\":7}"},
		func(ctx context.Context, p vp.Principal, in improvisationDigestIn) (digest.Result, error) {
			return d.Digest(ctx, p, digest.Input{WindowDays: in.WindowDays, Orchestrators: in.Orchestrators})
		})
}
