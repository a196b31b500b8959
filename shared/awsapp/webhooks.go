package awsapp

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/vantagepeers/vantagepeers/shared/awsapp/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/github"
	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/shared/issue"
	"github.com/vantagepeers/vantagepeers/shared/listing"
	"github.com/vantagepeers/vantagepeers/shared/vp"
	"github.com/vantagepeers/vantagepeers/webhooks"
)

// buildIssues builds the GitHub capability: each tenant's credentials
// from its Secrets Manager secret (none without a prefix: every delivery
// is then refused), the REST client paced by the store-backed limiter,
// and the webhook handler's options.
func (a *App) buildIssues(signer *listing.Signer, secrets Secrets, now func() time.Time) error {
	var creds github.CredentialSource = noCredentials{}
	if a.Config.GitHubSecretPrefix != "" {
		creds = &GitHubCredentials{Secrets: secrets, Prefix: a.Config.GitHubSecretPrefix, Now: now}
	}
	client, err := github.New(github.Options{BaseURL: a.Config.GitHubAPIURL, Now: now,
		Limiter: github.NewLimiter(github.LimiterOptions{Store: a.Store, Now: now})})
	if err != nil {
		return fmt.Errorf("awsapp: %s: %w", awsenv.EnvGitHubAPIURL, err)
	}
	a.Issues = issue.New(issue.Options{Store: a.Store, Cursors: signer, Now: now, Logger: a.Log, Missions: a.Missions,
		Notices: a.Messages, Jobs: a.Outbox, GitHub: github.ForTenants{Client: client, Credentials: creds},
		Trusted: a.Config.GitHubTrusted, FlushStarts: true})
	a.Webhooks = webhooks.Options{Secrets: github.WebhookSecrets{Credentials: creds}, Dispatcher: a.Issues,
		Logger: a.Log, DefaultTenant: vp.DefaultTenant, Now: now}
	return a.Issues.Wire(a.Outbox, a.Tasks)
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
	o := a.Webhooks
	if o.Logger == nil {
		o.Logger = a.Log
	}
	api := httpapi.New(httpapi.Options{Version: a.Version, Logger: a.Log, Started: a.Started,
		Storage: "dynamodb", BasePath: a.Config.PublicBaseURL, Webhooks: webhooks.New(o)})
	return OnlyRoutesOf(FuncWebhooks, api)
}
