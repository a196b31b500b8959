package awsapp

import (
	"context"
	"fmt"
	"net/http"

	"github.com/vantagepeers/vantagepeers/shared/httpapi"
	"github.com/vantagepeers/vantagepeers/webhooks"
)

// WireWebhooks, when set, gives the webhooks function its webhook secrets
// and its Dispatcher: Load calls it for FuncWebhooks once the services are
// built, with the Secrets Manager client, and keeps what it returns in
// App.Webhooks. It is a variable so that the GitHub integration can be
// wired without this package knowing it; until it is set, the function
// refuses every delivery (no tenant has a secret).
var WireWebhooks func(ctx context.Context, a *App, secrets Secrets) (webhooks.Options, error)

func (a *App) wireWebhooks(ctx context.Context, secrets Secrets) error {
	if a.Function != FuncWebhooks {
		return nil
	}
	if WireWebhooks == nil {
		a.Log.Warn("no webhook secrets or dispatcher are wired: every GitHub delivery is refused")
		return nil
	}
	o, err := WireWebhooks(ctx, a, secrets)
	if err != nil {
		return fmt.Errorf("awsapp: wiring the webhooks: %w", err)
	}
	a.Webhooks = o
	return nil
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
