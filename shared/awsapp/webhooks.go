package awsapp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/vantagepeers/vantagepeers/shared/awsapp/awsenv"
	"github.com/vantagepeers/vantagepeers/shared/egress"
	"github.com/vantagepeers/vantagepeers/shared/errormon"
	"github.com/vantagepeers/vantagepeers/shared/errormon/cloudwatch"
	"github.com/vantagepeers/vantagepeers/shared/errormon/convex"
	"github.com/vantagepeers/vantagepeers/shared/errormon/source"
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
	gh := github.ForTenants{Client: client, Credentials: creds}
	a.Issues = issue.New(issue.Options{Store: a.Store, Cursors: signer, Now: now, Logger: a.Log, Missions: a.Missions,
		Notices: a.Messages, Jobs: a.Outbox, GitHub: gh, Trusted: a.Config.GitHubTrusted, FlushStarts: true})
	a.Webhooks = webhooks.Options{Secrets: github.WebhookSecrets{Credentials: creds}, Dispatcher: a.Issues,
		Logger: a.Log, DefaultTenant: vp.DefaultTenant, Now: now}
	a.Errors = errormon.New(errormon.Options{Store: a.Store, Cursors: signer, Now: now, Logger: a.Log, Sources: a.errorSources(),
		Keys: &DeployKeys{Secrets: secrets, Prefix: a.Config.DeployKeySecretPrefix},
		LogGroups: errormon.StaticLogGroups{Tenants: a.Config.TenantLogGroups,
			How: "the operator allows it in the stack's tenantLogGroups context (cdk deploy -c tenantLogGroups='{\"<tenant>\":[\"NAME-or-PREFIX*\"]}')"},
		GitHub: gh, Issues: a.Issues, Jobs: a.Outbox, Egress: a.Egress()})
	return errors.Join(a.Issues.Wire(a.Outbox, a.Tasks), a.Errors.Wire(a.Outbox))
}

// errorSources are the log sources of the function that runs the error
// monitor (awsenv.Function.ErrorMonitor); the others only list errors.
func (a *App) errorSources() map[string]source.Source {
	if f, ok := awsenv.FunctionNamed(a.Function); !ok || !f.ErrorMonitor {
		return nil
	}
	return map[string]source.Source{
		errormon.SourceConvex:     convex.New(convex.Options{Egress: a.Egress()}),
		errormon.SourceCloudWatch: cloudwatch.New(cloudwatch.Options{Client: cloudwatchlogs.NewFromConfig(a.AWS)}),
	}
}

// Egress is the policy of every request to a URL that a tenant, an agent
// or an OAuth client names, with the operator's allow-list
// (EnvEgressAllowHosts).
func (a *App) Egress() *egress.Policy {
	return egress.New(egress.Options{Allow: a.Config.EgressAllow})
}

// DeployKeys reads a Convex deployment's deploy key, a secret of its
// tenant: the Secrets Manager secret <Prefix><tenant>/<name> at each scan,
// never <Prefix><name> nor another tenant's. A missing one is "" (the scan
// then says which secret to create).
type DeployKeys struct {
	Secrets Secrets
	Prefix  string
}

// Key implements errormon.Keys.
func (k *DeployKeys) Key(ctx context.Context, tenant string, d errormon.Deployment) (string, error) {
	// Checked again whatever the caller did: the tenant and the name are
	// path segments of the secret's id.
	if k.Prefix == "" || !vp.ValidTenant(tenant) || !errormon.ValidDeployKeyName(d.DeployKeyEnvVar) {
		return "", nil
	}
	id := k.secretID(tenant, d.DeployKeyEnvVar)
	v, err := k.Secrets.Secret(ctx, id)
	if secretMissing(k.Secrets, id, err) {
		return "", nil
	}
	if err != nil {
		return "", vp.Wrap("error-monitor", vp.KindUnavailable, fmt.Errorf("reading the secret %s: %w", id, err))
	}
	return strings.TrimSpace(v), nil
}

// HowToSet implements errormon.Keys.
func (k *DeployKeys) HowToSet(tenant, name string) string {
	if k.Prefix == "" {
		return "this deployment has no deploy-key prefix (" + awsenv.EnvDeployKeySecretPrefix + "): its operator sets one"
	}
	return "the operator stores it as the Secrets Manager secret " + k.secretID(tenant, name) +
		" (aws secretsmanager create-secret --name " + k.secretID(tenant, name) + " --secret-string '<deploy key>')"
}

func (k *DeployKeys) secretID(tenant, name string) string { return k.Prefix + tenant + "/" + name }

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
