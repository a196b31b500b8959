package awsapp

import (
	"context"
	"net/http"

	vpapp "github.com/vantagepeers/vantagepeers/shared/app"

	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
)

// Egress is the policy of every request to a URL that a tenant, an agent
// or an OAuth client names, with the operator's allow-list
// (EnvEgressAllowHosts).
func (a *App) Egress() *egress.Policy {
	return egress.New(egress.Options{Allow: a.Config.EgressAllow})
}

// noCredentials is the credential source of a deployment without GitHub
// secrets: no tenant has any.
type noCredentials struct{}

func (noCredentials) Credentials(context.Context, string) (github.Credentials, error) {
	return github.Credentials{}, nil
}

// WebhooksHandler is the webhooks function's HTTP handler: its routes of
// the table (httpapi.Routes), served by the same webhooks handler the
// embedded binary mounts, with App.Webhooks' secrets and dispatcher.
func (a *App) WebhooksHandler() http.Handler {
	api := httpapi.New(httpapi.Options{Version: a.Version, Logger: a.Log, Started: a.Started,
		Storage: "dynamodb", BasePath: a.Config.PublicBaseURL, Routes: vpapp.ModuleRoutes(a.Services)})
	return OnlyRoutesOf(FuncWebhooks, api)
}
