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
	add(s, m, tool{Name: "improvisation_digest", Title: "Improvisation digest", Annotations: readOnly,
		Limits:      digest.Input{}.Limits(),
		Description: "For reviews: find claims of concrete work (a commit SHA, #NNN, merged, deployed...) without a `VP-Sources:` line in the last windowDays' tasks, messages and memories. Example: {\"windowDays\":7}"},
		func(ctx context.Context, p vp.Principal, in improvisationDigestIn) (digest.Result, error) {
			return d.Digest(ctx, p, digest.Input{WindowDays: in.WindowDays, Orchestrators: in.Orchestrators})
		})
}
