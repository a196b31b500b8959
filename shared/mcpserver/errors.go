package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/vp"
)

type removeDeploymentIn struct {
	Name string `json:"name"`
}

// ErrorTools are the tools of the deployment error monitor over mon; none when mon is nil.
func ErrorTools(mon *errormon.Service) Toolset {
	if mon == nil {
		return Toolset{}
	}
	return Toolset{add: func(s *server, m *mcp.Server) { s.addErrorTools(m, mon) }}
}

func (s *server) addErrorTools(m *mcp.Server, mon *errormon.Service) {
	add(s, m, tool{Name: "add_deployment", Title: "Add deployment", Annotations: idempotent,
		Limits:      errormon.DeploymentInput{}.Limits(),
		Description: "Monitor a deployment's error logs every 5 minutes; a new error files one [Auto] GitHub issue in githubRepo and starts an issue-resolution-v2 mission for orchestrator. Example: {\"name\":\"myapp\",\"deploymentUrl\":\"https://myapp.convex.cloud\",\"deployKeyEnvVar\":\"VP_DEPLOY_KEY_MYAPP\",\"githubRepo\":\"acme/app\",\"orchestrator\":\"alice\"}"},
		mon.AddDeployment)
	add(s, m, tool{Name: "remove_deployment", Title: "Remove deployment", Annotations: destructive, Limits: errormon.DeploymentRef{}.Limits(),
		Description: "Stop monitoring a deployment; its errors stay. Example: {\"name\":\"myapp\"}"},
		func(ctx context.Context, p vp.Principal, in removeDeploymentIn) (errormon.Deployment, error) {
			return mon.RemoveDeployment(ctx, p, errormon.DeploymentRef{Name: in.Name})
		})
	add(s, m, tool{Name: "list_errors", Title: "List deployment errors", Annotations: readOnly,
		Description: "List grouped deployment errors, last seen first, with counts, linked issue, escalated (rate jump), pending (below minOccurrences); deployments: each one's scan status, heldBack per hour. Example: {\"deployment\":\"myapp\"}"},
		mon.ListErrors)
	add(s, m, tool{Name: "get_error", Title: "Get deployment error", Annotations: readOnly,
		Description: "Fetch an error group with its sample, stack trace and raw record. Example: {\"errorId\":\"err_68992f0fe93c\"}"},
		mon.GetError)
}
